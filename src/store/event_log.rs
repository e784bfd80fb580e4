//! [`EventLog`]: a store's events in memory, oldest first, in chunks of fixed size.
//!
//! # Why chunks
//!
//! The log only grows, and it grows under the store's write lock. Kept in one `Vec`, every
//! doubling of its capacity moved the whole log while every reader and writer waited: at a
//! few hundred bytes an event, a log of a million events is a copy of hundreds of MB, a
//! stall of tens of milliseconds in the middle of a commit. (glibc's allocator hides part of
//! it, moving large blocks by remapping pages; allocators that copy, such as mimalloc, do
//! not.) In chunks of [`CHUNK`] events, allocated whole when the first event arrives, an
//! append never moves an event; only the small list of chunks grows by reallocation.
//!
//! Every chunk but the last is full, so event `id` sits at index `id - 1`, in chunk
//! `(id - 1) / CHUNK`: lookups are arithmetic, as in a flat slice.

use serde::{Serialize, Serializer};

use super::Event;

/// Events per chunk: big enough that the list of chunks stays small (1,000 entries for a
/// million events), small enough that allocating one is cheap.
const CHUNK: usize = 1024;

/// A store's events in id order (ids `1..=len`), in chunks of [`CHUNK`].
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct EventLog {
    /// Every chunk holds `CHUNK` events except the last, which holds at least one.
    chunks: Vec<Vec<Event>>,
}

impl EventLog {
    /// The log of `events` (ids `1..=events.len()`, in order).
    pub(crate) fn from_vec(events: Vec<Event>) -> Self {
        let mut log = Self::default();
        log.extend(events);
        log
    }

    /// The number of events.
    pub(crate) fn len(&self) -> usize {
        match self.chunks.last() {
            Some(last) => (self.chunks.len() - 1) * CHUNK + last.len(),
            None => 0,
        }
    }

    /// Append `events`, oldest first.
    pub(crate) fn extend(&mut self, events: impl IntoIterator<Item = Event>) {
        for event in events {
            match self.chunks.last_mut() {
                Some(chunk) if chunk.len() < CHUNK => chunk.push(event),
                _ => {
                    let mut chunk = Vec::with_capacity(CHUNK);
                    chunk.push(event);
                    self.chunks.push(chunk);
                }
            }
        }
    }

    /// The events at indexes `start..end` (cut to the log), oldest first; reversible.
    pub(crate) fn range(
        &self,
        start: usize,
        end: usize,
    ) -> impl DoubleEndedIterator<Item = &Event> {
        let end = end.min(self.len());
        let start = start.min(end);
        let first = start / CHUNK;
        let chunks = self.chunks.get(first..end.div_ceil(CHUNK)).unwrap_or(&[]);
        chunks.iter().enumerate().flat_map(move |(i, chunk)| {
            let base = (first + i) * CHUNK;
            let from = start.saturating_sub(base).min(chunk.len());
            let to = end.saturating_sub(base).min(chunk.len());
            chunk.get(from..to).unwrap_or(&[]).iter()
        })
    }

    /// Every event, oldest first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &Event> {
        self.chunks.iter().flatten()
    }

    /// The events as one vector, oldest first.
    pub(crate) fn into_vec(self) -> Vec<Event> {
        let mut events = Vec::with_capacity(self.len());
        for chunk in self.chunks {
            events.extend(chunk);
        }
        events
    }
}

impl Serialize for EventLog {
    /// As a sequence of events, oldest first: the shape a `Vec<Event>` has.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{NewEvent, Revision};

    fn event(id: u64) -> Event {
        Event {
            id,
            revision: Revision(id),
            event: NewEvent {
                event_type: format!("t{id}"),
                created_by: "test".to_owned(),
                created_at: chrono::DateTime::UNIX_EPOCH,
                project: None,
                feature_name: None,
                environment: None,
                data: None,
                pre_data: None,
                created_by_user_id: None,
                tags: None,
            },
        }
    }

    fn ids<'a>(events: impl Iterator<Item = &'a Event>) -> Vec<u64> {
        events.map(|e| e.id).collect()
    }

    #[test]
    fn ranges_across_chunk_edges_match_a_flat_slice() {
        let total = 2 * CHUNK + 5;
        let flat: Vec<Event> = (1..=total as u64).map(event).collect();
        let mut log = EventLog::default();
        // Appended in uneven steps, as commits do.
        for part in flat.chunks(7) {
            log.extend(part.iter().cloned());
        }
        assert_eq!(log.len(), total);
        assert_eq!(log, EventLog::from_vec(flat.clone()));
        let edges = [
            0,
            1,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            2 * CHUNK,
            total - 1,
            total,
            total + 9,
        ];
        for start in edges {
            for end in edges {
                let want: Vec<u64> = flat
                    .get(start.min(total)..end.min(total))
                    .unwrap_or(&[])
                    .iter()
                    .map(|e| e.id)
                    .collect();
                assert_eq!(ids(log.range(start, end)), want, "{start}..{end}");
                let mut back = want.clone();
                back.reverse();
                assert_eq!(ids(log.range(start, end).rev()), back, "rev {start}..{end}");
            }
        }
        assert_eq!(log.clone().into_vec(), flat);
        assert_eq!(
            serde_json::to_value(&log).unwrap(),
            serde_json::to_value(&flat).unwrap()
        );
    }

    #[test]
    fn pages_across_chunk_edges_match_a_walk_over_a_flat_log() {
        use crate::store::events::{EventCounts, EventQuery, page_of};
        let total = 2 * CHUNK + 5;
        let mut flat: Vec<Event> = (1..=total as u64).map(event).collect();
        for e in flat.iter_mut().filter(|e| e.id % 3 == 0) {
            e.event.project = Some("p".to_owned());
        }
        let log = EventLog::from_vec(flat.clone());
        let mut counts = EventCounts::default();
        for e in &flat {
            counts.add(&e.event);
        }
        for filtered in [false, true] {
            for before in [None, Some(CHUNK as u64), Some(total as u64 + 1)] {
                for offset in [0, 1, CHUNK as u64 - 1, CHUNK as u64 + 3, total as u64] {
                    for limit in [1, 7, CHUNK + 2] {
                        let mut query = EventQuery::newest(limit).offset(offset);
                        if filtered {
                            query = query.project("p");
                        }
                        if let Some(before) = before {
                            query = query.before(before);
                        }
                        let want: Vec<u64> = flat
                            .iter()
                            .rev()
                            .filter(|e| before.is_none_or(|b| e.id < b))
                            .filter(|e| query.matches(&e.event))
                            .skip(offset as usize)
                            .take(limit)
                            .map(|e| e.id)
                            .collect();
                        let page = page_of(&log, &counts, &query);
                        assert_eq!(ids(page.events.iter()), want, "{query:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn no_chunk_moves_when_the_log_grows() {
        let mut log = EventLog::default();
        log.extend((1..=CHUNK as u64).map(event));
        let first = log.range(0, 1).next().map(|e| e as *const Event);
        log.extend((CHUNK as u64 + 1..=3 * CHUNK as u64).map(event));
        assert_eq!(log.range(0, 1).next().map(|e| e as *const Event), first);
        assert_eq!(log.chunks.iter().map(Vec::capacity).max(), Some(CHUNK));
    }
}
