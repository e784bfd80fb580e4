//! Commits: revisions, preconditions, atomicity, deletes and `submit`.

use serde_json::{Value, json};

use crate::store::{ChangeSet, Collection, Key, Precondition, Revision, Store, StoreError};

use super::{event, feature, put};

/// An empty store has revision 0, no records, no events.
pub async fn empty_store(store: &dyn Store) {
    assert_eq!(store.revision().await.unwrap(), Revision::ABSENT);
    assert_eq!(store.get(&feature("x")).await.unwrap(), None);
    let listing = store.list(Collection::Features, "").await.unwrap();
    assert!(listing.records.is_empty());
    assert_eq!(listing.revision, Revision::ABSENT);
    assert!(store.events(0, 10).await.unwrap().is_empty());
}

/// What a commit wrote is seen by the next read, with the commit's revision.
pub async fn visibility_after_commit(store: &dyn Store) {
    let revision = put(store, feature("a"), json!({"name": "a", "n": 1})).await;
    let read = store.get(&feature("a")).await.unwrap().expect("record");
    assert_eq!(read.value, json!({"name": "a", "n": 1}));
    assert_eq!(read.revision, revision);
    assert_eq!(store.revision().await.unwrap(), revision);
    let revision2 = put(store, feature("a"), json!({"name": "a", "n": 2})).await;
    let read = store.get(&feature("a")).await.unwrap().expect("record");
    assert_eq!(read.value, json!({"name": "a", "n": 2}));
    assert_eq!(read.revision, revision2);
}

/// Each commit takes the next revision, starting at 1.
pub async fn revisions_grow_by_one(store: &dyn Store) {
    for n in 1..=5u64 {
        let revision = put(store, feature(&format!("f{n}")), json!(n)).await;
        assert_eq!(revision, Revision(n));
    }
}

/// A change set lands whole: several writes and events in several collections.
pub async fn all_or_nothing(store: &dyn Store) {
    put(store, feature("keep"), json!("old")).await;
    let stale = store.get(&feature("keep")).await.unwrap().unwrap().revision;
    put(store, feature("keep"), json!("newer")).await;

    // A failing change set (stale precondition last) writes none of its writes or events.
    let mut changes = ChangeSet::new();
    changes
        .put(feature("a"), json!(1))
        .put(Key::new(Collection::Projects, "p"), json!(2))
        .delete(feature("keep"))
        .event(event("x", 1))
        .expect_revision(feature("keep"), stale);
    let err = store.commit(changes).await.expect_err("stale precondition");
    assert!(err.is_conflict(), "expected Conflict, got {err:?}");
    assert_eq!(store.get(&feature("a")).await.unwrap(), None);
    assert_eq!(
        store
            .get(&Key::new(Collection::Projects, "p"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.get(&feature("keep")).await.unwrap().unwrap().value,
        json!("newer")
    );
    assert!(store.events(0, 10).await.unwrap().is_empty());

    // The same writes with a current precondition all land.
    let current = store.get(&feature("keep")).await.unwrap().unwrap().revision;
    let mut changes = ChangeSet::new();
    changes
        .put(feature("a"), json!(1))
        .put(Key::new(Collection::Projects, "p"), json!(2))
        .delete(feature("keep"))
        .event(event("x", 1))
        .expect_revision(feature("keep"), current);
    let revision = store.commit(changes).await.unwrap();
    assert_eq!(
        store.get(&feature("a")).await.unwrap().unwrap().value,
        json!(1)
    );
    assert_eq!(
        store
            .get(&Key::new(Collection::Projects, "p"))
            .await
            .unwrap()
            .unwrap()
            .revision,
        revision
    );
    assert_eq!(store.get(&feature("keep")).await.unwrap(), None);
    assert_eq!(store.events(0, 10).await.unwrap().len(), 1);
}

/// A stale record precondition fails with `Conflict` and nothing is written; the revision
/// does not move.
pub async fn conflict_writes_nothing(store: &dyn Store) {
    let first = put(store, feature("a"), json!("v1")).await;
    put(store, feature("a"), json!("v2")).await;
    let before = store.revision().await.unwrap();
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(feature("a"), first)
        .put(feature("a"), json!("lost"))
        .event(event("x", 1));
    let err = store.commit(changes).await.expect_err("conflict");
    assert!(matches!(err, StoreError::Conflict(_)), "got {err:?}");
    assert_eq!(
        store.get(&feature("a")).await.unwrap().unwrap().value,
        json!("v2")
    );
    assert_eq!(store.revision().await.unwrap(), before);
    assert!(store.events(0, 10).await.unwrap().is_empty());
}

/// `Revision::ABSENT` as a precondition means "must not exist": create-if-absent.
pub async fn absent_precondition(store: &dyn Store) {
    let create = |value: Value| {
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(feature("new"), Revision::ABSENT)
            .put(feature("new"), value);
        changes
    };
    store.commit(create(json!("first"))).await.unwrap();
    let err = store
        .commit(create(json!("second")))
        .await
        .expect_err("exists");
    assert!(err.is_conflict());
    assert_eq!(
        store.get(&feature("new")).await.unwrap().unwrap().value,
        json!("first")
    );
}

/// A collection precondition fails when anything in the collection was written or deleted
/// since, and holds when only other collections changed.
pub async fn collection_precondition(store: &dyn Store) {
    put(store, feature("a"), json!(1)).await;
    let listing = store.list(Collection::Features, "").await.unwrap();
    assert_eq!(listing.records.len(), 1);

    // A write elsewhere does not disturb it.
    put(store, Key::new(Collection::Projects, "p"), json!(1)).await;
    let mut changes = ChangeSet::new();
    changes
        .expect_collection(Collection::Features, listing.revision)
        .put(feature("b"), json!(2));
    store.commit(changes).await.unwrap();

    // A write in the collection does.
    let mut changes = ChangeSet::new();
    changes
        .expect_collection(Collection::Features, listing.revision)
        .put(feature("c"), json!(3));
    assert!(
        store
            .commit(changes)
            .await
            .expect_err("changed")
            .is_conflict()
    );
    assert_eq!(store.get(&feature("c")).await.unwrap(), None);

    // A delete in the collection does too.
    let listing = store.list(Collection::Features, "").await.unwrap();
    let mut changes = ChangeSet::new();
    changes.delete(feature("a"));
    store.commit(changes).await.unwrap();
    let mut changes = ChangeSet::new();
    changes
        .preconditions
        .push(Precondition::CollectionUnchanged {
            collection: Collection::Features,
            revision: listing.revision,
        });
    assert!(
        store
            .commit(changes)
            .await
            .expect_err("deleted")
            .is_conflict()
    );
}

/// Deleting removes a record; a missing record's delete is not an error; re-creating works.
pub async fn delete_and_recreate(store: &dyn Store) {
    put(store, feature("a"), json!(1)).await;
    let mut changes = ChangeSet::new();
    changes.delete(feature("a")).delete(feature("never"));
    store.commit(changes).await.unwrap();
    assert_eq!(store.get(&feature("a")).await.unwrap(), None);
    let revision = put(store, feature("a"), json!(2)).await;
    let read = store.get(&feature("a")).await.unwrap().unwrap();
    assert_eq!(read.revision, revision);
    assert_eq!(read.value, json!(2));
}

/// `submit` checks preconditions as `commit` does, and its `Accepted` resolves to the
/// commit's revision, visible to reads and views once durable; a decision view taken after
/// `submit` shows the accepted commit.
pub async fn submit_accepts_then_makes_durable(store: &dyn Store) {
    let key = feature("submitted");
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key.clone(), Revision::ABSENT)
        .put(key.clone(), json!(1))
        .event(event("submitted", 1));
    let accepted = store.submit(changes.clone()).await.unwrap();
    assert_eq!(accepted.revision(), Revision(1));
    let deciding = store.decision_view().await.unwrap();
    assert_eq!(deciding.revision(), Revision(1));
    assert_eq!(deciding.get(&key).await.unwrap().unwrap().value, json!(1));
    assert_eq!(accepted.durable().await.unwrap(), Revision(1));
    assert_eq!(
        store.get(&key).await.unwrap().unwrap().revision,
        Revision(1)
    );
    assert_eq!(store.view().await.unwrap().revision(), Revision(1));
    // The same change set again: its precondition no longer holds.
    assert!(store.submit(changes).await.unwrap_err().is_conflict());
    assert_eq!(store.revision().await.unwrap(), Revision(1));
    assert_eq!(store.events(0, 10).await.unwrap().len(), 1);
}
