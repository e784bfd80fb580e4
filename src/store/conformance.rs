//! The store scenario suite (feature `conformance`): every [`Store`] in this crate runs it,
//! and a third-party store can too.
//!
//! Each scenario takes an **empty** store and panics (it is test code) when the store breaks
//! the contract. [`run_all`] runs every scenario, each on a fresh store from the factory, and
//! once more through an `Arc<dyn Store>`.
//!
//! ```ignore
//! toggle_admin::store::conformance::run_all(|| async { MyStore::new() }).await;
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod events;

pub use events::{
    event_queries_filter_newest_first, event_queries_page_stably, event_query_limits,
};

use std::future::Future;
use std::sync::Arc;

use tokio::runtime::RuntimeFlavor;

use chrono::Utc;
use serde_json::{Value, json};

use super::{ChangeSet, Collection, Key, NewEvent, Precondition, Revision, Store, StoreError};

fn event(kind: &str, n: u64) -> NewEvent {
    NewEvent {
        event_type: kind.to_owned(),
        created_by: "conformance".to_owned(),
        created_at: Utc::now(),
        project: Some("default".to_owned()),
        feature_name: Some(format!("f{n}")),
        environment: None,
        data: Some(json!({ "n": n }).into()),
        pre_data: None,
    }
}

fn feature(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

async fn put(store: &dyn Store, key: Key, value: Value) -> Revision {
    let mut changes = ChangeSet::new();
    changes.put(key, value);
    store.commit(changes).await.expect("commit")
}

/// Run every scenario, each on a fresh store from `new_store`, then every scenario again
/// through an `Arc<dyn Store>`. Each scenario runs in its own task; when one fails, the panic
/// names it (`conformance scenario `…` failed`).
///
/// Needs a multi-threaded tokio runtime (`#[tokio::test(flavor = "multi_thread")]`): the
/// concurrent scenarios spawn their writers as tasks, so that they really interleave.
pub async fn run_all<F, Fut, S>(mut new_store: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: Store,
{
    assert!(
        tokio::runtime::Handle::current().runtime_flavor() != RuntimeFlavor::CurrentThread,
        "conformance::run_all needs a multi-threaded runtime: #[tokio::test(flavor = \"multi_thread\")]"
    );
    for through_arc in [false, true] {
        macro_rules! scenario {
            ($name:ident) => {{
                let store = new_store().await;
                let task = tokio::spawn(async move {
                    if through_arc {
                        let shared: Arc<dyn Store> = Arc::new(store);
                        $name(&shared).await;
                    } else {
                        $name(&store).await;
                    }
                });
                report(stringify!($name), through_arc, task.await);
            }};
            ($name:ident, shared) => {{
                let store: Arc<dyn Store> = Arc::new(new_store().await);
                let task = tokio::spawn(async move { $name(&store).await });
                report(stringify!($name), through_arc, task.await);
            }};
        }
        scenario!(empty_store);
        scenario!(visibility_after_commit);
        scenario!(revisions_grow_by_one);
        scenario!(all_or_nothing);
        scenario!(conflict_writes_nothing);
        scenario!(absent_precondition);
        scenario!(collection_precondition);
        scenario!(delete_and_recreate);
        scenario!(events_in_commit_order);
        scenario!(listing_by_prefix);
        scenario!(get_many_in_order);
        scenario!(empty_change_set);
        scenario!(concurrent_increments_lose_nothing, shared);
        scenario!(access_records_round_trip);
        scenario!(sequence_hands_out_each_id_once, shared);
        scenario!(conditional_delete_happens_once, shared);
        scenario!(views_read_one_revision);
        scenario!(views_stay_consistent_under_writes, shared);
        scenario!(submit_accepts_then_makes_durable);
        scenario!(event_queries_filter_newest_first);
        scenario!(event_queries_page_stably);
        scenario!(event_query_limits);
    }
}

/// Re-raise a scenario's panic with the scenario's name in front.
fn report(name: &str, through_arc: bool, outcome: Result<(), tokio::task::JoinError>) {
    let Err(error) = outcome else { return };
    let how = if through_arc {
        " (through an Arc<dyn Store>)"
    } else {
        ""
    };
    let message = if error.is_panic() {
        let panic = error.into_panic();
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned())
    } else {
        error.to_string()
    };
    panic!("conformance scenario `{name}` failed{how}: {message}");
}

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

/// Many concurrent read-modify-write cycles on one record, each retrying on `Conflict`,
/// lose no update (run on a multi-threaded runtime to exercise real concurrency).
pub async fn concurrent_increments_lose_nothing(store: &Arc<dyn Store>) {
    const WRITERS: u64 = 8;
    const EACH: u64 = 25;
    let key = Key::new(Collection::Sequences, "counter");
    let writers = (0..WRITERS).map(|_| {
        let key = key.clone();
        let store = Arc::clone(store);
        async move {
            for _ in 0..EACH {
                loop {
                    let current = store.get(&key).await.unwrap();
                    let (n, revision) = current.map_or((0, Revision::ABSENT), |v| {
                        (v.value.to_value().unwrap().as_u64().unwrap(), v.revision)
                    });
                    let mut changes = ChangeSet::new();
                    changes
                        .expect_revision(key.clone(), revision)
                        .put(key.clone(), json!(n + 1))
                        .event(event("increment", n + 1));
                    match store.commit(changes).await {
                        Ok(_) => break,
                        Err(e) if e.is_conflict() => continue,
                        Err(e) => panic!("commit failed: {e}"),
                    }
                }
            }
        }
    });
    spawn_all(writers).await;
    let value = store.get(&key).await.unwrap().unwrap();
    assert_eq!(value.value, json!(WRITERS * EACH));
    let events = store.events(0, 10_000).await.unwrap();
    assert_eq!(events.len() as u64, WRITERS * EACH);
    // The log tells the same story as the data: 1, 2, 3 … in order.
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.event.data, Some(json!({ "n": i as u64 + 1 }).into()));
    }
}

/// Users, groups, roles, project access and applications round-trip exactly, in one commit
/// across collections: negative and large integers, nested arrays and objects, nulls,
/// non-ASCII text. Numeric ids list in byte order (`"10"` before `"9"`), and an application
/// with its instances goes in one delete.
pub async fn access_records_round_trip(store: &dyn Store) {
    let records = [
        (
            Key::new(Collection::Users, "9"),
            json!({"id": 9, "username": "zoë", "email": null, "rootRole": 3,
                   "createdAt": "2024-01-01T00:00:00.123Z"}),
        ),
        (
            Key::new(Collection::Users, "10"),
            json!({"id": 10, "email": "a@example.com", "rootRole": 1}),
        ),
        (
            Key::new(Collection::Groups, "1"),
            json!({"id": 1, "name": "Ops 🚀", "users": [9, 10, 9_007_199_254_740_991_i64]}),
        ),
        (
            Key::new(Collection::Roles, "6"),
            json!({"id": 6, "name": "Variants", "type": "custom", "permissions": [
                {"name": "UPDATE_FEATURE_ENVIRONMENT_VARIANTS", "environment": "production"},
                {"name": "UPDATE_FEATURE"}
            ]}),
        ),
        (
            Key::new(Collection::ProjectAccess, "default"),
            json!({"roles": [{"id": 4, "groups": [], "users": [10]},
                             {"id": 5, "groups": [1], "users": [-1]}]}),
        ),
        (
            Key::new(Collection::Applications, "billing service"),
            json!({"name": "billing service", "instances": [
                {"instanceId": "i-1", "sdkVersion": "unleash-client-node:5.0.0",
                 "lastSeen": "2024-01-01T00:00:00.000Z"},
                {"instanceId": "i-2"}
            ]}),
        ),
        (Key::new(Collection::Sequences, "users"), json!(10)),
    ];
    let mut changes = ChangeSet::new();
    for (key, value) in &records {
        changes
            .expect_revision(key.clone(), Revision::ABSENT)
            .put(key.clone(), value.clone());
    }
    let revision = store.commit(changes).await.unwrap();
    let keys: Vec<Key> = records.iter().map(|(key, _)| key.clone()).collect();
    let read = store.get_many(&keys).await.unwrap();
    for ((key, value), got) in records.iter().zip(&read) {
        let got = got.as_ref().unwrap_or_else(|| panic!("{key} is missing"));
        assert_eq!(got.value, *value, "{key}");
        assert_eq!(got.revision, revision, "{key}");
    }
    let users = store.list(Collection::Users, "").await.unwrap();
    let ids: Vec<_> = users.records.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["10", "9"]);
    assert_eq!(users.revision, revision);

    let application = Key::new(Collection::Applications, "billing service");
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(application.clone(), revision)
        .delete(application.clone());
    store.commit(changes).await.unwrap();
    assert_eq!(store.get(&application).await.unwrap(), None);
    assert!(
        store
            .list(Collection::Applications, "")
            .await
            .unwrap()
            .records
            .is_empty()
    );
    assert!(store.get(&keys[0]).await.unwrap().is_some());
}

/// Concurrent creators that each take the next id from a counter record (under a
/// precondition) and create the record with that id (which must be absent) get every id
/// exactly once: ids 1 to N, N records, N events, no gap.
pub async fn sequence_hands_out_each_id_once(store: &Arc<dyn Store>) {
    const CREATORS: u64 = 6;
    const EACH: u64 = 10;
    let counter = Key::new(Collection::Sequences, "users");
    let creators = (0..CREATORS).map(|creator| {
        let counter = counter.clone();
        let store = Arc::clone(store);
        async move {
            for n in 0..EACH {
                loop {
                    let current = store.get(&counter).await.unwrap();
                    let (last, revision) = current.map_or((0, Revision::ABSENT), |v| {
                        (v.value.to_value().unwrap().as_u64().unwrap(), v.revision)
                    });
                    let id = last + 1;
                    let user = Key::new(Collection::Users, id.to_string());
                    let mut changes = ChangeSet::new();
                    changes
                        .expect_revision(counter.clone(), revision)
                        .expect_revision(user.clone(), Revision::ABSENT)
                        .put(counter.clone(), json!(id))
                        .put(user, json!({"id": id, "creator": creator, "n": n}))
                        .event(event("user-created", id));
                    match store.commit(changes).await {
                        Ok(_) => break,
                        Err(e) if e.is_conflict() => continue,
                        Err(e) => panic!("commit failed: {e}"),
                    }
                }
            }
        }
    });
    spawn_all(creators).await;
    let total = CREATORS * EACH;
    assert_eq!(
        store.get(&counter).await.unwrap().unwrap().value,
        json!(total)
    );
    let users = store.list(Collection::Users, "").await.unwrap();
    let mut ids: Vec<u64> = users
        .records
        .iter()
        .map(|(id, record)| {
            let stored = record.value.to_value().unwrap()["id"].as_u64().unwrap();
            assert_eq!(id, &stored.to_string());
            stored
        })
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=total).collect::<Vec<_>>());
    let events = store.events(0, 10_000).await.unwrap();
    assert_eq!(events.len() as u64, total);
}

/// Several concurrent conditional deletes of one record (each expecting the revision it
/// read, each with an event) succeed exactly once: one event, the record gone.
pub async fn conditional_delete_happens_once(store: &Arc<dyn Store>) {
    let key = Key::new(Collection::Applications, "app");
    put(
        store.as_ref(),
        key.clone(),
        json!({"name": "app", "instances": [{"instanceId": "i"}]}),
    )
    .await;
    let deleters = (0..8u64).map(|n| {
        let key = key.clone();
        let store = Arc::clone(store);
        async move {
            loop {
                let Some(current) = store.get(&key).await.unwrap() else {
                    return;
                };
                let mut changes = ChangeSet::new();
                changes
                    .expect_revision(key.clone(), current.revision)
                    .delete(key.clone())
                    .event(event("application-deleted", n));
                match store.commit(changes).await {
                    Ok(_) => return,
                    Err(e) if e.is_conflict() => continue,
                    Err(e) => panic!("commit failed: {e}"),
                }
            }
        }
    });
    spawn_all(deleters).await;
    assert_eq!(store.get(&key).await.unwrap(), None);
    let events = store.events(0, 100).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event.event_type, "application-deleted");
}

/// Commit generation `generation`: the same number into a feature `g` and a sequence `g`
/// (one commit, so every consistent read sees them equal) and into one of `spread` records.
async fn write_generation(store: &dyn Store, generation: u64, spread: u64) {
    let mut changes = ChangeSet::new();
    changes
        .put(feature("g"), json!(generation))
        .put(Key::new(Collection::Sequences, "g"), json!(generation))
        .put(
            feature(&format!("r{:05}", generation % spread)),
            json!({ "generation": generation }),
        )
        .event(event("generation", generation));
    store.commit(changes).await.expect("commit a generation");
}

/// What a view shows, checked for consistency: the two `g` records agree, no record is newer
/// than the view, and no record holds a generation newer than `g`. Returns `g` and the
/// feature listing.
async fn check_view(view: &dyn super::ReadView, spread: u64) -> (u64, super::Listing) {
    let revision = view.revision();
    let [g_feature, g_sequence] = <[Option<super::Versioned>; 2]>::try_from(
        view.get_many(&[feature("g"), Key::new(Collection::Sequences, "g")])
            .await
            .unwrap(),
    )
    .unwrap();
    let g_feature = g_feature.expect("g");
    let g = g_feature.value.to_value().unwrap().as_u64().unwrap();
    assert_eq!(
        g_sequence.expect("sequence g").value,
        json!(g),
        "two records of one commit disagree in a view"
    );
    assert!(g_feature.revision <= revision);
    let listing = view.list(Collection::Features, "r").await.unwrap();
    assert_eq!(listing.records.len() as u64, spread);
    for (id, record) in &listing.records {
        assert!(
            record.revision <= revision,
            "{id} at {} in a view at {revision}",
            record.revision
        );
        let generation = record.value.to_value().unwrap()["generation"]
            .as_u64()
            .unwrap();
        assert!(generation <= g, "{id} holds generation {generation} > {g}");
    }
    (g, listing)
}

/// A view reads thousands of records at one revision: commits made after it was taken do not
/// show through it, and the same read through it answers the same before and after them.
pub async fn views_read_one_revision(store: &dyn Store) {
    const SPREAD: u64 = 2_000;
    let mut seed = ChangeSet::new();
    for i in 0..SPREAD {
        seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
    }
    seed.put(feature("g"), json!(0))
        .put(Key::new(Collection::Sequences, "g"), json!(0));
    store.commit(seed).await.unwrap();
    for generation in 1..=10 {
        write_generation(store, generation, SPREAD).await;
    }
    let before = store.revision().await.unwrap();
    let view = store.view().await.unwrap();
    assert!(view.revision() >= before, "a view misses a returned commit");
    let (g, first) = check_view(view.as_ref(), SPREAD).await;
    assert_eq!(g, 10);
    for generation in 11..=60 {
        write_generation(store, generation, SPREAD).await;
    }
    let (g, second) = check_view(view.as_ref(), SPREAD).await;
    assert_eq!(g, 10, "a later commit shows through a view");
    assert_eq!(first, second);
    assert_eq!(
        view.get(&feature("r00042")).await.unwrap().unwrap().value,
        json!({ "generation": 0 })
    );
    // A new view sees everything.
    let fresh = store.view().await.unwrap();
    assert_eq!(check_view(fresh.as_ref(), SPREAD).await.0, 60);
}

/// One writer commits continuously while readers take views of thousands of records: every
/// view is consistent (one revision), and views never go back in time.
pub async fn views_stay_consistent_under_writes(store: &Arc<dyn Store>) {
    const SPREAD: u64 = 2_000;
    const GENERATIONS: u64 = 300;
    let mut seed = ChangeSet::new();
    for i in 0..SPREAD {
        seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
    }
    seed.put(feature("g"), json!(0))
        .put(Key::new(Collection::Sequences, "g"), json!(0));
    store.commit(seed).await.unwrap();
    let writer = {
        let store = Arc::clone(store);
        async move {
            for generation in 1..=GENERATIONS {
                write_generation(store.as_ref(), generation, SPREAD).await;
            }
        }
    };
    let reader = {
        let store = Arc::clone(store);
        async move {
            let mut last = 0;
            for _ in 0..20 {
                let view = store.view().await.unwrap();
                let (g, _) = check_view(view.as_ref(), SPREAD).await;
                assert!(g >= last, "a view went back from generation {last} to {g}");
                last = g;
            }
        }
    };
    let writer: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(writer);
    let reader: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(reader);
    spawn_all([writer, reader]).await;
    let view = store.view().await.unwrap();
    assert_eq!(check_view(view.as_ref(), SPREAD).await.0, GENERATIONS);
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

/// Spawn every future as a task (on a multi-threaded runtime they run in parallel) and wait
/// for all; a panic in one is re-raised here.
async fn spawn_all<F>(futures: impl IntoIterator<Item = F>)
where
    F: Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    for task in tasks {
        if let Err(error) = task.await {
            match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(error) => panic!("a task of the scenario failed: {error}"),
            }
        }
    }
}
