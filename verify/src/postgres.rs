//! PostgreSQL test support: the server from `TOGGLE_ADMIN_TEST_POSTGRES`, and schemas of a
//! test's own, dropped at the end.

use std::sync::atomic::{AtomicUsize, Ordering};

use toggle_admin::store::{PostgresConfig, PostgresStore};
use tokio_postgres::NoTls;

pub const URL_VAR: &str = "TOGGLE_ADMIN_TEST_POSTGRES";

/// The server to test against, or `None` (after saying so) when there is none outside CI.
pub fn database_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{URL_VAR} must be set when CI=true: the PostgreSQL tests would not run"
            );
            println!("skipped: {URL_VAR} not set");
            None
        }
    }
}

/// A schema name no other test (in this or another process) uses.
pub fn unique_schema() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!(
        "ta_test_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        &random[..8]
    )
}

/// A test's schema, dropped when the guard is, even when the test panics.
pub struct TestSchema {
    pub url: String,
    pub name: String,
}

impl TestSchema {
    pub fn new(url: &str) -> Self {
        TestSchema {
            url: url.to_owned(),
            name: unique_schema(),
        }
    }

    pub fn config(&self) -> PostgresConfig {
        PostgresConfig::new(&self.url)
            .with_schema(&self.name)
            .with_application_name(&self.name)
    }

    pub async fn connect(&self, pool_size: usize) -> PostgresStore {
        PostgresStore::connect(self.config().with_pool_size(pool_size))
            .await
            .expect("connect")
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        // Drop cannot await, and may run inside the test's runtime: use a thread with a
        // runtime of its own.
        let (url, name) = (self.url.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                let client = admin(&url).await;
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                    .await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test schema {}", self.name);
        }
    }
}

/// A plain connection of the test's own, for inspecting and disturbing the store.
pub async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .expect("admin connection");
    tokio::spawn(connection);
    client
}

/// The process id of a session of `application` waiting for a lock, once there is one
/// (within 30 s, or the test fails).
pub async fn blocked_session(watcher: &tokio_postgres::Client, application: &str) -> i32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let rows = watcher
            .query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1 \
                 AND wait_event_type = 'Lock'",
                &[&application],
            )
            .await
            .expect("pg_stat_activity");
        if let Some(row) = rows.first() {
            return row.get(0);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no session of {application} ever waited for a lock"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}
