//! The store scenario suite over MemoryStore.

use test_support::wrapped::{Behaviour, Wrapped};
use toggle_admin::Store as _;
use toggle_admin::store::{Key, MemoryStore, Revision, StoreError, Versioned, conformance};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_conformance_suite() {
    conformance::run_all(|| async { MemoryStore::new() })
        .await
        .unwrap();
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

/// A store (a third party's would be written the same way, with the re-exported
/// `async_trait`: see `test_support::wrapped`) whose `get_many` answers in the wrong order:
/// `run_all` names the scenario that caught it.
#[derive(Debug, Default)]
struct Reversing;

#[toggle_admin::async_trait]
impl Behaviour for Reversing {
    async fn get_many(
        &self,
        inner: &MemoryStore,
        keys: &[Key],
    ) -> Result<Vec<Option<Versioned>>, StoreError> {
        let mut found = inner.get_many(keys).await?;
        found.reverse();
        Ok(found)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_scenario_is_named() {
    let failure = conformance::run_all(|| async { Wrapped::<Reversing>::default() })
        .await
        .expect_err("the broken store fails");
    assert_eq!(failure.scenario(), "get_many_in_order");
    assert!(!failure.through_arc());
    let message = failure.to_string();
    assert!(
        message.starts_with("conformance scenario `get_many_in_order` failed: "),
        "{message}"
    );
    // What was expected and what was found, as `assert_eq!` would show them.
    assert!(
        message.contains(r#"found [Some(String("a")), None, Some(String("c"))]"#),
        "{message}"
    );
    assert!(
        message.contains(r#"expected [Some(String("c")), None, Some(String("a"))]"#),
        "{message}"
    );
}

/// A scenario called on its own answers its failure too, naming itself.
#[tokio::test]
async fn a_scenario_run_alone_reports_its_failure() {
    let failure = conformance::get_many_in_order(&Wrapped::<Reversing>::default())
        .await
        .expect_err("the broken store fails");
    assert_eq!(failure.scenario(), "get_many_in_order");
    assert!(failure.what().contains("in that order"), "{failure}");
    conformance::get_many_in_order(&MemoryStore::new())
        .await
        .unwrap();
}

/// A store whose `revision` panics: the panic is caught in the scenario's task and reported
/// as the failure of the first scenario that calls it, with the panic's message.
#[derive(Debug, Default)]
struct Panicking;

#[toggle_admin::async_trait]
impl Behaviour for Panicking {
    async fn revision(&self, _inner: &MemoryStore) -> Result<Revision, StoreError> {
        panic!("revision is broken")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_store_is_reported_as_its_scenarios_failure() {
    let failure = conformance::run_all(|| async { Wrapped::<Panicking>::default() })
        .await
        .expect_err("the panicking store fails");
    assert_eq!(failure.scenario(), "empty_store");
    assert_eq!(
        failure.to_string(),
        "conformance scenario `empty_store` failed: \
         the store under test panicked: revision is broken"
    );
}

#[tokio::test]
async fn run_all_refuses_a_single_threaded_runtime() {
    let failure = conformance::run_all(|| async { MemoryStore::new() })
        .await
        .expect_err("refused");
    assert_eq!(failure.scenario(), "run_all");
    assert!(
        failure.what().contains("needs a multi-threaded runtime"),
        "{failure}"
    );
}
