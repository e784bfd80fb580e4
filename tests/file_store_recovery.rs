//! FileStore recovery: torn and damaged journals, crashes during compaction, failed syncs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::store::{Dump, TempDir, dump, feature, put};
use toggle_admin::store::{ChangeSet, FileStore, Revision, Store, StoreError};

/// Journal offsets where each of `n` committed records starts, plus the journal's end.
async fn journal_with_records(dir: &TempDir, n: u64) -> (Vec<u64>, Vec<Dump>) {
    let store = FileStore::open(dir.path()).unwrap();
    let mut offsets = vec![store.stats().journal_bytes];
    let mut dumps = vec![dump(&store).await];
    for i in 1..=n {
        put(
            &store,
            feature(&format!("f{i}")),
            json!({"i": i, "pad": "x".repeat(i as usize * 7)}),
        )
        .await;
        offsets.push(store.stats().journal_bytes);
        dumps.push(dump(&store).await);
    }
    (offsets, dumps)
}

#[tokio::test]
async fn truncating_inside_the_last_record_drops_only_that_record() {
    let dir = TempDir::new("torn-source");
    let (offsets, dumps) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let (last_start, end) = (offsets[4], offsets[5]);
    assert_eq!(original.len() as u64, end);

    let scratch = TempDir::new("torn");
    for cut in last_start..end {
        std::fs::write(scratch.journal(), &original[..cut as usize]).unwrap();
        let store = FileStore::open(scratch.path())
            .unwrap_or_else(|e| panic!("open after cutting at {cut}: {e}"));
        assert_eq!(dump(&store).await, dumps[4], "cut at {cut}");
        let tail = store.recovery().truncated_tail.clone();
        if cut == last_start {
            assert_eq!(tail, None);
        } else {
            let tail = tail.unwrap_or_else(|| panic!("no truncation reported at {cut}"));
            assert_eq!((tail.offset, tail.bytes), (last_start, cut - last_start));
        }
        assert_eq!(
            std::fs::metadata(scratch.journal()).unwrap().len(),
            last_start
        );
        // The store goes on from there, and what it then writes replays.
        assert_eq!(put(&store, feature("after"), json!(1)).await, Revision(5));
        drop(store);
        let store = FileStore::open(scratch.path()).unwrap();
        assert_eq!(store.revision().await.unwrap(), Revision(5));
        assert_eq!(store.recovery().truncated_tail, None);
    }
}

#[tokio::test]
async fn flipping_a_byte_of_the_last_record_drops_only_that_record() {
    let dir = TempDir::new("flip-last-source");
    let (offsets, dumps) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let (last_start, end) = (offsets[4], offsets[5]);

    let scratch = TempDir::new("flip-last");
    for at in last_start..end {
        let mut damaged = original.clone();
        damaged[at as usize] ^= 0xff;
        std::fs::write(scratch.journal(), &damaged).unwrap();
        let store = FileStore::open(scratch.path())
            .unwrap_or_else(|e| panic!("open after flipping byte {at}: {e}"));
        assert_eq!(dump(&store).await, dumps[4], "flipped byte {at}");
        let tail = store.recovery().truncated_tail.clone().unwrap();
        assert_eq!((tail.offset, tail.bytes), (last_start, end - last_start));
    }
}

#[tokio::test]
async fn flipping_a_byte_of_an_earlier_record_fails_open_naming_the_offset() {
    let dir = TempDir::new("flip-early-source");
    let (offsets, _) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();

    let scratch = TempDir::new("flip-early");
    // Every byte of the first and of a middle record.
    for record in [0, 2] {
        let (start, end) = (offsets[record], offsets[record + 1]);
        for at in start..end {
            let mut damaged = original.clone();
            damaged[at as usize] ^= 0xff;
            std::fs::write(scratch.journal(), &damaged).unwrap();
            match FileStore::open(scratch.path()) {
                Err(StoreError::Corrupt { file, offset, .. }) => {
                    assert!(file.contains("journal-"), "{file}");
                    assert_eq!(offset, start, "flipped byte {at}");
                }
                other => panic!("flipped byte {at}: expected Corrupt, got {other:?}"),
            }
            // The damaged journal is left as it was: nothing was cut.
            assert_eq!(std::fs::read(scratch.journal()).unwrap(), damaged);
        }
    }
}

#[tokio::test]
async fn garbage_after_the_last_record_is_a_torn_tail() {
    // A crash can leave zeros (a file extended but not written) after the last record.
    let dir = TempDir::new("zeros");
    let (offsets, dumps) = journal_with_records(&dir, 3).await;
    let mut bytes = std::fs::read(dir.journal()).unwrap();
    bytes.extend_from_slice(&[0; 4096]);
    std::fs::write(dir.journal(), &bytes).unwrap();
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store).await, dumps[3]);
    let tail = store.recovery().truncated_tail.clone().unwrap();
    assert_eq!((tail.offset, tail.bytes), (offsets[3], 4096));
}

/// A crash during compaction leaves a stray `snapshot.tmp`, or (when the rename was not yet
/// durable) the previous snapshot in place beside a journal that goes further: both open to
/// every commit.
#[tokio::test]
async fn a_crash_during_compaction_loses_nothing() {
    let dir = TempDir::new("compaction-crash");
    let store = FileStore::builder(dir.path())
        .compact_after_bytes(u64::MAX)
        .open()
        .unwrap();
    for i in 0..10 {
        put(&store, feature(&format!("early{i}")), json!(i)).await;
    }
    store.compact().await.unwrap();
    let old_snapshot = std::fs::read(dir.path().join("snapshot")).unwrap();
    for i in 0..10 {
        put(&store, feature(&format!("late{i}")), json!(i)).await;
    }
    let mut changes = ChangeSet::new();
    changes.delete(feature("early3"));
    store.commit(changes).await.unwrap();
    store.compact().await.unwrap();
    put(&store, feature("last"), json!(0)).await;
    let before = dump(&store).await;
    drop(store);

    // The newest snapshot, a half-written temp file beside it.
    std::fs::write(dir.path().join("snapshot.tmp"), b"TGLSNAP\0 half").unwrap();
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store).await, before);
    assert!(!dir.path().join("snapshot.tmp").exists());
    drop(store);

    // The previous snapshot back in place, as if the last rename never reached the disk.
    std::fs::write(dir.path().join("snapshot"), &old_snapshot).unwrap();
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(store.recovery().snapshot_revision, Revision(10));
    assert_eq!(dump(&store).await, before);
    // The store carries on, and reopens once more to the same state.
    assert_eq!(put(&store, feature("next"), json!(1)).await, Revision(23));
    let after = dump(&store).await;
    drop(store);
    let store = FileStore::open(dir.path()).unwrap();
    assert_eq!(dump(&store).await, after);
}

/// A damaged snapshot is never a torn write (it is only ever renamed into place whole):
/// open fails with `Corrupt` naming the file and where the damage is.
#[tokio::test]
async fn a_damaged_snapshot_fails_open_naming_the_file_and_offset() {
    let dir = TempDir::new("snapshot-damage");
    let store = FileStore::open(dir.path()).unwrap();
    for i in 0..5 {
        put(&store, feature(&format!("f{i}")), json!(i)).await;
    }
    store.compact().await.unwrap();
    drop(store);
    let path = dir.path().join("snapshot");
    let original = std::fs::read(&path).unwrap();
    for (at, expected_offset) in [(3, 0), (14, 0), (original.len() - 2, 36)] {
        let mut damaged = original.clone();
        damaged[at] ^= 0x40;
        std::fs::write(&path, &damaged).unwrap();
        match FileStore::open(dir.path()) {
            Err(StoreError::Corrupt { file, offset, .. }) => {
                assert!(file.ends_with("snapshot"), "{file}");
                assert_eq!(offset, expected_offset, "flipped byte {at}");
            }
            other => panic!("flipped byte {at}: expected Corrupt, got {other:?}"),
        }
    }
}
