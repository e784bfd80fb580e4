//! The store scenario suite over MemoryStore.

use toggle_admin::store::{MemoryStore, conformance};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_conformance_suite() {
    conformance::run_all(|| async { MemoryStore::new() }).await;
}

/// `to_state` copies the whole state: a store started from the copy sees the same records at
/// the same revisions, and the two diverge independently afterwards.
#[tokio::test]
async fn a_store_started_from_a_copied_state_is_independent() {
    use serde_json::json;
    use toggle_admin::store::{ChangeSet, Collection, Key, Store};

    let original = MemoryStore::new();
    let key = Key::new(Collection::Features, "f");
    let mut changes = ChangeSet::new();
    changes.put(key.clone(), json!({"name": "f"}));
    let revision = original.commit(changes).await.unwrap();

    let copy = MemoryStore::from_state(original.to_state());
    let copied = copy
        .get(&key)
        .await
        .unwrap()
        .expect("the copy has the record");
    assert_eq!(copied.revision, revision);
    assert_eq!(copied.value, json!({"name": "f"}));

    let mut changes = ChangeSet::new();
    changes.expect_revision(key.clone(), revision);
    changes.put(key.clone(), json!({"name": "f", "changed": true}));
    copy.commit(changes).await.unwrap();
    let untouched = original.get(&key).await.unwrap().expect("still there");
    assert_eq!(untouched.revision, revision);
    assert_eq!(untouched.value, json!({"name": "f"}));
    assert_eq!(original.revision().await.unwrap(), revision);
}
