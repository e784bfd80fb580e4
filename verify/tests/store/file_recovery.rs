//! FileStore recovery: torn and damaged journals, crashes during compaction, failed syncs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use test_support::store::{Dump, TempDir, dump, feature, put};
use toggle_admin::store::{ChangeSet, FileStore, Revision, Store, StoreError};

/// A journal of `n` commits, each its own batch (a record and its batch end): where each
/// batch starts, plus where the last ends; and the store's contents after each commit. The
/// file goes on with zeros (space made ready) after the last batch.
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

/// The length of a batch end: a record header without payload.
const BATCH_END: u64 = 20;

/// What opening the journal `image` must find: the commits before `offset` and a torn tail
/// from there (or, with `offset` None, no damage and `commits` commits).
async fn assert_opens_to(
    scratch: &TempDir,
    image: &[u8],
    dumps: &[Dump],
    commits: usize,
    torn_at: Option<u64>,
    what: &str,
) {
    std::fs::write(scratch.journal(), image).unwrap();
    let store =
        FileStore::open(scratch.path()).unwrap_or_else(|e| panic!("open after {what}: {e}"));
    assert_eq!(dump(&store).await, dumps[commits], "{what}");
    let tail = store.recovery().truncated_tail.clone();
    match torn_at {
        None => assert_eq!(tail, None, "{what}"),
        Some(offset) => {
            let tail = tail.unwrap_or_else(|| panic!("no truncation reported after {what}"));
            assert_eq!(
                (tail.offset, tail.bytes),
                (offset, image.len() as u64 - offset),
                "{what}"
            );
            // The torn end is cut off.
            assert_eq!(
                std::fs::metadata(scratch.journal()).unwrap().len(),
                offset,
                "{what}"
            );
        }
    }
    // The store goes on from there, and what it then writes replays.
    let next = Revision(commits as u64 + 1);
    assert_eq!(
        put(&store, feature("after"), json!(1)).await,
        next,
        "{what}"
    );
    drop(store);
    let store = FileStore::open(scratch.path()).unwrap();
    assert_eq!(store.revision().await.unwrap(), next, "{what}");
    assert_eq!(store.recovery().truncated_tail, None, "{what}");
}

#[tokio::test]
async fn cutting_the_last_batch_anywhere_drops_at_most_its_commit() {
    let dir = TempDir::new("torn-source");
    let (offsets, dumps) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let (last_start, end) = (offsets[4], offsets[5]);
    let record_end = end - BATCH_END;
    assert!(
        original.len() as u64 > end,
        "the journal has room made ready"
    );
    assert!(original[end as usize..].iter().all(|&b| b == 0));

    let scratch = TempDir::new("torn");
    for cut in last_start..end {
        // The file cut there (a crash before the zeros were written), and the file whole
        // with zeros from there (a crash before the batch's later pages were written).
        let mut zeroed = original.clone();
        zeroed[cut as usize..].fill(0);
        for (image, how) in [(&original[..cut as usize], "cut"), (&zeroed[..], "zeroed")] {
            let what = format!("{how} at {cut}");
            let (commits, torn_at) = if cut < record_end {
                let torn = image[last_start as usize..].iter().any(|&b| b != 0);
                (4, torn.then_some(last_start))
            } else {
                // The record is whole, its batch end is not: the commit stays (it was never
                // acknowledged, so either outcome is right).
                let torn = image[record_end as usize..].iter().any(|&b| b != 0);
                (5, torn.then_some(record_end))
            };
            assert_opens_to(&scratch, image, &dumps, commits, torn_at, &what).await;
        }
    }
}

#[tokio::test]
async fn flipping_a_byte_of_the_last_batch_drops_at_most_its_commit() {
    let dir = TempDir::new("flip-last-source");
    let (offsets, dumps) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let (last_start, end) = (offsets[4], offsets[5]);
    let record_end = end - BATCH_END;

    let scratch = TempDir::new("flip-last");
    for at in last_start..end {
        let mut damaged = original.clone();
        damaged[at as usize] ^= 0xff;
        let (commits, torn_at) = if at < record_end {
            (4, last_start)
        } else {
            (5, record_end)
        };
        let what = format!("flipping byte {at}");
        assert_opens_to(&scratch, &damaged, &dumps, commits, Some(torn_at), &what).await;
    }
}

/// A crash can write a batch's later pages back before its earlier ones: the last batch's
/// end on disk, its first bytes not. That batch is dropped and the store opens.
#[tokio::test]
async fn a_last_batch_written_back_out_of_order_is_dropped() {
    let dir = TempDir::new("scattered-source");
    let (offsets, dumps) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let (last_start, end) = (offsets[4] as usize, offsets[5] as usize);

    let scratch = TempDir::new("scattered");
    // Its first bytes, a few bytes of its header, all but its last bytes (its batch end).
    let len = end - last_start;
    for lost in [0..16, 4..8, 0..len - 30].map(|r| last_start + r.start..last_start + r.end) {
        let mut image = original.clone();
        image[lost.clone()].fill(0);
        let what = format!("bytes {lost:?} lost");
        assert_opens_to(&scratch, &image, &dumps, 4, Some(offsets[4]), &what).await;
    }
}

#[tokio::test]
async fn flipping_a_byte_of_an_earlier_batch_fails_open_naming_the_offset() {
    let dir = TempDir::new("flip-early-source");
    let (offsets, _) = journal_with_records(&dir, 5).await;
    let original = std::fs::read(dir.journal()).unwrap();

    let scratch = TempDir::new("flip-early");
    // Every byte of the first and of a middle batch: later batches show it was synced.
    for batch in [0, 2] {
        let (start, end) = (offsets[batch], offsets[batch + 1]);
        for at in start..end {
            let mut damaged = original.clone();
            damaged[at as usize] ^= 0xff;
            std::fs::write(scratch.journal(), &damaged).unwrap();
            // The record, or else its batch end, is where the damage is reported.
            let damaged_at = if at < end - BATCH_END {
                start
            } else {
                end - BATCH_END
            };
            match FileStore::open(scratch.path()) {
                Err(StoreError::Corrupt { file, offset, .. }) => {
                    assert!(file.contains("journal-"), "{file}");
                    assert_eq!(offset, damaged_at, "flipped byte {at}");
                }
                other => panic!("flipped byte {at}: expected Corrupt, got {other:?}"),
            }
            // The damaged journal is left as it was: nothing was cut.
            assert_eq!(std::fs::read(scratch.journal()).unwrap(), damaged);
        }
    }
}

#[tokio::test]
async fn zeros_after_the_last_batch_are_room_and_garbage_a_torn_tail() {
    let dir = TempDir::new("zeros-source");
    let (offsets, dumps) = journal_with_records(&dir, 3).await;
    let original = std::fs::read(dir.journal()).unwrap();
    let scratch = TempDir::new("zeros");
    // More zeros than were made ready: still no damage.
    let mut zeros = original.clone();
    zeros.extend_from_slice(&[0; 4096]);
    assert_opens_to(&scratch, &zeros, &dumps, 3, None, "zeros").await;
    // Bytes in the room after the last batch: a batch begun and torn.
    let mut garbage = original.clone();
    let at = offsets[3] as usize + 100;
    garbage[at..at + 10].fill(0x5a);
    assert_opens_to(&scratch, &garbage, &dumps, 3, Some(offsets[3]), "garbage").await;
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
