//! `GET /ready` takes the store's write path yet changes nothing: probed 1,000 times, the
//! store's revision, its event log and (FileStore) its files stay as they were, and the next
//! commit takes the revision right after the last one, on each store. That a store which
//! cannot commit answers 503 is `http_operations.rs`'s test.

use std::path::Path;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toggle_admin::http::RouterConfig;
use toggle_admin::store::{ChangeSet, Collection, FileStore, Key, Store};
use toggle_admin::{MemoryStore, ToggleAdmin};

use test_support::http::{send, setup_on};
use test_support::store::TempDir;

const PROBES: usize = 1_000;

/// What the probes must leave alone: the revision and the number of events.
async fn state(store: &dyn Store) -> (u64, usize) {
    let revision = store.revision().await.unwrap().0;
    let events = store.events(0, usize::MAX).await.unwrap().len();
    (revision, events)
}

/// The sizes of the files in `dir`, by name.
fn file_sizes(dir: &Path) -> Vec<(String, u64)> {
    let mut sizes: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, entry.metadata().unwrap().len())
        })
        .collect();
    sizes.sort();
    sizes
}

/// Seed the store behind `admin` (a key, environments, projects, features), probe `/ready`
/// [`PROBES`] times, each answering 200, and check that `store` is as before the probes and
/// that its next commit takes the next revision. `files` is called before and after.
async fn probe(store: Arc<dyn Store>, files: impl Fn() -> Vec<(String, u64)>) {
    let admin = ToggleAdmin::from_arc(store.clone());
    setup_on(admin.clone()).await;
    let before = state(store.as_ref()).await;
    assert!(before.0 > 0 && before.1 > 0, "seeded: {before:?}");
    let files_before = files();
    let app = RouterConfig::new().health_routes(true).router(admin);
    for _ in 0..PROBES {
        let r = send(app.clone(), Method::GET, "/ready", None, None, Vec::new()).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        assert_eq!(r.json(), json!({"health": "GOOD"}));
    }
    assert_eq!(state(store.as_ref()).await, before);
    assert_eq!(
        files(),
        files_before,
        "the probes wrote to the store's files"
    );
    let mut changes = ChangeSet::new();
    changes.put(Key::new(Collection::TagTypes, "after-probes"), Value::Null);
    assert_eq!(store.commit(changes).await.unwrap().0, before.0 + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn probes_leave_a_memory_store_as_it_was() {
    probe(Arc::new(MemoryStore::new()), Vec::new).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn probes_leave_a_file_store_and_its_journal_as_they_were() {
    let dir = TempDir::new("ready-probes");
    let store = Arc::new(FileStore::open(dir.path()).unwrap());
    probe(store, || file_sizes(dir.path())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn probes_leave_a_postgres_store_as_it_was() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    probe(Arc::new(schema.connect(4).await), Vec::new).await;
}
