//! Power-loss and failure tests of the file store over the simulated disk (`sim.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::json;

use super::sim::{SimDisk, Unsynced};
use super::{FileStore, Options};
use crate::store::{ChangeSet, Collection, EventQuery, Key, NewEvent, Revision, Store, StoreError};

fn options(compact_after_bytes: u64) -> Options {
    Options {
        durable: true,
        compact_after_bytes,
        preallocate_bytes: 96,
    }
}

fn key(i: u64) -> Key {
    Key::new(Collection::Features, format!("f{i:04}"))
}

fn put_with_event(i: u64) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key(i), Revision::ABSENT)
        .put(
            key(i),
            json!({ "i": i, "pad": "x".repeat((i % 7 * 40) as usize) }),
        )
        .event(NewEvent {
            event_type: "put".to_owned(),
            created_by: "sim".to_owned(),
            created_at: chrono::Utc::now(),
            project: None,
            feature_name: Some(format!("f{i:04}")),
            environment: None,
            data: Some(json!({ "i": i }).into()),
            pre_data: None,
            created_by_user_id: None,
            tags: None,
        });
    changes
}

/// What a store opened on a crashed disk must hold: every acknowledged commit, and nothing
/// but whole commits (each present key with its value and exactly one event, in revision
/// order).
async fn check_crashed(store: &FileStore, acknowledged: &BTreeMap<u64, Revision>, at: &str) {
    let revision = store.revision().await.unwrap();
    for acked_at in acknowledged.values() {
        assert!(
            *acked_at <= revision,
            "{at}: acknowledged commit {acked_at} lost (store at {revision})"
        );
    }
    let listing = store.list(Collection::Features, "").await.unwrap();
    let events = store.events(0, usize::MAX).await.unwrap();
    assert_eq!(listing.records.len() as u64, revision.0, "{at}");
    assert_eq!(events.len() as u64, revision.0, "{at}");
    for (event, id) in events.iter().zip(1..) {
        assert_eq!(event.id, id, "{at}");
        assert_eq!(event.revision, Revision(id), "{at}");
        let feature = event.event.feature_name.clone().unwrap();
        let record = listing
            .records
            .iter()
            .find(|(k, _)| *k == feature)
            .unwrap_or_else(|| panic!("{at}: event of {feature} without its record"));
        assert_eq!(record.1.revision, event.revision, "{at}");
        let i: u64 = feature[1..].parse().unwrap();
        assert_eq!(record.1.value.to_value().unwrap()["i"], json!(i), "{at}");
    }
    // The event index, rebuilt from what survived, agrees with the log.
    let page = store
        .query_events(&EventQuery::newest(usize::MAX))
        .await
        .unwrap();
    assert_eq!(page.total, revision.0, "{at}");
    assert!(page.events.iter().rev().eq(events.iter()), "{at}");
    if let Some(last) = events.last() {
        let feature = last.event.feature_name.clone().unwrap();
        let page = store
            .query_events(&EventQuery::newest(5).feature(feature))
            .await
            .unwrap();
        assert_eq!(page.total, 1, "{at}");
        assert_eq!(page.events, vec![last.clone()], "{at}");
    }
}

/// The commits acknowledged within the first `ops` disk operations (each recorded with the
/// operation count at its acknowledgement), by key number.
fn acknowledged_by(acknowledged: &[(usize, u64, Revision)], ops: usize) -> BTreeMap<u64, Revision> {
    acknowledged
        .iter()
        .filter(|(at, _, _)| *at <= ops)
        .map(|(_, i, revision)| (*i, *revision))
        .collect()
}

/// Sixteen tasks commit concurrently over a simulated disk with a small rotation threshold
/// (so segments rotate and snapshots are written meanwhile). Then the disk is crashed after
/// every recorded operation, with the unsynced bytes lost, kept in part, or damaged: every
/// crashed disk opens, holds every commit acknowledged before the crash and only whole
/// commits, and the store carries on from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_power_loss_at_any_point_keeps_every_acknowledged_commit() {
    let disk = Arc::new(SimDisk::new());
    let store = Arc::new(FileStore::open_on(disk.clone(), options(2_048)).unwrap());
    let tasks = (0..16u64).map(|task| {
        let store = Arc::clone(&store);
        let disk = Arc::clone(&disk);
        tokio::spawn(async move {
            let mut acked = Vec::new();
            for n in 0..8u64 {
                let i = task * 8 + n;
                let revision = store.commit(put_with_event(i)).await.unwrap();
                // Everything acknowledged is durable in the operations recorded so far.
                acked.push((disk.ops(), i, revision));
            }
            acked
        })
    });
    let mut acknowledged: Vec<(usize, u64, Revision)> = Vec::new();
    for task in tasks {
        acknowledged.extend(task.await.unwrap());
    }
    let stats = store.stats();
    assert_eq!(stats.commits, 128);
    assert!(stats.segments_created >= 2, "{stats:?}");
    drop(store);

    let total = disk.ops();
    for ops in 0..=total {
        let acked = acknowledged_by(&acknowledged, ops);
        for unsynced in [
            Unsynced::Lost,
            Unsynced::Kept(usize::MAX),
            Unsynced::Kept(37),
            Unsynced::Garbage(90),
            // Pages written back out of order: every other piece, all but the first.
            Unsynced::Scattered(0xAAAA_AAAA_AAAA_AAAA),
            Unsynced::Scattered(!1),
        ] {
            let at = format!("crash after {ops} of {total} operations, {unsynced:?}");
            let crashed = Arc::new(disk.crash_after(ops, unsynced));
            let store = FileStore::open_on(crashed.clone(), options(2_048))
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            check_crashed(&store, &acked, &at).await;
            // Only the last ops of the sample are reopened twice: it is slow.
            if ops + 3 >= total {
                let next = store.revision().await.unwrap().next();
                let mut changes = ChangeSet::new();
                changes.put(key(9_999), json!({ "i": 9_999 }));
                assert_eq!(store.commit(changes).await.unwrap(), next, "{at}");
                drop(store);
                let store = FileStore::open_on(crashed, options(2_048)).unwrap();
                assert_eq!(store.revision().await.unwrap(), next, "{at}");
            }
        }
    }
}

/// A lone writer on a multi-threaded runtime writes its own commits (no hand-off to the
/// writer thread), segments rotating and snapshots being written meanwhile; a crash after any
/// operation keeps every acknowledged commit, whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_writer_writes_inline_and_loses_nothing_in_a_power_loss() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(2_048)).unwrap();
    let mut acknowledged = Vec::new();
    for i in 0..40u64 {
        let revision = store.commit(put_with_event(i)).await.unwrap();
        acknowledged.push((disk.ops(), i, revision));
    }
    let stats = store.stats();
    assert_eq!(stats.commits, 40);
    assert_eq!(stats.inline_batches, 40, "{stats:?}");
    assert!(stats.segments_created >= 2, "{stats:?}");
    drop(store);
    let total = disk.ops();
    for ops in 0..=total {
        let acked = acknowledged_by(&acknowledged, ops);
        for unsynced in [Unsynced::Lost, Unsynced::Kept(37), Unsynced::Garbage(90)] {
            let at = format!("crash after {ops} of {total} operations, {unsynced:?}");
            let crashed = Arc::new(disk.crash_after(ops, unsynced));
            let store =
                FileStore::open_on(crashed, options(2_048)).unwrap_or_else(|e| panic!("{at}: {e}"));
            check_crashed(&store, &acked, &at).await;
        }
    }
}

/// Without a multi-threaded runtime to hand its other tasks to, a lone commit is the writer
/// thread's: nothing is written inline.
#[tokio::test]
async fn a_current_thread_runtime_leaves_every_write_to_the_thread() {
    let store = FileStore::open_on(Arc::new(SimDisk::new()), options(u64::MAX)).unwrap();
    for i in 0..5u64 {
        store.commit(put_with_event(i)).await.unwrap();
    }
    let stats = store.stats();
    assert_eq!((stats.commits, stats.inline_batches), (5, 0), "{stats:?}");
}

/// A lone commit whose task drops it before waiting (so it never writes it inline) is
/// written by the writer thread, in revision order with the commit accepted after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_commit_dropped_unawaited_is_written_by_the_thread() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap();
    let first = store.submit(put_with_event(1)).await.unwrap();
    let second = store.submit(put_with_event(2)).await.unwrap();
    assert_eq!(
        (first.revision(), second.revision()),
        (Revision(1), Revision(2))
    );
    drop(first);
    assert_eq!(second.durable().await.unwrap(), Revision(2));
    // Durable in order: the first is readable now too.
    assert!(store.get(&key(1)).await.unwrap().is_some());
    let third = store.submit(put_with_event(3)).await.unwrap();
    drop(third);
    // Nothing waits for the third; closing the store writes it.
    drop(store);
    let crashed = Arc::new(disk.crash_after(disk.ops(), Unsynced::Lost));
    let store = FileStore::open_on(crashed, options(u64::MAX)).unwrap();
    check_crashed(
        &store,
        &BTreeMap::from([(1, Revision(1)), (2, Revision(2)), (3, Revision(3))]),
        "after dropped commits",
    )
    .await;
}

/// A batch of more than one commit ends inline writes until the writer has been lone for
/// `LONE_STREAK` batches in a row: a commit left unawaited, then another, make the writer
/// thread write both as one batch; the next `LONE_STREAK` commits go to the thread, and
/// inline writes resume after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_two_ends_inline_writes_until_a_streak_of_lone_batches() {
    let store = FileStore::open_on(Arc::new(SimDisk::new()), options(u64::MAX)).unwrap();
    let first = store.submit(put_with_event(1)).await.unwrap();
    let second = store.submit(put_with_event(2)).await.unwrap();
    second.durable().await.unwrap();
    drop(first);
    let stats = store.stats();
    assert_eq!((stats.batches, stats.inline_batches), (1, 0), "{stats:?}");
    for i in 0..super::writer::LONE_STREAK as u64 {
        store.commit(put_with_event(10 + i)).await.unwrap();
    }
    assert_eq!(store.stats().inline_batches, 0, "{:?}", store.stats());
    // Inline writes resume after the streak. Not necessarily at the very next commit: the
    // dropped first commit may leave the writer thread one wake-up that counts a batch of its
    // own, restarting the streak once (seen under load, in about one run of three).
    for i in 0..2 * super::writer::LONE_STREAK as u64 {
        store.commit(put_with_event(99 + i)).await.unwrap();
        if store.stats().inline_batches > 0 {
            break;
        }
    }
    assert!(store.stats().inline_batches >= 1, "{:?}", store.stats());
}

/// A failed sync fails the commits of its batch and every later one; readers never see the
/// failed commit; the disk, reopened, holds whatever reached it, whole.
#[tokio::test]
async fn a_failed_sync_fails_the_commit_and_every_later_one() {
    a_failed_sync_fails_every_later_commit().await;
}

/// The same when the lone commit whose sync fails is written by its own task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_inline_sync_fails_the_commit_and_every_later_one() {
    a_failed_sync_fails_every_later_commit().await;
}

async fn a_failed_sync_fails_every_later_commit() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap();
    store.commit(put_with_event(1)).await.unwrap();
    disk.fail_next_sync();
    let error = store.commit(put_with_event(2)).await.unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert_eq!(store.get(&key(2)).await.unwrap(), None);
    assert_eq!(store.revision().await.unwrap(), Revision(1));
    // The error says the store stopped, and why.
    let error = store.commit(put_with_event(3)).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("until it is reopened") && message.contains("sync"),
        "{message}"
    );
    assert!(store.compact().await.is_err());
    // The stop holds once the disk is fine again.
    assert!(store.commit(put_with_event(4)).await.is_err());
    drop(store);
    for unsynced in [Unsynced::Lost, Unsynced::Kept(usize::MAX)] {
        let crashed = Arc::new(disk.crash_after(disk.ops(), unsynced));
        let store = FileStore::open_on(crashed, options(u64::MAX)).unwrap();
        let revision = store.revision().await.unwrap();
        assert!(
            revision >= Revision(1) && revision <= Revision(2),
            "{revision}"
        );
        check_crashed(
            &store,
            &BTreeMap::from([(1, Revision(1))]),
            "after a failed sync",
        )
        .await;
    }
}

/// Many writers on one record, each deciding on the accepted state: none fights (no
/// conflict), every update lands once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_deciding_on_the_accepted_state_lose_nothing() {
    let disk = Arc::new(SimDisk::new());
    let store = Arc::new(FileStore::open_on(disk, options(u64::MAX)).unwrap());
    let counter = Key::new(Collection::Sequences, "counter");
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    let tasks = (0..16).map(|_| {
        let (store, counter, lock) = (Arc::clone(&store), counter.clone(), Arc::clone(&lock));
        tokio::spawn(async move {
            for _ in 0..50 {
                let turn = lock.lock().await;
                let view = store.decision_view().await.unwrap();
                let current = view.get(&counter).await.unwrap();
                let (n, revision) = current.map_or((0, Revision::ABSENT), |v| {
                    (v.value.to_value().unwrap().as_u64().unwrap(), v.revision)
                });
                let mut changes = ChangeSet::new();
                changes
                    .expect_revision(counter.clone(), revision)
                    .put(counter.clone(), json!(n + 1));
                let accepted = store.submit(changes).await.expect("no conflict");
                drop(turn);
                accepted.durable().await.unwrap();
            }
        })
    });
    for task in tasks {
        task.await.unwrap();
    }
    let value = store.get(&counter).await.unwrap().unwrap();
    assert_eq!(value.value, json!(800));
    assert_eq!(store.stats().commits, 800);
    assert_eq!(store.events(0, 10).await.unwrap().len(), 0);
}

/// The disk fills up: a commit whose room cannot be made is refused with `OutOfSpace` and
/// changes nothing (reads, the accepted state and the event log stay at the last durable
/// commit); the store keeps refusing while the disk is full, and takes commits again as soon
/// as there is space, without a reopen. Every crash image holds every acknowledged commit.
#[tokio::test]
async fn a_full_disk_refuses_commits_until_space_returns() {
    a_full_disk_refuses_commits_until_space_returns_with().await;
}

/// The same when the lone commits are written by their own tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_inline_commits_until_space_returns() {
    a_full_disk_refuses_commits_until_space_returns_with().await;
}

async fn a_full_disk_refuses_commits_until_space_returns_with() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap();
    let mut acknowledged = BTreeMap::new();
    acknowledged.insert(1, store.commit(put_with_event(1)).await.unwrap());
    // Not even the next record fits.
    disk.set_capacity(Some(disk.used() + 8));
    for attempt in 0..3 {
        let error = store.commit(put_with_event(2)).await.unwrap_err();
        assert!(error.is_out_of_space(), "attempt {attempt}: {error}");
        assert!(error.to_string().contains("the disk is full"), "{error}");
    }
    assert_eq!(store.get(&key(2)).await.unwrap(), None);
    assert_eq!(store.revision().await.unwrap(), Revision(1));
    assert_eq!(store.decision_view().await.unwrap().revision(), Revision(1));
    assert_eq!(store.events(0, 10).await.unwrap().len(), 1);
    // Room for what the next batch needs but not for a whole preallocation: the store
    // fills the disk to its last byte before refusing.
    disk.set_capacity(Some(disk.used() + 2_000));
    let mut i = 3;
    loop {
        match store.commit(put_with_event(i)).await {
            Ok(revision) => {
                acknowledged.insert(i, revision);
                i += 1;
            }
            Err(error) => {
                assert!(error.is_out_of_space(), "{error}");
                break;
            }
        }
        assert!(i < 100, "the capacity was never reached");
    }
    assert!(i > 4, "fewer than two commits fitted in 2,000 bytes");
    // Space returns: the next commit goes through, decided on the durable state.
    disk.set_capacity(None);
    let revision = store.commit(put_with_event(2)).await.unwrap();
    assert_eq!(revision, Revision(acknowledged.len() as u64 + 1));
    acknowledged.insert(2, revision);
    acknowledged.insert(i, store.commit(put_with_event(i)).await.unwrap());
    check_crashed(&store, &acknowledged, "after the disk was full").await;
    drop(store);
    for unsynced in [
        Unsynced::Lost,
        Unsynced::Kept(usize::MAX),
        Unsynced::Garbage(7),
    ] {
        let crashed = Arc::new(disk.crash_after(disk.ops(), unsynced));
        let store = FileStore::open_on(crashed, options(u64::MAX)).unwrap();
        check_crashed(&store, &acknowledged, "reopened after the disk was full").await;
    }
}

/// Commits accepted while the disk is full, decided on one another, are all refused: none
/// is written on top of a refused one, and the next commit is decided on the durable state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_queued_behind_a_refused_batch_are_refused_too() {
    let disk = Arc::new(SimDisk::new());
    let store = Arc::new(FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap());
    store.commit(put_with_event(1)).await.unwrap();
    disk.set_capacity(Some(disk.used()));
    let counter = Key::new(Collection::Sequences, "counter");
    // Each accepted on the accepted state of the one before it.
    let mut pending = Vec::new();
    for n in 0..8u64 {
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(
                counter.clone(),
                if n == 0 {
                    Revision::ABSENT
                } else {
                    Revision(n + 1)
                },
            )
            .put(counter.clone(), json!(n));
        match store.submit(changes).await {
            Ok(accepted) => pending.push(accepted),
            // Decided after the refusal rolled the accepted state back.
            Err(error) => assert!(error.is_conflict(), "{error}"),
        }
    }
    for accepted in pending {
        let error = accepted.durable().await.unwrap_err();
        assert!(error.is_out_of_space(), "{error}");
    }
    assert_eq!(store.get(&counter).await.unwrap(), None);
    assert_eq!(store.decision_view().await.unwrap().revision(), Revision(1));
    disk.set_capacity(None);
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(counter.clone(), Revision::ABSENT)
        .put(counter.clone(), json!("after"));
    assert_eq!(store.commit(changes).await.unwrap(), Revision(2));
}

/// A write of a batch that fails (the disk took part of it) stops the store as a failed
/// sync does: what the journal holds is unknown until it is read again. Reopened, the store
/// holds every acknowledged commit and only whole ones.
#[tokio::test]
async fn a_failed_batch_write_stops_the_store_until_it_is_reopened() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap();
    let first = store.commit(put_with_event(1)).await.unwrap();
    disk.fail_next_write();
    let error = store.commit(put_with_event(2)).await.unwrap_err();
    assert!(!error.is_out_of_space(), "{error}");
    assert!(error.to_string().contains("could not write to"), "{error}");
    let error = store.commit(put_with_event(3)).await.unwrap_err();
    assert!(
        error.to_string().contains("until it is reopened"),
        "{error}"
    );
    drop(store);
    for unsynced in [Unsynced::Lost, Unsynced::Kept(usize::MAX)] {
        let crashed = Arc::new(disk.crash_after(disk.ops(), unsynced));
        let store = FileStore::open_on(crashed, options(u64::MAX)).unwrap();
        check_crashed(
            &store,
            &BTreeMap::from([(1, first)]),
            "reopened after a failed write",
        )
        .await;
        store.commit(put_with_event(5)).await.unwrap();
    }
}
