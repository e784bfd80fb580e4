//! The file store's event log on disk: it is read from the segments (not memory), it
//! covers an earlier version's history, and the index survives rotation and reopening.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde_json::json;

use super::disk::Disk;
use super::sim::SimDisk;
use super::{FileStore, Options, journal};
use crate::store::{
    ChangeSet, Collection, Event, EventQuery, Key, NewEvent, Revision, Store, StoreError,
    StoreState,
};

fn options(compact_after_bytes: u64) -> Options {
    Options {
        durable: true,
        compact_after_bytes,
        preallocate_bytes: 0,
    }
}

fn change(i: u64, events: u64) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes.put(Key::new(Collection::Features, format!("f{i}")), json!(i));
    for e in 0..events {
        changes.event(NewEvent {
            event_type: if e.is_multiple_of(2) { "even" } else { "odd" }.to_owned(),
            created_by: "test".to_owned(),
            created_at: chrono::Utc::now(),
            project: Some(format!("p{}", i % 3)),
            feature_name: Some(format!("f{i}")),
            environment: None,
            data: Some(json!({ "i": i, "e": e }).into()),
            pre_data: None,
            created_by_user_id: None,
            tags: None,
        });
    }
    changes
}

/// A format-1 snapshot (an earlier version's, holding the event log) of `state`.
fn v1_snapshot(state: &StoreState) -> Vec<u8> {
    let payload = serde_json::to_vec(state).unwrap();
    let mut bytes = b"TGLSNAP\0".to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&state.revision().0.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

async fn check_against(store: &FileStore, log: &[Event]) {
    assert_eq!(store.events(0, usize::MAX).await.unwrap(), log);
    for query in [
        EventQuery::newest(usize::MAX),
        EventQuery::newest(4).project("p1"),
        EventQuery::newest(3).event_type("odd").before(7),
        EventQuery::newest(2).feature("f2").offset(1),
    ] {
        let page = store.query_events(&query).await.unwrap();
        let matching: Vec<&Event> = log
            .iter()
            .rev()
            .filter(|e| query.matches(&e.event))
            .collect();
        let want: Vec<Event> = matching
            .iter()
            .filter(|e| e.id < query.before.unwrap_or(u64::MAX))
            .skip(query.offset as usize)
            .take(query.limit)
            .map(|e| (*e).clone())
            .collect();
        assert_eq!(page.events, want, "{query:?}");
        assert_eq!(page.total, matching.len() as u64, "{query:?}");
    }
}

/// A store of an earlier version (format-1 snapshot with the log, one `journal`): its
/// events and the journal's come back as one log, newest first across the seam, before
/// and after the history is renamed and a compaction writes the new format.
#[tokio::test]
async fn an_earlier_versions_history_is_part_of_the_log() {
    let mut state = StoreState::new();
    for i in 0..3 {
        state.commit(change(i, 2)).unwrap();
    }
    let disk = Arc::new(SimDisk::new());
    disk.create("snapshot", &v1_snapshot(&state)).unwrap();
    let mut journal_bytes = journal::appended_header(Revision(3));
    let mut after = state.clone();
    for i in 3..6 {
        let changes = change(i, 2);
        let revision = after.commit(changes.clone()).unwrap();
        journal_bytes
            .extend(journal::frame(revision, &serde_json::to_vec(&changes).unwrap()).unwrap());
    }
    disk.create(journal::LEGACY_NAME, &journal_bytes).unwrap();
    disk.sync_dir().unwrap();
    let log = after.events(0, usize::MAX);
    assert_eq!(log.len(), 12);

    let store = FileStore::open_on(disk.clone(), options(u64::MAX)).unwrap();
    check_against(&store, &log).await;
    store.compact().await.unwrap();
    let revision = store.commit(change(6, 1)).await.unwrap();
    drop(store);
    let mut log = log;
    let mut more = after.clone();
    assert_eq!(more.commit(change(6, 1)).unwrap(), revision);
    log.push(more.events(12, 1).remove(0));

    let store = FileStore::open_on(disk, options(u64::MAX)).unwrap();
    let read = store.events(0, usize::MAX).await.unwrap();
    // Timestamps differ (the last change was made twice); compare the rest.
    assert_eq!(read.len(), 13);
    let log: Vec<Event> = log
        .into_iter()
        .zip(&read)
        .map(|(mut e, r)| {
            e.event.created_at = r.event.created_at;
            e
        })
        .collect();
    check_against(&store, &log).await;
}

/// After many rotations and compactions, and a reopen, the log reads the same, and pages
/// come from the segment files: damaging the newest record's bytes under an open store
/// makes the next read of it fail, naming the file.
#[tokio::test]
async fn the_log_is_read_from_the_segments() {
    let disk = Arc::new(SimDisk::new());
    let store = FileStore::open_on(disk.clone(), options(1_024)).unwrap();
    for i in 0..60 {
        store.commit(change(i, i % 4)).await.unwrap();
    }
    store.compact().await.unwrap();
    let log = store.events(0, usize::MAX).await.unwrap();
    assert_eq!(log.len(), (0..60).map(|i| i % 4).sum::<u64>() as usize);
    assert!(store.stats().segments_created > 5);
    check_against(&store, &log).await;
    drop(store);
    let store = FileStore::open_on(disk.clone(), options(1_024)).unwrap();
    check_against(&store, &log).await;

    // Damage the last byte of the newest segment (the last record's payload) in place.
    store.commit(change(99, 1)).await.unwrap();
    let newest = disk
        .list()
        .unwrap()
        .into_iter()
        .filter(|n| journal::is_segment(n))
        .max()
        .unwrap();
    // The last record's last byte, before its batch's end (no zeros follow: nothing is
    // preallocated here).
    disk.corrupt_byte_before_end(&newest, journal::RECORD_HEADER_LEN);
    let error = store
        .query_events(&EventQuery::newest(1))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::Corrupt { file, .. } if file.contains("journal-")),
        "{error}"
    );
}
