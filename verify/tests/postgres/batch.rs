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
