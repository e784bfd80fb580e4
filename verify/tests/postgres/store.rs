//! PostgresStore against a real server: the conformance suite, two instances on one schema,
//! a connection killed mid-commit, concurrent migrations, and pool recovery.
//!
//! The server comes from `TOGGLE_ADMIN_TEST_POSTGRES` (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`). Without it every test prints that it was skipped
//! and passes, except under `CI=true`, where a missing server must not look like a pass. Each
//! test works in schemas of its own, dropped at the end, so the tests run in parallel.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};
use toggle_admin::store::{
    ChangeSet, Collection, Key, NewEvent, PostgresConfig, PostgresStore, Revision, Store,
    StoreError,
};

use test_support::postgres::{TestSchema, admin, blocked_session, database_url};

fn event(kind: &str, data: Value) -> NewEvent {
    NewEvent {
        event_type: kind.to_owned(),
        created_by: "postgres-test".to_owned(),
        created_at: Utc::now(),
        project: Some("default".to_owned()),
        feature_name: None,
        environment: None,
        data: Some(data.into()),
        pre_data: None,
        created_by_user_id: None,
        tags: None,
    }
}

#[cfg(feature = "conformance")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conformance_suite_passes() {
    use std::sync::{Mutex, PoisonError};
    use toggle_admin::store::conformance;

    let Some(url) = database_url() else { return };
    let schemas = Arc::new(Mutex::new(Vec::new()));
    conformance::run_all(|| {
        let (url, schemas) = (url.clone(), schemas.clone());
        async move {
            let schema = TestSchema::new(&url);
            let store = schema.connect(4).await;
            schemas
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(schema);
            store
        }
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_on_one_schema_lose_no_update() {
    const TASKS: usize = 8;
    const EACH: usize = 50;
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    // Two pools, as two application instances would have.
    let stores = [schema.connect(TASKS).await, schema.connect(TASKS).await];
    let key = Key::new(Collection::FeatureEnvironments, "checkout\u{1f}production");
    let conflicts = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (instance, store) in stores.iter().enumerate() {
        for task in 0..TASKS {
            let (store, key, conflicts) = (store.clone(), key.clone(), conflicts.clone());
            tasks.push(tokio::spawn(async move {
                for n in 0..EACH {
                    let name = format!("i{instance}-t{task}-n{n}");
                    loop {
                        let current = store.get(&key).await.expect("read");
                        let (mut items, revision) = match current {
                            Some(v) => (
                                v.value.to_value().unwrap()["variants"]
                                    .as_array()
                                    .cloned()
                                    .expect("list"),
                                v.revision,
                            ),
                            None => (Vec::new(), Revision::ABSENT),
                        };
                        items.push(json!(name));
                        let mut changes = ChangeSet::new();
                        changes
                            .expect_revision(key.clone(), revision)
                            .put(key.clone(), json!({ "variants": items }))
                            .event(event("variant-added", json!({ "name": name })));
                        match store.commit(changes).await {
                            Ok(_) => break,
                            Err(e) if e.is_conflict() => {
                                conflicts.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("commit failed: {e}"),
                        }
                    }
                }
            }));
        }
    }
    for task in tasks {
        task.await.expect("task");
    }
    let elapsed = started.elapsed();
    let total = 2 * TASKS * EACH;
    println!(
        "{total} read-modify-write commits from 2 instances x {TASKS} tasks in {elapsed:?} \
         ({} conflicts retried)",
        conflicts.load(Ordering::Relaxed)
    );

    // Both instances see the same end state: every element once, every event once, in order.
    for store in &stores {
        let record = store.get(&key).await.unwrap().expect("record");
        let items: Vec<String> =
            serde_json::from_value(record.value.to_value().unwrap()["variants"].clone()).unwrap();
        assert_eq!(items.len(), total);
        assert_eq!(items.iter().collect::<BTreeSet<_>>().len(), total);
        let events = store.events(0, 10_000).await.unwrap();
        assert_eq!(events.len(), total);
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e.id, i as u64 + 1);
            assert_eq!(e.revision, Revision(i as u64 + 1));
            // The log tells the same story as the data.
            assert_eq!(e.event.data, Some(json!({ "name": items[i] }).into()));
        }
        assert_eq!(store.revision().await.unwrap(), Revision(total as u64));
    }
}

/// The id of a record the blocked commit writes after thousands of others.
const BLOCKER: &str = "zz-blocker";

/// A change set of `n` puts and `n` events whose last put is to [`BLOCKER`].
fn large_change_set(n: usize) -> ChangeSet {
    let mut changes = ChangeSet::new();
    for i in 0..n {
        changes
            .put(
                Key::new(Collection::Features, format!("f{i:05}")),
                json!({ "name": format!("f{i:05}"), "enabled": i % 2 == 0 }),
            )
            .event(event("feature-created", json!({ "n": i })));
    }
    changes.put(Key::new(Collection::Features, BLOCKER), json!("written"));
    changes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_connection_mid_commit_leaves_no_partial_change_set() {
    const WRITES: usize = 5_000;
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = schema.connect(2).await;
    let mut seed = ChangeSet::new();
    seed.put(Key::new(Collection::Features, BLOCKER), json!("seed"));
    store.commit(seed).await.unwrap();

    // Hold a row lock on the blocker, so the commit stops inside its write statement with
    // thousands of rows already inserted in its transaction: provably mid-commit.
    let mut holder = admin(&url).await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        &format!(
            "SELECT 1 FROM \"{}\".records WHERE collection = 'features' AND id = $1 FOR UPDATE",
            schema.name
        ),
        &[&BLOCKER],
    )
    .await
    .unwrap();

    let committing = tokio::spawn({
        let store = store.clone();
        async move { store.commit(large_change_set(WRITES)).await }
    });
    let watcher = admin(&url).await;
    let pid = blocked_session(&watcher, &schema.name).await;
    watcher
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .await
        .unwrap();
    let result = committing.await.unwrap();
    hold.rollback().await.unwrap();

    let err = result.expect_err("the commit's connection was killed");
    // A lost connection: the database is unavailable (503), not a failed statement.
    assert!(matches!(err, StoreError::Unavailable { .. }), "got {err:?}");
    println!("killed commit reported: {err}");

    // None of it is visible: no record, no event, no revision, no collection revision.
    assert_eq!(store.revision().await.unwrap(), Revision(1));
    let listing = store.list(Collection::Features, "f").await.unwrap();
    assert!(listing.records.is_empty());
    assert_eq!(listing.revision, Revision(1));
    assert!(store.events(0, 10).await.unwrap().is_empty());
    let blocker = store
        .get(&Key::new(Collection::Features, BLOCKER))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(blocker.value, json!("seed"));
    let count: i64 = watcher
        .query_one(
            &format!("SELECT count(*) FROM \"{}\".records", schema.name),
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(count, 1);

    // The store keeps working, and the same change set now lands whole.
    let started = Instant::now();
    let revision = store.commit(large_change_set(WRITES)).await.unwrap();
    println!(
        "one commit of {} writes and {WRITES} events took {:?}",
        WRITES + 1,
        started.elapsed()
    );
    // The killed transaction had taken revision 2 from the sequence before it died, and a
    // sequence does not give numbers back: the store's revisions skip it.
    assert!(revision > Revision(1), "{revision}");
    assert_eq!(store.revision().await.unwrap(), revision);
    let listing = store.list(Collection::Features, "").await.unwrap();
    assert_eq!(listing.records.len(), WRITES + 1);
    assert_eq!(store.events(0, 100_000).await.unwrap().len(), WRITES);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_connects_migrate_once() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let config = schema.config().with_pool_size(1);
    let connects: Vec<_> = (0..8)
        .map(|_| tokio::spawn(PostgresStore::connect(config.clone())))
        .collect();
    let mut stores = Vec::new();
    for connect in connects {
        stores.push(
            connect
                .await
                .unwrap()
                .expect("every concurrent connect succeeds"),
        );
    }
    let client = admin(&url).await;
    let rows = client
        .query(
            &format!(
                "SELECT version, count(*) FROM \"{}\".schema_migrations GROUP BY version \
                 ORDER BY version",
                schema.name
            ),
            &[],
        )
        .await
        .unwrap();
    let versions: Vec<(i32, i64)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        versions,
        vec![(1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1)]
    );

    // All eight are one store: what one commits, the others read; a later instance too.
    let mut changes = ChangeSet::new();
    changes.put(
        Key::new(Collection::Projects, "default"),
        json!({"id": "default"}),
    );
    let revision = stores[0].commit(changes).await.unwrap();
    for store in &stores {
        let read = store
            .get(&Key::new(Collection::Projects, "default"))
            .await
            .unwrap();
        assert_eq!(read.map(|v| v.revision), Some(revision));
    }
    let later = schema.connect(1).await;
    assert_eq!(later.revision().await.unwrap(), revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_schema_from_a_newer_version_is_refused() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    drop(schema.connect(1).await);
    admin(&url)
        .await
        .batch_execute(&format!(
            "INSERT INTO \"{}\".schema_migrations (version, name) VALUES (999, 'future')",
            schema.name
        ))
        .await
        .unwrap();
    let err = PostgresStore::connect(schema.config())
        .await
        .expect_err("newer schema");
    assert!(err.to_string().contains("migration 999"), "{err}");
}

/// Terminate every backend of the store (found by its application name); with `wait`, also
/// wait until the server has let them all go. Returns how many were signalled.
async fn terminate_backends(
    client: &tokio_postgres::Client,
    application_name: &str,
    wait: bool,
) -> usize {
    let killed = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
            &[&application_name],
        )
        .await
        .unwrap()
        .len();
    let deadline = Instant::now() + Duration::from_secs(10);
    if !wait {
        return killed;
    }
    loop {
        let left: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                &[&application_name],
            )
            .await
            .unwrap()
            .get(0);
        if left == 0 {
            return killed;
        }
        assert!(Instant::now() < deadline, "backends survived termination");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pool_recovers_after_its_connections_are_terminated() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = schema.connect(4).await;
    let client = admin(&url).await;
    let key = Key::new(Collection::Applications, "billing");

    for round in 0..20 {
        // Open several pooled connections, then kill them all while idle. Half the rounds
        // carry on at once, before the client may have noticed (its pooled connections still
        // look open); the others after the server has closed them.
        let reads: Vec<_> = (0..4)
            .map(|_| {
                let (store, key) = (store.clone(), key.clone());
                tokio::spawn(async move { store.get(&key).await })
            })
            .collect();
        for read in reads {
            read.await.unwrap().unwrap();
        }
        let killed = terminate_backends(&client, &schema.name, round % 2 == 1).await;
        assert!(killed >= 1, "round {round}: nothing to kill");

        // The very next operation succeeds: a commit in some rounds, reads in the others.
        let outcome = match round % 4 {
            0 | 1 => {
                let mut changes = ChangeSet::new();
                changes.put(key.clone(), json!({ "round": round }));
                store.commit(changes).await.map(|_| ())
            }
            2 => store.revision().await.map(|_| ()),
            _ => store.list(Collection::Applications, "").await.map(|_| ()),
        };
        outcome.unwrap_or_else(|e| panic!("round {round}: first call after the kill: {e}"));
    }
    let read = store
        .get(&key)
        .await
        .unwrap()
        .expect("committed after recovery");
    assert_eq!(read.value, json!({ "round": 17 }));
}

/// Another instance hears of every commit, the last of a burst too: the first carries its
/// notification, the ones within the next 2 ms are announced together by the next commit
/// that carries one or by the store's task. A store's watch moves only on notifications, so
/// without them it would stay where it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_last_commit_of_a_burst_reaches_another_instance() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let writer = schema.connect(4).await;
    let reader = schema.connect(2).await;
    let mut first = ChangeSet::new();
    first.put(Key::new(Collection::Applications, "first"), json!(0));
    let first = writer.commit(first).await.unwrap();
    let mut heard = reader.changes().expect("a PostgresStore announces commits");
    // The listener is connected once it has read the store's revision.
    tokio::time::timeout(Duration::from_secs(10), heard.wait_for(|r| *r >= first))
        .await
        .expect("the listener reads the store's revision")
        .unwrap();
    for burst in 0..5 {
        // Two commits at once: one carries the notification of its own revision, the other
        // none (less than 2 ms after it), so a later revision is left to be announced.
        let commit = |i: u32| {
            let mut changes = ChangeSet::new();
            changes.put(
                Key::new(Collection::Applications, format!("a{i}")),
                json!({ "burst": burst }),
            );
            writer.commit(changes)
        };
        let (one, other) = tokio::join!(commit(0), commit(1));
        let last = one.unwrap().max(other.unwrap());
        tokio::time::timeout(Duration::from_secs(2), heard.wait_for(|r| *r >= last))
            .await
            .unwrap_or_else(|_| panic!("burst {burst}: revision {last:?} was never announced"))
            .unwrap();
        // A quiet spell, so that the next burst's first commit carries its notification.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A commit whose session the server ends while the commit waits for a key lock: the
/// answer to the commit's call is the session's end, so the `COMMIT` sent after it never
/// ran; the commit goes again on a fresh connection instead of failing with an unknown
/// outcome, and lands once the lock is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_commit_whose_session_ends_before_it_commits_is_sent_again() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = schema.connect(2).await;
    let (holder, watcher) = (admin(&url).await, admin(&url).await);
    let key = Key::new(Collection::Applications, "billing");
    // The lock the store takes on the key (`commit_change_set`), held here meanwhile.
    let lock = "hashtextextended($1 || chr(31) || 'applications' || chr(31) || 'billing', 0)";
    holder
        .execute(&format!("SELECT pg_advisory_lock({lock})"), &[&schema.name])
        .await
        .unwrap();
    let commit = tokio::spawn({
        let (store, key) = (store.clone(), key.clone());
        async move {
            let mut changes = ChangeSet::new();
            changes.put(key, json!("kept"));
            store.commit(changes).await
        }
    });
    let waiting = blocked_session(&watcher, &schema.name).await;
    let ended: bool = watcher
        .query_one("SELECT pg_terminate_backend($1, 10000)", &[&waiting])
        .await
        .unwrap()
        .get(0);
    assert!(ended);
    holder
        .execute(
            &format!("SELECT pg_advisory_unlock({lock})"),
            &[&schema.name],
        )
        .await
        .unwrap();
    let revision = commit
        .await
        .unwrap()
        .expect("sent again on a fresh connection");
    let read = store.get(&key).await.unwrap().expect("committed");
    assert_eq!(read.value, json!("kept"));
    assert_eq!(read.revision, revision);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn listing_is_in_byte_order_and_prefixes_are_literal() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = schema.connect(2).await;
    let ids = ["a%b", "a_b", "ab", "aXb", "a", "é", "z", "Z", "a\u{10ffff}"];
    let mut changes = ChangeSet::new();
    for id in ids {
        changes.put(Key::new(Collection::Segments, id), json!(id));
    }
    store.commit(changes).await.unwrap();
    let listed = |prefix: &'static str| {
        let store = store.clone();
        async move {
            store
                .list(Collection::Segments, prefix)
                .await
                .unwrap()
                .records
                .into_iter()
                .map(|(id, _)| id)
                .collect::<Vec<_>>()
        }
    };
    let mut sorted: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(listed("").await, sorted);
    assert_eq!(listed("a%").await, vec!["a%b"]);
    assert_eq!(listed("a_").await, vec!["a_b"]);
    assert_eq!(
        listed("a").await,
        vec!["a", "a%b", "aXb", "a_b", "ab", "a\u{10ffff}"]
    );
    assert_eq!(listed("\u{e9}").await, vec!["é"]);
    assert!(listed("b").await.is_empty());

    // PostgreSQL text cannot hold NUL: such a commit fails whole and the store carries on.
    let mut changes = ChangeSet::new();
    changes
        .put(Key::new(Collection::Segments, "fine"), json!(1))
        .put(Key::new(Collection::Segments, "nul\0id"), json!(2));
    let err = store.commit(changes).await.expect_err("NUL in an id");
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert_eq!(
        store
            .get(&Key::new(Collection::Segments, "fine"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(store.revision().await.unwrap(), Revision(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unreachable_server_is_unavailable() {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    let config = PostgresConfig::new("postgres://postgres@127.0.0.1:1/test");
    let err = PostgresStore::connect(config).await.expect_err("no server");
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(std::error::Error::source(&err).is_some());
    println!("{err}");
}

/// A view abandoned at any point (a client that hangs up while its request takes a view)
/// must not hand its connection back inside a read-only transaction: with a pool of one, the
/// next commit gets that very connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_abandoned_view_leaves_no_transaction_behind() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = schema.connect(1).await;
    let key = Key::new(Collection::Features, "after-abandoned-views");
    let mut abandoned = 0;
    for n in 0..300u64 {
        // Timeouts from 0 to ~600 µs cut the view off before, during and after `BEGIN`.
        let cut = Duration::from_micros((n * 37) % 600);
        if tokio::time::timeout(cut, store.view()).await.is_err() {
            abandoned += 1;
        }
        let current = store.get(&key).await.expect("read").map(|v| v.revision);
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(key.clone(), current.unwrap_or(Revision::ABSENT))
            .put(key.clone(), json!({ "n": n }));
        store
            .commit(changes)
            .await
            .unwrap_or_else(|e| panic!("commit {n} after a view cut off at {cut:?}: {e}"));
    }
    assert!(
        abandoned > 0,
        "no view was cut off: the test tested nothing"
    );
    assert_eq!(store.revision().await.unwrap(), Revision(300));
}
