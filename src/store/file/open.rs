//! Opening a file store: read the snapshot, replay the journal segments, cut a torn tail.
//!
//! The snapshot holds the records as of revision *S*; the segments hold every commit from
//! the first on (they are the event log). So replay takes the events of every commit and
//! the writes of those after *S*. Stores written by earlier versions kept the event log in
//! the snapshot (format 1); such a snapshot is renamed to `history-v1` on open and read for
//! its events from then on, and its `journal` is the first segment.

use super::disk::Disk;
use super::{Recovery, TruncatedTail, io_error, journal, snapshot};
use crate::store::{Event, Records, Revision, StoreError, StoreState};

/// The snapshot of an earlier version, kept for its event log.
const LEGACY_HISTORY: &str = "history-v1";

/// What [`recover`] found: the state, and the segment to append to.
pub(super) struct Opened {
    pub(super) state: StoreState,
    pub(super) recovery: Recovery,
    pub(super) active_segment: String,
    pub(super) active_len: u64,
}

/// Read everything in `disk` and repair a torn tail.
pub(super) fn recover(disk: &dyn Disk) -> Result<Opened, StoreError> {
    let names = disk
        .list()
        .map_err(|e| io_error(format!("could not list {}", disk.describe("")), e))?;
    for name in names.iter().filter(|n| n.ends_with(".tmp")) {
        // A snapshot being written when the process stopped; the files in place hold
        // everything.
        disk.remove(name)
            .map_err(|e| io_error(format!("could not remove {}", disk.describe(name)), e))?;
    }

    let read = |name: &str| {
        disk.read(name)
            .map_err(|e| io_error(format!("could not read {}", disk.describe(name)), e))
    };
    // The records: the snapshot, else an earlier version's history (which is a snapshot too).
    let mut legacy = match read(LEGACY_HISTORY)? {
        Some(bytes) => Some(snapshot::decode(&bytes, &disk.describe(LEGACY_HISTORY))?),
        None => None,
    };
    let mut current = match read(snapshot::FILE_NAME)? {
        Some(bytes) => Some(snapshot::decode(
            &bytes,
            &disk.describe(snapshot::FILE_NAME),
        )?),
        None => None,
    };
    if current.as_ref().is_some_and(|s| s.events.is_some()) {
        // An earlier version's snapshot: keep it, under its own name, for its events; the
        // next compaction writes the new format.
        disk.rename(snapshot::FILE_NAME, LEGACY_HISTORY)
            .and_then(|()| disk.sync_dir())
            .map_err(|e| {
                io_error(
                    format!("could not rename {}", disk.describe(snapshot::FILE_NAME)),
                    e,
                )
            })?;
        legacy = current.take();
    }
    let (mut log, events_through) = match &mut legacy {
        Some(history) => (
            history.events.take().unwrap_or_default(),
            history.records.revision(),
        ),
        None => (Vec::new(), Revision::ABSENT),
    };
    let mut records = match (current, legacy) {
        (Some(snapshot), _) => snapshot.records,
        (None, Some(history)) => history.records,
        (None, None) => Records::default(),
    };
    let snapshot_revision = records.revision();
    let mut recovery = Recovery {
        snapshot_revision,
        ..Recovery::default()
    };

    let mut segments = Vec::new();
    for name in names.iter().filter(|n| journal::is_segment(n)) {
        let bytes = read(name)?.unwrap_or_default();
        let contents = journal::read(&bytes, &disk.describe(name))?;
        segments.push((contents.base, name.clone(), contents));
    }
    segments.sort_by_key(|(base, _, _)| *base);
    recovery.segments_read = segments.len() as u64;

    let mut last = events_through;
    let count = segments.len();
    let mut active = None;
    for (index, (base, name, contents)) in segments.into_iter().enumerate() {
        let file = disk.describe(&name);
        let corrupt = |offset: u64, reason: String| StoreError::Corrupt {
            file: file.clone(),
            offset,
            reason,
        };
        if base > last {
            return Err(corrupt(
                journal::HEADER_LEN,
                format!(
                    "the segment starts after {base}, but the history before it ends at {last}"
                ),
            ));
        }
        let is_last = index + 1 == count;
        if let Some(tail) = &contents.torn_tail
            && !is_last
        {
            return Err(corrupt(
                tail.offset,
                format!("{}, in a segment that is not the last one", tail.reason),
            ));
        }
        for (revision, changes) in contents.records {
            if revision <= last {
                continue;
            }
            if revision != last.next() {
                return Err(corrupt(
                    journal::HEADER_LEN,
                    format!("the journal skips from {last} to {revision}"),
                ));
            }
            if revision <= snapshot_revision {
                // The snapshot holds the writes; the log needs the events.
                let first = log.len() as u64 + 1;
                log.extend(
                    changes
                        .events
                        .into_iter()
                        .enumerate()
                        .map(|(i, event)| Event {
                            id: first + i as u64,
                            revision,
                            event,
                        }),
                );
            } else {
                let (applied, events) = records.apply(changes.writes, changes.events);
                debug_assert_eq!(applied, revision);
                log.extend(events);
                recovery.records_replayed += 1;
            }
            last = revision;
        }
        if is_last {
            if let Some(tail) = contents.torn_tail {
                tracing::warn!(
                    file = %file,
                    offset = tail.offset,
                    bytes = tail.bytes,
                    reason = %tail.reason,
                    "cut off the torn end of the journal"
                );
                // Cut the torn tail durably, so new records never follow garbage.
                disk.truncate(&name, contents.valid_len)
                    .map_err(|e| io_error(format!("could not truncate {file}"), e))?;
                recovery.truncated_tail = Some(TruncatedTail {
                    offset: tail.offset,
                    bytes: tail.bytes,
                    reason: tail.reason,
                });
            }
            active = Some((name, contents.valid_len));
        }
    }
    if last < snapshot_revision {
        return Err(StoreError::Corrupt {
            file: disk.describe(snapshot::FILE_NAME),
            offset: 12,
            reason: format!(
                "the snapshot is at {snapshot_revision} but the journal ends at {last}: journal segments are missing"
            ),
        });
    }
    if log.len() as u64 != records.event_count() {
        return Err(StoreError::Corrupt {
            file: disk.describe(snapshot::FILE_NAME),
            offset: 12,
            reason: format!(
                "the snapshot counts {} events but the journal holds {}",
                records.event_count(),
                log.len()
            ),
        });
    }
    let (active_segment, active_len) = match active {
        Some(active) => active,
        None => (journal::create_segment(disk, last)?, journal::HEADER_LEN),
    };
    Ok(Opened {
        state: StoreState::from_parts(records, log),
        recovery,
        active_segment,
        active_len,
    })
}
