//! Reads: events, listings, `get_many` and empty change sets.

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

use super::{event, feature, put};

/// Events get ids 1, 2, 3 … in commit order and change-set order, carry their commit's
/// revision, and page with `after`/`limit`.
pub async fn events_in_commit_order(store: &dyn Store) {
    let mut revisions = Vec::new();
    for n in 0..3u64 {
        let mut changes = ChangeSet::new();
        changes
            .put(feature(&format!("f{n}")), json!(n))
            .event(event("first", n))
            .event(event("second", n));
        revisions.push(store.commit(changes).await.unwrap());
    }
    let events = store.events(0, 100).await.unwrap();
    assert_eq!(events.len(), 6);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.id, i as u64 + 1);
        assert_eq!(e.revision, revisions[i / 2]);
        assert_eq!(
            e.event.event_type,
            if i % 2 == 0 { "first" } else { "second" }
        );
        assert_eq!(e.event.data, Some(json!({ "n": (i / 2) as u64 }).into()));
        assert_eq!(e.event.created_by, "conformance");
    }
    let page = store.events(2, 3).await.unwrap();
    assert_eq!(page.iter().map(|e| e.id).collect::<Vec<_>>(), vec![3, 4, 5]);
    assert!(store.events(6, 10).await.unwrap().is_empty());
}

/// `list` returns the records with the prefix, ordered by id, and only from its collection.
pub async fn listing_by_prefix(store: &dyn Store) {
    let mut changes = ChangeSet::new();
    for id in ["b\u{1f}x", "a\u{1f}y", "a\u{1f}x", "ab", "c"] {
        changes.put(Key::new(Collection::FeatureEnvironments, id), json!(id));
    }
    changes.put(Key::new(Collection::Features, "a\u{1f}z"), json!(0));
    let revision = store.commit(changes).await.unwrap();
    let listing = store
        .list(Collection::FeatureEnvironments, "a\u{1f}")
        .await
        .unwrap();
    let ids: Vec<_> = listing.records.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["a\u{1f}x", "a\u{1f}y"]);
    assert_eq!(listing.revision, revision);
    let all = store
        .list(Collection::FeatureEnvironments, "")
        .await
        .unwrap();
    let ids: Vec<_> = all.records.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["a\u{1f}x", "a\u{1f}y", "ab", "b\u{1f}x", "c"]);
}

/// `get_many` answers in the order asked, `None` for missing records.
pub async fn get_many_in_order(store: &dyn Store) {
    put(store, feature("a"), json!("a")).await;
    put(store, feature("c"), json!("c")).await;
    let got = store
        .get_many(&[feature("c"), feature("b"), feature("a")])
        .await
        .unwrap();
    let values: Vec<_> = got
        .iter()
        .map(|v| v.as_ref().map(|v| v.value.to_value().unwrap()))
        .collect();
    assert_eq!(values, vec![Some(json!("c")), None, Some(json!("a"))]);
}

/// A change set with no writes still checks preconditions and takes a revision.
pub async fn empty_change_set(store: &dyn Store) {
    let revision = put(store, feature("a"), json!(1)).await;
    let mut changes = ChangeSet::new();
    changes.expect_revision(feature("a"), revision);
    assert_eq!(store.commit(changes).await.unwrap(), revision.next());
    let mut changes = ChangeSet::new();
    changes.expect_revision(feature("a"), Revision::ABSENT);
    assert!(
        store
            .commit(changes)
            .await
            .expect_err("exists")
            .is_conflict()
    );
}
