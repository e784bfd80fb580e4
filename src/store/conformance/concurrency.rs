//! Concurrent writers: increments, id sequences and conditional deletes.

use std::sync::Arc;

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

use super::{event, put, spawn_all};

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
