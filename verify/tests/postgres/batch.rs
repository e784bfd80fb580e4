//! PostgresStore's group commit against a real server: change sets that queue up together
//! share a transaction, yet each is decided as if it had run alone, in order.
//!
//! The server comes from `TOGGLE_ADMIN_TEST_POSTGRES`; see `store.rs` beside this file.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::Utc;
use serde_json::json;
use toggle_admin::store::{ChangeSet, Collection, Key, NewEvent, Revision, Store, StoreError};

use test_support::postgres::{TestSchema, admin, database_url};

fn event(name: &str) -> NewEvent {
    NewEvent {
        event_type: "feature-created".to_owned(),
        created_by: "batch-test".to_owned(),
        created_at: Utc::now(),
        project: Some("default".to_owned()),
        feature_name: Some(name.to_owned()),
        environment: None,
        data: Some(json!({ "name": name }).into()),
        pre_data: None,
        created_by_user_id: None,
        tags: None,
    }
}

/// A change set that creates `id` (it must not exist yet), with one event.
fn create(id: &str, value: serde_json::Value) -> ChangeSet {
    let key = Key::new(Collection::Features, id);
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key.clone(), Revision::ABSENT)
        .put(key, value)
        .event(event(id));
    changes
}

/// How many distinct transactions wrote the rows of `table` in `schema`.
async fn writing_transactions(url: &str, schema: &str, table: &str) -> i64 {
    let client = admin(url).await;
    let row = client
        .query_one(
            &format!("SELECT count(DISTINCT xmin::text) FROM \"{schema}\".{table}"),
            &[],
        )
        .await
        .expect("count transactions");
    row.get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_share_transactions_and_each_is_decided_alone() {
    const DISTINCT: usize = 48;
    const SAME: usize = 16;
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = Arc::new(schema.connect(8).await);

    // DISTINCT creations of different features, and SAME creations of one feature: of those,
    // exactly one may win, wherever the batches fall.
    let mut tasks = Vec::new();
    for n in 0..DISTINCT + SAME {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let id = if n < DISTINCT {
                format!("f{n:03}")
            } else {
                "contested".to_owned()
            };
            let outcome = store.commit(create(&id, json!({ "by": n }))).await;
            (n, outcome)
        }));
    }
    let mut revisions = BTreeSet::new();
    let mut contested_winners = Vec::new();
    for task in tasks {
        let (n, outcome) = task.await.expect("task");
        match outcome {
            Ok(revision) => {
                assert!(
                    revisions.insert(revision),
                    "revision {revision} given twice"
                );
                if n >= DISTINCT {
                    contested_winners.push(n);
                }
            }
            Err(e) if e.is_conflict() && n >= DISTINCT => {
                assert_eq!(
                    e.to_string(),
                    "conflict: features/contested changed since it was read"
                );
            }
            Err(e) => panic!("commit {n} failed: {e}"),
        }
    }
    assert_eq!(
        contested_winners.len(),
        1,
        "exactly one creation of one id wins"
    );
    let committed = DISTINCT + 1;
    // Revisions are 1..=committed without a gap, and the store says so.
    let expected: BTreeSet<Revision> = (1..=committed as u64).map(Revision).collect();
    assert_eq!(revisions, expected);
    assert_eq!(store.revision().await.unwrap(), Revision(committed as u64));

    // The winner's value is stored, and the log has one event per commit.
    let contested = store
        .get(&Key::new(Collection::Features, "contested"))
        .await
        .unwrap()
        .expect("contested record");
    assert_eq!(
        contested.value.to_value().unwrap(),
        json!({ "by": contested_winners[0] })
    );
    // Ids without a gap (no commit failed), one event per committed revision. Two batches
    // in flight side by side may interleave their ids (the store contract allows it).
    let events = store.events(0, 1_000).await.unwrap();
    assert_eq!(events.len(), committed);
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e.id, i as u64 + 1);
    }
    let event_revisions: BTreeSet<Revision> = events.iter().map(|e| e.revision).collect();
    assert_eq!(event_revisions, expected);
    for n in 0..DISTINCT {
        let record = store
            .get(&Key::new(Collection::Features, format!("f{n:03}")))
            .await
            .unwrap()
            .expect("record");
        assert_eq!(record.value.to_value().unwrap(), json!({ "by": n }));
        // Each record carries the revision of the event that created it.
        let created = events
            .iter()
            .find(|e| e.event.feature_name.as_deref() == Some(&format!("f{n:03}")))
            .expect("event");
        assert_eq!(record.revision, created.revision);
    }

    // And they were grouped: fewer transactions wrote the records than there are records.
    let transactions = writing_transactions(&url, &schema.name, "records").await;
    assert!(
        transactions < committed as i64,
        "{committed} commits in {transactions} transactions: no batching"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_refused_change_set_fails_alone_and_its_batch_still_commits() {
    const COMMITS: usize = 32;
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = Arc::new(schema.connect(8).await);

    // PostgreSQL's jsonb refuses the NUL character: that statement fails inside the database,
    // which aborts whatever transaction it is part of.
    const POISONED: usize = 7;
    let mut tasks = Vec::new();
    for n in 0..COMMITS {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            let value = if n == POISONED {
                json!({ "name": "nul\u{0}inside" })
            } else {
                json!({ "n": n })
            };
            (n, store.commit(create(&format!("f{n:02}"), value)).await)
        }));
    }
    let mut revisions = BTreeSet::new();
    for task in tasks {
        let (n, outcome) = task.await.expect("task");
        if n == POISONED {
            match outcome {
                Err(StoreError::Backend { message, .. }) => {
                    assert!(message.contains("PostgreSQL"), "{message}");
                }
                other => panic!("the poisoned change set answered {other:?}"),
            }
        } else {
            let revision = outcome.unwrap_or_else(|e| panic!("commit {n} failed: {e}"));
            assert!(
                revisions.insert(revision),
                "revision {revision} given twice"
            );
        }
    }
    assert!(
        store
            .get(&Key::new(Collection::Features, format!("f{POISONED:02}")))
            .await
            .unwrap()
            .is_none()
    );
    // The revisions the refused batch took before it was rolled back are lost (a gap in
    // the numbers); the store's revision is the last commit's all the same.
    let committed = COMMITS as u64 - 1;
    assert_eq!(revisions.len() as u64, committed);
    assert_eq!(
        store.revision().await.unwrap(),
        *revisions.last().expect("revisions")
    );
    let events = store.events(0, 1_000).await.unwrap();
    assert_eq!(events.len() as u64, committed);
    // One event per commit, carrying that commit's revision.
    let event_revisions: BTreeSet<Revision> = events.iter().map(|e| e.revision).collect();
    assert_eq!(event_revisions, revisions);
    assert!(
        events
            .iter()
            .all(|e| e.event.feature_name.as_deref() != Some(&format!("f{POISONED:02}")))
    );
}

/// Every change set of a batch commits under the locks of its keys, not only the first one:
/// while another session holds the lock of a key that the fourth change set of a batch
/// writes, nothing of the batch commits; once that session lets go, all of it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_waits_for_the_lock_of_a_key_of_any_of_its_change_sets() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = Arc::new(schema.connect(8).await);
    let (holder, watcher) = (admin(&url).await, admin(&url).await);
    // The lock the store takes on a feature's key (`lock_ids.rs`), held here meanwhile.
    let lock = |function: &str, id: &str| {
        format!(
            "SELECT {function}(hashtextextended($1 || chr(31) || 'features' || chr(31) || '{id}', 0))"
        )
    };
    for id in ["slot-a", "slot-b", "held"] {
        holder
            .execute(&lock("pg_advisory_lock", id), &[&schema.name])
            .await
            .unwrap();
    }
    let spawn = |id: &'static str| {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.commit(create(id, json!({ "name": id }))).await })
    };
    // Both of the store's transaction slots wait for a key held here ...
    let slots = [spawn("slot-a"), spawn("slot-b")];
    let waiting = |sessions: i64| {
        let (watcher, schema) = (&watcher, &schema.name);
        async move {
            for _ in 0..3000 {
                let row = watcher
                    .query_one(
                        "SELECT count(*) FROM pg_stat_activity \
                         WHERE application_name = $1 AND wait_event_type = 'Lock'",
                        &[schema],
                    )
                    .await
                    .unwrap();
                if row.get::<_, i64>(0) == sessions {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            panic!("{sessions} sessions of the store never waited for a lock together");
        }
    };
    waiting(2).await;
    // ... so these six queue up, and go to the database together once a slot is free; the
    // first three queue before the others, so `held` is not the batch's first.
    let first = ["q1", "q2", "q3"].map(spawn);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let then = ["held", "q5", "q6"].map(spawn);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for id in ["slot-a", "slot-b"] {
        holder
            .execute(&lock("pg_advisory_unlock", id), &[&schema.name])
            .await
            .unwrap();
    }
    for slot in slots {
        slot.await.unwrap().expect("the slot's commit");
    }
    // The batch waits for `held`, its fourth change set's key: none of it is committed.
    waiting(1).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for id in ["q1", "q2", "q3", "held", "q5", "q6"] {
        let key = Key::new(Collection::Features, id);
        assert_eq!(
            store.get(&key).await.unwrap(),
            None,
            "{id} committed under a held lock"
        );
    }
    holder
        .execute(&lock("pg_advisory_unlock", "held"), &[&schema.name])
        .await
        .unwrap();
    for commit in first.into_iter().chain(then) {
        commit
            .await
            .unwrap()
            .expect("committed once the lock is free");
    }
    // The six were one transaction: the scenario tested what it says.
    let client = admin(&url).await;
    let row = client
        .query_one(
            &format!(
                "SELECT count(DISTINCT xmin::text) FROM \"{}\".records \
                 WHERE collection = 'features' AND id = ANY($1)",
                schema.name
            ),
            &[&vec!["q1", "q2", "q3", "held", "q5", "q6"]],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, i64>(0), 1);
}
