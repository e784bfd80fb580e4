//! Concurrent writers: increments, id sequences and conditional deletes.

use std::sync::Arc;

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

use super::{
    Failed, Present, ScenarioFailure, Step, ensure_eq, ensure_none, event, number, put, scenario,
    spawn_all,
};

/// Many concurrent read-modify-write cycles on one record, each retrying on `Conflict`,
/// lose no update (run on a multi-threaded runtime to exercise real concurrency).
pub async fn concurrent_increments_lose_nothing(
    store: &Arc<dyn Store>,
) -> Result<(), ScenarioFailure> {
    const WRITERS: u64 = 8;
    const EACH: u64 = 25;
    scenario("concurrent_increments_lose_nothing", async {
        let key = Key::new(Collection::Sequences, "counter");
        let writers = (0..WRITERS).map(|_| {
            let key = key.clone();
            let store = Arc::clone(store);
            async move {
                for _ in 0..EACH {
                    loop {
                        let (n, revision) =
                            match store.get(&key).await.step("get of the counter")? {
                                None => (0, Revision::ABSENT),
                                Some(current) => {
                                    (number(&current, "the counter")?, current.revision)
                                }
                            };
                        let mut changes = ChangeSet::new();
                        changes
                            .expect_revision(key.clone(), revision)
                            .put(key.clone(), json!(n + 1))
                            .event(event("increment", n + 1));
                        match store.commit(changes).await {
                            Ok(_) => break,
                            Err(e) if e.is_conflict() => continue,
                            Err(e) => {
                                return Err(Failed(format!(
                                    "commit of the increment to {} failed: {e}",
                                    n + 1
                                )));
                            }
                        }
                    }
                }
                Ok(())
            }
        });
        spawn_all(writers).await?;
        let value = store
            .get(&key)
            .await
            .step("get of the counter")?
            .present("the counter after the increments")?;
        ensure_eq(
            &value.value,
            &json!(WRITERS * EACH),
            format_args!("the counter after {WRITERS} writers incremented it {EACH} times each"),
        )?;
        let events = store.events(0, 10_000).await.step("events")?;
        ensure_eq(
            events.len() as u64,
            WRITERS * EACH,
            "the number of events (one per increment)",
        )?;
        // The log tells the same story as the data: 1, 2, 3 … in order.
        for (i, e) in events.iter().enumerate() {
            ensure_eq(
                &e.event.data,
                &Some(json!({ "n": i as u64 + 1 }).into()),
                format_args!("the data of event {} (increment number {})", e.id, i + 1),
            )?;
        }
        Ok(())
    })
    .await
}

/// Concurrent creators that each take the next id from a counter record (under a
/// precondition) and create the record with that id (which must be absent) get every id
/// exactly once: ids 1 to N, N records, N events, no gap.
pub async fn sequence_hands_out_each_id_once(
    store: &Arc<dyn Store>,
) -> Result<(), ScenarioFailure> {
    const CREATORS: u64 = 6;
    const EACH: u64 = 10;
    scenario("sequence_hands_out_each_id_once", async {
        let counter = Key::new(Collection::Sequences, "users");
        let creators = (0..CREATORS).map(|creator| {
            let counter = counter.clone();
            let store = Arc::clone(store);
            async move {
                for n in 0..EACH {
                    loop {
                        let (last, revision) =
                            match store.get(&counter).await.step("get of the counter")? {
                                None => (0, Revision::ABSENT),
                                Some(current) => {
                                    (number(&current, "the counter")?, current.revision)
                                }
                            };
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
                            Err(e) => {
                                return Err(Failed(format!(
                                    "commit creating user {id} failed: {e}"
                                )));
                            }
                        }
                    }
                }
                Ok(())
            }
        });
        spawn_all(creators).await?;
        let total = CREATORS * EACH;
        ensure_eq(
            &store
                .get(&counter)
                .await
                .step("get of the counter")?
                .present("the counter after the creations")?
                .value,
            &json!(total),
            format_args!("the counter after {CREATORS} creators took {EACH} ids each"),
        )?;
        let users = store
            .list(Collection::Users, "")
            .await
            .step("list of the users")?;
        let mut ids = Vec::new();
        for (id, record) in &users.records {
            let value = record
                .value
                .to_value()
                .step(format_args!("reading user {id}"))?;
            let stored = value
                .get("id")
                .and_then(serde_json::Value::as_u64)
                .present(format_args!(
                    "the id in user {id} (the record holds {value})"
                ))?;
            ensure_eq(
                id.as_str(),
                stored.to_string().as_str(),
                format_args!("the key of the user with id {stored}"),
            )?;
            ids.push(stored);
        }
        ids.sort_unstable();
        ensure_eq(
            ids,
            (1..=total).collect::<Vec<_>>(),
            "the ids of the users created, sorted",
        )?;
        let events = store.events(0, 10_000).await.step("events")?;
        ensure_eq(
            events.len() as u64,
            total,
            "the number of events (one per user created)",
        )
    })
    .await
}

/// Several concurrent conditional deletes of one record (each expecting the revision it
/// read, each with an event) succeed exactly once: one event, the record gone.
pub async fn conditional_delete_happens_once(
    store: &Arc<dyn Store>,
) -> Result<(), ScenarioFailure> {
    scenario("conditional_delete_happens_once", async {
        let key = Key::new(Collection::Applications, "app");
        put(
            store.as_ref(),
            key.clone(),
            json!({"name": "app", "instances": [{"instanceId": "i"}]}),
        )
        .await?;
        let deleters = (0..8u64).map(|n| {
            let key = key.clone();
            let store = Arc::clone(store);
            async move {
                loop {
                    let Some(current) = store.get(&key).await.step("get of the application")?
                    else {
                        return Ok(());
                    };
                    let mut changes = ChangeSet::new();
                    changes
                        .expect_revision(key.clone(), current.revision)
                        .delete(key.clone())
                        .event(event("application-deleted", n));
                    match store.commit(changes).await {
                        Ok(_) => return Ok(()),
                        Err(e) if e.is_conflict() => continue,
                        Err(e) => {
                            return Err(Failed(format!(
                                "commit of deleter {n}'s conditional delete failed: {e}"
                            )));
                        }
                    }
                }
            }
        });
        spawn_all(deleters).await?;
        ensure_none(
            store.get(&key).await.step("get of the application")?,
            "the application after the deletes",
        )?;
        let events = store.events(0, 100).await.step("events")?;
        ensure_eq(
            events.len(),
            1,
            "the number of events after 8 concurrent conditional deletes of one record",
        )?;
        let deleted = events.first().present("the delete's event")?;
        ensure_eq(
            deleted.event.event_type.as_str(),
            "application-deleted",
            "the type of the delete's event",
        )
    })
    .await
}
