//! The store `toggle-admin serve` runs over: opened, released at exit, and set up on its
//! first start (the first admin key, Unleash's stock environments and project).

use std::sync::Arc;

use toggle_admin::model::Environment;
use toggle_admin::model::NewProject;
use toggle_admin::store::{FileStore, PostgresConfig, PostgresStore};
use toggle_admin::{Error, MemoryStore, ToggleAdmin};

/// Where the state lives.
pub enum Store {
    Memory,
    Data(String),
    Postgres(PostgresConfig),
}

/// Called after the server stopped, to release the store (connections, locks).
pub type Close = Box<dyn FnOnce() + Send>;

/// The admin over `store`, and what releases the store once the server stopped.
pub async fn open(store: Store) -> Result<(ToggleAdmin, Close), String> {
    match store {
        Store::Memory => Ok((ToggleAdmin::new(MemoryStore::new()), Box::new(|| ()))),
        Store::Data(dir) => {
            let path = dir.clone();
            let store = tokio::task::spawn_blocking(move || FileStore::open(path))
                .await
                .map_err(|e| format!("--data {dir}: opening the store failed: {e}"))?
                .map_err(|e| format!("--data {dir}: {e}"))?;
            let recovery = store.recovery();
            if let Some(tail) = &recovery.truncated_tail {
                tracing::warn!(
                    offset = tail.offset,
                    bytes = tail.bytes,
                    reason = %tail.reason,
                    "cut off the end of the journal that a crash left half-written"
                );
            }
            tracing::info!(
                dir = %dir,
                snapshot_revision = recovery.snapshot_revision.0,
                records_replayed = recovery.records_replayed,
                "opened the FileStore"
            );
            let store = Arc::new(store);
            let handle = Arc::clone(&store);
            let report = Box::new(move || {
                let stats = handle.stats();
                tracing::info!(
                    commits = stats.commits,
                    batches = stats.batches,
                    syncs = stats.syncs,
                    compactions = stats.compactions,
                    segments_created = stats.segments_created,
                    inline_batches = stats.inline_batches,
                    longest_batch_us = stats.longest_batch.as_micros() as u64,
                    "closing the FileStore"
                );
            });
            Ok((ToggleAdmin::from_arc(store), report))
        }
        Store::Postgres(config) => {
            let store = PostgresStore::connect(config)
                .await
                .map_err(|e| format!("--postgres: {e}"))?;
            let store = Arc::new(store);
            let handle = Arc::clone(&store);
            Ok((
                ToggleAdmin::from_arc(store),
                Box::new(move || handle.close()),
            ))
        }
    }
}

/// On a store without keys: the first admin key, then Unleash's stock environments and
/// project. Returns the generated secret to print, if one was generated.
pub async fn bootstrap(admin: &ToggleAdmin) -> Result<Option<String>, String> {
    // The store already has keys: it was set up before.
    if admin
        .is_bootstrapped()
        .await
        .map_err(|e| format!("reading the store: {e}"))?
    {
        return Ok(None);
    }
    let chosen = std::env::var("TOGGLE_ADMIN_BOOTSTRAP_KEY")
        .ok()
        .filter(|s| !s.is_empty());
    let created = match &chosen {
        Some(secret) => admin.bootstrap_admin_key_with_secret("admin", secret).await,
        None => admin.bootstrap_admin_key("admin").await,
    };
    let key = match created {
        Ok(key) => key,
        // Another instance bootstrapped it between the check and now.
        Err(Error::NoAccess { .. }) => return Ok(None),
        Err(error @ Error::Validation { .. }) if chosen.is_some() => {
            return Err(format!("TOGGLE_ADMIN_BOOTSTRAP_KEY: {error}"));
        }
        Err(other) => return Err(format!("setting up the store: {other}")),
    };
    stock_setup(admin, &key.secret)
        .await
        .map_err(|e| format!("setting up the store: {e}"))?;
    Ok(chosen.is_none().then_some(key.secret))
}

/// Unleash's stock environments and project, as the first admin key `secret`.
async fn stock_setup(admin: &ToggleAdmin, secret: &str) -> Result<(), Error> {
    let caller = admin.authenticate(Some(secret)).await?;
    for name in ["development", "production"] {
        let environment = Environment {
            name: name.into(),
            environment_type: name.into(),
            ..Default::default()
        };
        match admin.create_environment(&caller, &environment).await {
            Ok(_) | Err(Error::NameExists { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    let project = NewProject {
        id: "default".into(),
        name: "Default".into(),
        description: Some("Default project".into()),
        environments: vec!["development".into(), "production".into()],
        ..Default::default()
    };
    match admin.create_project(&caller, &project).await {
        Ok(_) | Err(Error::NameExists { .. }) => {}
        Err(other) => return Err(other),
    }
    tracing::info!(
        "new store: created the first admin key, environments development and production, project default"
    );
    Ok(())
}
