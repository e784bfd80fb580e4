//! Opening a file store: read the snapshot, replay the journal segments, cut a torn tail.
//!
//! The snapshot holds the records as of revision *S*; the segments hold every commit from
//! the first on (they are the event log). So replay takes the events of every commit and
//! the writes of those after *S*. Stores written by earlier versions kept the event log in
//! the snapshot (format 1); such a snapshot is renamed to `history-v1` on open and read for
//! its events from then on, and its `journal` is the first segment.
//!
//! The events are not kept: open indexes them ([`EventIndex`]) and reads them back from the
//! segments when asked. Segments are read one at a time, and only the records after the
//! snapshot are decoded whole; of the others only the events' type, project and feature are,
//! so opening a long history takes memory for one segment, not for the history.

use std::borrow::Cow;

use serde::Deserialize;

use super::disk::Disk;
use super::event_index::{EventIndex, EventKeys};
use super::{Recovery, TruncatedTail, io_error, journal, snapshot};
use crate::store::{ChangeSet, Records, Revision, StoreError};

/// The snapshot of an earlier version, kept for its event log.
const LEGACY_HISTORY: &str = "history-v1";

/// What [`recover`] found: the records, the event index, and the segment to append to.
pub(super) struct Opened {
    pub(super) records: Records,
    pub(super) events: EventIndex,
    pub(super) recovery: Recovery,
    pub(super) active_segment: String,
    /// Where the active segment's records end: where the next is written.
    pub(super) active_len: u64,
    /// The active segment's length on disk: its records and the zeros after them.
    pub(super) active_allocated: u64,
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
    let (log, events_through) = match &mut legacy {
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

    // Segments in order of their base revision, read from their headers; each is then read
    // whole, one at a time.
    let mut segments = Vec::new();
    for name in names.iter().filter(|n| journal::is_segment(n)) {
        let file = disk.describe(name);
        let base = match disk.read_at(name, 0, journal::HEADER_LEN as usize) {
            Ok(header) => journal::base_of(&header, &file)?,
            // Shorter than a header: reading it whole reports what is wrong.
            Err(_) => journal::read(&read(name)?.unwrap_or_default(), &file)?.base,
        };
        segments.push((base, name.clone()));
    }
    segments.sort_by_key(|(base, _)| *base);
    recovery.segments_read = segments.len() as u64;

    let mut index = EventIndex::new(log);
    let mut last = events_through;
    let count = segments.len();
    let mut active = None;
    for (position, (base, name)) in segments.into_iter().enumerate() {
        let file = disk.describe(&name);
        let bytes = read(&name)?.unwrap_or_default();
        let contents = journal::read(&bytes, &file)?;
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
        let is_last = position + 1 == count;
        if let Some(tail) = &contents.torn_tail
            && !is_last
        {
            return Err(corrupt(
                tail.offset,
                format!("{}, in a segment that is not the last one", tail.reason),
            ));
        }
        for frame in &contents.records {
            let revision = frame.revision;
            if revision <= last {
                continue;
            }
            if revision != last.next() {
                return Err(corrupt(
                    journal::HEADER_LEN,
                    format!("the journal skips from {last} to {revision}"),
                ));
            }
            let undecodable = |e: serde_json::Error| {
                corrupt(
                    frame.start,
                    format!("record of {revision} is intact but does not decode: {e}"),
                )
            };
            let payload = frame.payload(&bytes);
            if revision <= snapshot_revision {
                // The snapshot holds the writes; the log needs the events' keys.
                let keys: RecordKeys<'_> = serde_json::from_slice(payload).map_err(undecodable)?;
                let keys: Vec<EventKeys<'_>> = keys.events.iter().map(EventOf::keys).collect();
                index.add_record(&name, frame.start, frame.end, &keys);
            } else {
                let changes: ChangeSet = serde_json::from_slice(payload).map_err(undecodable)?;
                let (applied, events) = records.apply(changes.writes, changes.events);
                debug_assert_eq!(applied, revision);
                let keys: Vec<EventKeys<'_>> =
                    events.iter().map(|e| EventKeys::of(&e.event)).collect();
                index.add_record(&name, frame.start, frame.end, &keys);
                recovery.records_replayed += 1;
            }
            last = revision;
        }
        if is_last {
            let torn = contents.torn_tail.is_some();
            let current = contents.is_current();
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
            let allocated = if torn {
                contents.valid_len
            } else {
                bytes.len() as u64
            };
            if current {
                active = Some((name, contents.valid_len, allocated));
            }
            // Otherwise it was appended by an earlier version: its records stay where they
            // are, and new ones go to a new segment of this version's format.
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
    if index.count() != records.event_count() {
        return Err(StoreError::Corrupt {
            file: disk.describe(snapshot::FILE_NAME),
            offset: 12,
            reason: format!(
                "the snapshot counts {} events but the journal holds {}",
                records.event_count(),
                index.count()
            ),
        });
    }
    let (active_segment, active_len, active_allocated) = match active {
        Some(active) => active,
        // An earlier version's segment ending at `last` with no records of its own has this
        // name too, and is replaced: it holds nothing.
        None => (
            journal::create_segment(disk, last)?,
            journal::HEADER_LEN,
            journal::HEADER_LEN,
        ),
    };
    Ok(Opened {
        records,
        events: index,
        recovery,
        active_segment,
        active_len,
        active_allocated,
    })
}

/// What open reads of a record the snapshot covers: its events' filter keys, borrowed from
/// the segment's bytes where they need no unescaping; everything else is skipped.
#[derive(Deserialize)]
struct RecordKeys<'a> {
    #[serde(default, borrow)]
    events: Vec<EventOf<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventOf<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    #[serde(default, borrow)]
    project: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    feature_name: Option<Cow<'a, str>>,
}

impl EventOf<'_> {
    fn keys(&self) -> EventKeys<'_> {
        EventKeys {
            event_type: &self.event_type,
            project: self.project.as_deref(),
            feature: self.feature_name.as_deref(),
        }
    }
}
