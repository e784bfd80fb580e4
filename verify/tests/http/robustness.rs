//! No client input makes the router answer 500; a store failure does, saying only that, with
//! the cause in the log.

use axum::http::{Method, StatusCode};
use serde_json::json;
use test_support::http::*;
use test_support::wrapped::{Behaviour, Wrapped};
use toggle_admin::Store;

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";

/// Every route, every method, a range of hostile bodies: never a 500, always our error body.
#[tokio::test]
async fn no_client_input_gives_a_500() {
    let t = setup().await;
    let paths = [
        VARIANTS,
        "/api/admin/projects",
        "/api/admin/projects/p",
        "/api/admin/projects/p/environments",
        "/api/admin/environments",
        "/api/admin/projects/p/features",
        "/api/admin/projects/p/features/f",
        "/api/admin/api-tokens",
        "/api/admin/api-tokens/x",
        "/api/admin/user-admin/1/tokens",
        "/api/admin/user-admin/1/tokens/00000000-0000-0000-0000-000000000000",
        "/api/admin/events?limit=99999999999999999999999",
        "/api/admin/features-batch/import",
        "/api/admin/features-batch/export",
        "/api/admin/features-batch/validate",
        "/api/admin/metrics/applications/app",
        "/api/admin/projects/p/access",
    ];
    let bodies: [&[u8]; 9] = [
        b"",
        b"{}",
        b"[]",
        b"null",
        b"\xff\xfe\x00",
        br#"{"id": 1e999, "name": [], "roles": {"x": 1}}"#,
        br#"[{"op": "add", "path": "/-", "value": {"name": "\u0000", "weight": -1}}]"#,
        br#"{"project": "p", "environment": "production", "data": {"features": "x"}}"#,
        br#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    ];
    for path in paths {
        for method in [
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ] {
            for body in bodies {
                for content_type in [None, Some("application/json")] {
                    let r = t
                        .raw(
                            method.clone(),
                            path,
                            Some(&t.secret),
                            content_type,
                            body.to_vec(),
                        )
                        .await;
                    assert!(
                        !r.status.is_server_error(),
                        "{method} {path} {content_type:?} {:?}: {} {}",
                        String::from_utf8_lossy(body),
                        r.status,
                        r.text()
                    );
                    if !r.status.is_success() {
                        let name = r.json()["name"].as_str().unwrap_or_default().to_owned();
                        r.error(r.status, &name);
                    }
                }
            }
        }
    }
}

/// Once `broken` is set, commits fail, with a cause that must stay out of the response.
#[derive(Debug, Default)]
struct Breakable {
    broken: std::sync::atomic::AtomicBool,
}

#[toggle_admin::async_trait]
impl Behaviour for Breakable {
    async fn commit(
        &self,
        inner: &toggle_admin::MemoryStore,
        changes: toggle_admin::store::ChangeSet,
    ) -> Result<toggle_admin::store::Revision, toggle_admin::store::StoreError> {
        if self.broken.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(toggle_admin::store::StoreError::Io {
                context: "appending to /secret/journal".into(),
                source: std::io::Error::other("disk on fire"),
            });
        }
        inner.commit(changes).await
    }
}

/// Captured log output.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_store_failure_is_a_500_that_says_only_that_and_logs_the_cause() {
    let store = std::sync::Arc::new(Wrapped::<Breakable>::default());
    let admin = toggle_admin::ToggleAdmin::from_arc(store.clone());
    let t = setup_on(admin).await;
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    store
        .behaviour
        .broken
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    let r = t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
    let body = r.error(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
    assert_eq!(
        body["message"],
        "The store failed to complete the operation."
    );
    assert!(!r.text().contains("disk on fire") && !r.text().contains("secret"));
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(logged.contains("ERROR"), "{logged}");
    assert!(logged.contains("disk on fire"), "{logged}");
    assert!(
        logged.contains(body["id"].as_str().unwrap()),
        "the log names the error id: {logged}"
    );
}
