//! FileStore: conformance, reopen, locking, format versions, replay of long histories,
//! per-commit cost, group commit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use test_support::store::{Dump, TempDir, dump, event, feature, put};
use toggle_admin::store::{ChangeSet, Collection, FileStore, Key, Revision, Store, StoreError};

#[cfg(feature = "conformance")]
mod conformance {
    use super::TempDir;
    use toggle_admin::store::{FileStore, conformance};

    async fn run(durable: bool) {
        let dirs = std::sync::Mutex::new(Vec::new());
        conformance::run_all(|| {
            let dir = TempDir::new(if durable { "conf-durable" } else { "conf" });
            let store = FileStore::builder(dir.path())
                .durable(durable)
                .open()
                .unwrap();
            dirs.lock().unwrap().push(dir);
            async move { store }
        })
        .await
        .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn durable_file_store_passes_the_conformance_suite() {
        run(true).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn non_durable_file_store_passes_the_conformance_suite() {
        run(false).await;
    }

    /// The suite again on stores that compact after every few commits, so that snapshots
    /// and fresh journals are part of every scenario.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn constantly_compacting_file_store_passes_the_conformance_suite() {
        let dirs = std::sync::Mutex::new(Vec::new());
        conformance::run_all(|| {
            let dir = TempDir::new("conf-compacting");
            let store = FileStore::builder(dir.path())
                .durable(false)
                .compact_after_bytes(512)
                .open()
                .unwrap();
            dirs.lock().unwrap().push(dir);
            async move { store }
        })
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn committed_data_survives_reopen() {
    let dir = TempDir::new("reopen");
    let before = {
        let store = FileStore::open(dir.path()).unwrap();
        put(&store, feature("a"), json!({"n": 1})).await;
        put(&store, feature("b"), json!({"n": 2})).await;
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(feature("a"), Revision(1))
            .delete(feature("a"));
        store.commit(changes).await.unwrap();
        dump(&store).await
    };
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store).await, before);
    assert_eq!(store.recovery().records_replayed, 3);
    assert_eq!(store.recovery().truncated_tail, None);
    assert_eq!(put(&store, feature("c"), json!(3)).await, Revision(4));
}

#[tokio::test]
async fn the_journal_is_compacted_past_its_threshold() {
    let dir = TempDir::new("auto-compaction");
    let before = {
        let store = FileStore::builder(dir.path())
            .durable(false)
            .compact_after_bytes(4096)
            .open()
            .unwrap();
        for i in 0..300 {
            put(&store, feature(&format!("f{}", i % 40)), json!(i)).await;
        }
        let stats = store.stats();
        assert!(stats.compactions >= 5, "{stats:?}");
        assert!(stats.journal_bytes <= 4096 + 1024, "{stats:?}");
        dump(&store).await
    };
    let store = FileStore::open(dir.path()).unwrap();
    assert!(store.recovery().snapshot_revision > Revision(250));
    assert_eq!(dump(&store).await, before);
}

#[tokio::test]
async fn a_second_open_of_a_locked_directory_fails_with_locked() {
    let dir = TempDir::new("lock");
    let store = FileStore::open(dir.path()).unwrap();
    match FileStore::open(dir.path()) {
        Err(StoreError::Locked { path }) => assert_eq!(path, dir.path().display().to_string()),
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(store);
    FileStore::open(dir.path()).unwrap();
}

#[tokio::test]
async fn a_newer_format_is_refused_with_the_file_named() {
    let dir = TempDir::new("format");
    {
        let store = FileStore::open(dir.path()).unwrap();
        put(&store, feature("a"), json!(1)).await;
        store.compact().await.unwrap();
        put(&store, feature("b"), json!(2)).await;
    }
    // The compaction started a second segment after revision 1.
    for (name, supported) in [
        (format!("journal-{:020}", 0), 2),
        (format!("journal-{:020}", 1), 2),
        ("snapshot".to_owned(), 2),
    ] {
        let name = name.as_str();
        let path = dir.path().join(name);
        let original = std::fs::read(&path).unwrap();
        let mut newer = original.clone();
        newer[8..12].copy_from_slice(&7u32.to_le_bytes());
        std::fs::write(&path, &newer).unwrap();
        match FileStore::open(dir.path()) {
            Err(StoreError::UnsupportedFormat {
                file,
                found,
                supported: found_supported,
            }) => {
                assert!(file.ends_with(name), "{file}");
                assert_eq!((found, found_supported), (7, supported));
            }
            other => panic!("{name}: expected UnsupportedFormat, got {other:?}"),
        }
        let mut foreign = original.clone();
        foreign[..4].copy_from_slice(b"PK\x03\x04");
        std::fs::write(&path, &foreign).unwrap();
        match FileStore::open(dir.path()) {
            Err(StoreError::Corrupt { file, offset, .. }) => {
                assert!(file.ends_with(name), "{file}");
                assert_eq!(offset, 0);
            }
            other => panic!("{name}: expected Corrupt, got {other:?}"),
        }
        std::fs::write(&path, &original).unwrap();
    }
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(store.revision().await.unwrap(), Revision(2));
}

/// A varied history of `n` commits: puts in several collections, deletes, events, floats.
async fn varied_history(store: &dyn Store, n: u64) {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for i in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let collection = Collection::ALL[(seed % 5) as usize];
        let key = Key::new(collection, format!("r{}", seed % 500));
        let mut changes = ChangeSet::new();
        if seed.is_multiple_of(7) {
            changes.delete(key);
        } else {
            // Floats with full precision, to show they come back bit for bit.
            let float = f64::from_bits((seed >> 12) | 0x3ff0_0000_0000_0000) * (i as f64 + 0.1);
            changes.put(
                key,
                json!({"i": i, "float": float, "text": format!("v{seed:x}")}),
            );
        }
        if !seed.is_multiple_of(3) {
            changes.event(event("changed", json!({"i": i})));
        }
        store.commit(changes).await.unwrap();
    }
}

#[tokio::test]
async fn reopening_after_ten_thousand_commits_replays_to_an_identical_state() {
    for compact_after_bytes in [u64::MAX, 256 * 1024] {
        let dir = TempDir::new("ten-thousand");
        let before = {
            let store = FileStore::builder(dir.path())
                .durable(false)
                .compact_after_bytes(compact_after_bytes)
                .open()
                .unwrap();
            varied_history(&store, 10_000).await;
            dump(&store).await
        };
        assert_eq!(before.revision, Revision(10_000));
        let store = FileStore::open(dir.path()).unwrap();
        let recovery = store.recovery();
        assert_eq!(
            recovery.snapshot_revision.0 + recovery.records_replayed,
            10_000
        );
        assert_eq!(dump(&store).await, before);
    }
}

#[tokio::test]
async fn a_commit_writes_the_same_bytes_however_much_the_store_holds() {
    let big = TempDir::new("cost-big");
    let store = FileStore::builder(big.path())
        .compact_after_bytes(u64::MAX)
        .open()
        .unwrap();
    for batch in 0..20 {
        let mut changes = ChangeSet::new();
        for i in 0..250 {
            changes.put(
                Key::new(Collection::FeatureEnvironments, format!("b{batch}-{i}")),
                json!({"payload": "y".repeat(1000)}),
            );
        }
        store.commit(changes).await.unwrap();
    }
    store.compact().await.unwrap();
    let snapshot = big.path().join("snapshot");
    let snapshot_before = std::fs::metadata(&snapshot).unwrap();
    assert!(snapshot_before.len() > 5_000_000);

    let small = TempDir::new("cost-small");
    let empty = FileStore::open(small.path()).unwrap();
    for i in 0..50 {
        let change = || {
            let mut changes = ChangeSet::new();
            changes.put(feature(&format!("f{i}")), json!({"enabled": true}));
            changes
        };
        let (big_before, small_before) = (store.stats().journal_bytes, empty.stats().journal_bytes);
        store.commit(change()).await.unwrap();
        empty.commit(change()).await.unwrap();
        let big_cost = store.stats().journal_bytes - big_before;
        let small_cost = empty.stats().journal_bytes - small_before;
        assert!(big_cost < 200, "{big_cost} bytes for one small commit");
        // Revisions differ in value, not in width: the record is the same size.
        assert_eq!(big_cost, small_cost);
    }
    let snapshot_after = std::fs::metadata(&snapshot).unwrap();
    assert_eq!(snapshot_after.len(), snapshot_before.len());
    assert_eq!(
        snapshot_after.modified().unwrap(),
        snapshot_before.modified().unwrap()
    );
    assert_eq!(store.stats().compactions, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn concurrent_committers_lose_nothing_and_share_syncs() {
    const WRITERS: u64 = 16;
    const EACH: u64 = 20;
    let dir = TempDir::new("group-commit");
    let store = Arc::new(FileStore::open(dir.path()).unwrap());
    let counter = Key::new(Collection::Sequences, "counter");
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, counter) = (Arc::clone(&store), counter.clone());
            tokio::spawn(async move {
                for i in 0..EACH {
                    // Read-modify-write of the one shared record, retried on conflict.
                    loop {
                        let current = store.get(&counter).await.unwrap();
                        let (n, revision) = current.map_or((0, Revision::ABSENT), |v| {
                            (v.value.to_value().unwrap().as_u64().unwrap(), v.revision)
                        });
                        let mut changes = ChangeSet::new();
                        changes
                            .expect_revision(counter.clone(), revision)
                            .put(counter.clone(), json!(n + 1))
                            .event(event("increment", json!(n + 1)));
                        match store.commit(changes).await {
                            Ok(_) => break,
                            Err(e) if e.is_conflict() => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    // And a write of the writer's own, which needs no retry.
                    put(&*store, feature(&format!("w{w}-{i}")), json!(i)).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let total = WRITERS * EACH;
    let expect = |d: &Dump| {
        let counter = d.listings[Collection::Sequences as usize].1.records[0]
            .1
            .clone();
        assert_eq!(counter.value, json!(total));
        assert_eq!(
            d.listings[Collection::Features as usize].1.records.len() as u64,
            total
        );
        assert_eq!(d.revision.0, 2 * total);
        let increments: Vec<_> = d
            .events
            .iter()
            .filter(|e| e.event.event_type == "increment")
            .map(|e| e.event.data.clone().unwrap())
            .collect();
        assert_eq!(
            increments,
            (1..=total).map(|n| json!(n)).collect::<Vec<_>>()
        );
    };
    let before = dump(&*store).await;
    expect(&before);
    let stats = store.stats();
    eprintln!("{stats:?}");
    assert_eq!(stats.commits, 2 * total);
    assert!(
        stats.syncs < stats.commits,
        "no commit shared a sync: {stats:?}"
    );
    drop(store);
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store).await, before);
}

#[tokio::test]
async fn non_durable_commits_never_sync() {
    let dir = TempDir::new("non-durable");
    let store = FileStore::builder(dir.path())
        .durable(false)
        .open()
        .unwrap();
    for i in 0..20 {
        put(&store, feature(&format!("f{i}")), json!(i)).await;
    }
    let stats = store.stats();
    assert_eq!((stats.commits, stats.syncs), (20, 0));
}
