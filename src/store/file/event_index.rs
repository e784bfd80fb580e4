//! The event log's index: where in the journal segments each run of events is, so that a
//! page of the log is read from disk on demand instead of the log living in memory.
//!
//! # Design notes
//!
//! * **The segments are the log.** Every commit's record holds its events, and segments
//!   are never rewritten, so an event's bytes stay where they were written. The index only
//!   says where to look; nothing is copied out of the journal.
//! * **Sparse: one entry per block, not per event.** Consecutive records of one segment are
//!   grouped into *blocks* of about [`BLOCK_BYTES`] or [`BLOCK_EVENTS`] events, whichever
//!   comes first (a record is never split, so a large import is one block of its own). A
//!   block is its byte range, the id of its first event, how many it holds and its filter:
//!   about 170 bytes for up to 128 events (more when one commit holds more), so the index
//!   takes 1 to 2 bytes per event, and a million events index in under 2 MB. A per-event table (16 bytes an event, 16 MB
//!   for a million) would grow with the log; the block table barely does.
//! * **A filter per block.** Each block keeps a 1024-bit Bloom filter of its events' types,
//!   projects and features, so a filtered query skips, without reading them, the blocks
//!   that cannot hold a match (false positives cost a read, never a wrong answer).
//! * **Ids are dense**, 1, 2, 3 … in block order, so the block holding an id is a binary
//!   search away, and an unfiltered page (or offset) is arithmetic.
//! * **Exact totals** come from [`EventCounts`], kept beside the blocks.
//! * **The events of an earlier version's `history-v1`** (a format-1 snapshot, which held
//!   the log) are not in any segment; they stay in memory as they were read. That history
//!   is frozen (nothing is added to it), so it does not grow with the log.
//! * **Only durable events are indexed**: open indexes what it recovered, and the writer
//!   indexes a batch only once it is synced, under the same lock that publishes its records.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use crate::store::{Event, EventCounts, EventQuery};

/// A block is closed once its records span this many bytes.
pub(super) const BLOCK_BYTES: u64 = 32 * 1024;
/// A block is closed once it holds this many events.
pub(super) const BLOCK_EVENTS: u64 = 128;

/// What the Bloom filters are keyed by: a tag byte, then the value.
const TYPE: u8 = b't';
const PROJECT: u8 = b'p';
const FEATURE: u8 = b'f';

/// A 1024-bit Bloom filter with three probes per key. A block of 128 events has at most
/// 3 × 128 distinct keys and usually far fewer (a feature's events repeat its keys); at 150
/// keys, about 4 % of the blocks that hold none of a query's keys are read anyway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Bloom([u64; 16]);

impl Bloom {
    fn probes(tag: u8, value: &str) -> [usize; 3] {
        // `DefaultHasher::new()` is keyed with constants: the same key always probes alike,
        // which is all an in-memory filter needs.
        let mut hasher = DefaultHasher::new();
        tag.hash(&mut hasher);
        value.hash(&mut hasher);
        let hash = hasher.finish();
        [
            (hash & 1023) as usize,
            ((hash >> 20) & 1023) as usize,
            ((hash >> 40) & 1023) as usize,
        ]
    }

    fn insert(&mut self, tag: u8, value: &str) {
        for bit in Self::probes(tag, value) {
            self.0[bit / 64] |= 1 << (bit % 64);
        }
    }

    fn may_contain(&self, tag: u8, value: &str) -> bool {
        Self::probes(tag, value)
            .iter()
            .all(|&bit| self.0[bit / 64] & (1 << (bit % 64)) != 0)
    }
}

/// The filter keys of one event.
#[derive(Debug, Clone, Copy)]
pub(super) struct EventKeys<'a> {
    pub event_type: &'a str,
    pub project: Option<&'a str>,
    pub feature: Option<&'a str>,
}

impl<'a> EventKeys<'a> {
    /// The keys of `event`.
    pub(super) fn of(event: &'a crate::store::NewEvent) -> Self {
        Self {
            event_type: &event.event_type,
            project: event.project.as_deref(),
            feature: event.feature_name.as_deref(),
        }
    }
}

/// A run of consecutive records of one segment, and the events they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Block {
    /// The segment, by its position in [`EventIndex::segments`].
    segment: u32,
    /// Where the first record starts.
    pub start: u64,
    /// Where the last record ends.
    pub end: u64,
    /// The id of the first event; the others follow without gaps.
    pub first_id: u64,
    /// How many events the records hold (never 0: a block starts at a record with events).
    pub count: u64,
    bloom: Bloom,
}

impl Block {
    /// The id of the last event.
    pub(super) fn last_id(&self) -> u64 {
        self.first_id + self.count - 1
    }

    /// Whether the block may hold an event passing `query`'s filters.
    fn may_match(&self, query: &EventQuery) -> bool {
        let may = |tag, value: &Option<String>| {
            value
                .as_deref()
                .is_none_or(|v| self.bloom.may_contain(tag, v))
        };
        may(TYPE, &query.event_type) && may(PROJECT, &query.project) && may(FEATURE, &query.feature)
    }

    fn is_full(&self) -> bool {
        self.end - self.start >= BLOCK_BYTES || self.count >= BLOCK_EVENTS
    }
}

/// A block to read, with the name of its segment (copied out, so that reading needs no
/// lock).
#[derive(Debug, Clone)]
pub(super) struct BlockRef {
    pub segment: String,
    pub block: Block,
}

/// The index of a file store's event log; see the module's design notes.
#[derive(Debug, Default)]
pub(super) struct EventIndex {
    /// The events of an earlier version's history, ids `1..=legacy.len()`.
    legacy: Vec<Event>,
    /// Segment names, in the order their blocks were added.
    segments: Vec<String>,
    /// Every block, in id order.
    blocks: Vec<Block>,
    counts: EventCounts,
}

impl EventIndex {
    /// An index starting with the events of an earlier version's history.
    pub(super) fn new(legacy: Vec<Event>) -> Self {
        let mut counts = EventCounts::default();
        for event in &legacy {
            counts.add(&event.event);
        }
        Self {
            legacy,
            counts,
            ..Self::default()
        }
    }

    /// How many events the log holds: the last event's id.
    pub(super) fn count(&self) -> u64 {
        self.counts.all()
    }

    /// How many blocks index the segments.
    #[cfg(test)]
    pub(super) fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// How many events match `query`'s filters.
    pub(super) fn total(&self, query: &EventQuery) -> u64 {
        self.counts.matching(query)
    }

    /// The events of an earlier version's history with ids up to `newest`, oldest first.
    pub(super) fn legacy_through(&self, newest: u64) -> &[Event] {
        let end = usize::try_from(newest)
            .unwrap_or(usize::MAX)
            .min(self.legacy.len());
        &self.legacy[..end]
    }

    /// The events of an earlier version's history with ids above `after`, oldest first.
    pub(super) fn legacy_after(&self, after: u64) -> &[Event] {
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(self.legacy.len());
        &self.legacy[start..]
    }

    /// Index the record of segment `segment` spanning bytes `start..end`, holding events
    /// with these keys (numbered from [`count`](Self::count) + 1).
    pub(super) fn add_record(
        &mut self,
        segment: &str,
        start: u64,
        end: u64,
        events: &[EventKeys<'_>],
    ) {
        let segment = self.segment_id(segment);
        // The record follows the block's last directly or after a batch end (which the
        // block's reader skips).
        let extends = self.blocks.last().is_some_and(|b| {
            b.segment == segment
                && (b.end == start || b.end + super::journal::RECORD_HEADER_LEN as u64 == start)
                && !b.is_full()
        });
        if extends {
            if let Some(block) = self.blocks.last_mut() {
                block.end = end;
                block.count += events.len() as u64;
            }
        } else if events.is_empty() {
            // A record without events after a full block (or a gap) needs no block.
            return;
        } else {
            self.blocks.push(Block {
                segment,
                start,
                end,
                first_id: self.count() + 1,
                count: events.len() as u64,
                bloom: Bloom::default(),
            });
        }
        for keys in events {
            if let Some(block) = self.blocks.last_mut() {
                block.bloom.insert(TYPE, keys.event_type);
                if let Some(project) = keys.project {
                    block.bloom.insert(PROJECT, project);
                }
                if let Some(feature) = keys.feature {
                    block.bloom.insert(FEATURE, feature);
                }
            }
            self.counts
                .add_keys(keys.event_type, keys.project, keys.feature);
        }
    }

    fn segment_id(&mut self, name: &str) -> u32 {
        if self.segments.last().is_none_or(|last| last != name) {
            self.segments.push(name.to_owned());
        }
        // Fewer than 2^32 segments: each is at least a header long and a commit big.
        u32::try_from(self.segments.len() - 1).unwrap_or(u32::MAX)
    }

    fn block_ref(&self, block: &Block) -> BlockRef {
        BlockRef {
            segment: self
                .segments
                .get(block.segment as usize)
                .cloned()
                .unwrap_or_default(),
            block: block.clone(),
        }
    }

    /// Up to `max` blocks that may hold events passing `query` with ids up to `newest`,
    /// newest first.
    pub(super) fn candidates_down(
        &self,
        newest: u64,
        query: &EventQuery,
        max: usize,
    ) -> Vec<BlockRef> {
        let end = self.blocks.partition_point(|b| b.first_id <= newest);
        self.blocks[..end]
            .iter()
            .rev()
            .filter(|b| b.may_match(query))
            .take(max)
            .map(|b| self.block_ref(b))
            .collect()
    }

    /// Up to `max` blocks holding events with ids above `after`, oldest first.
    pub(super) fn blocks_up(&self, after: u64, max: usize) -> Vec<BlockRef> {
        let start = self.blocks.partition_point(|b| b.last_id() <= after);
        self.blocks[start..]
            .iter()
            .take(max)
            .map(|b| self.block_ref(b))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(feature: &str) -> EventKeys<'_> {
        EventKeys {
            event_type: "feature-updated",
            project: Some("p"),
            feature: Some(feature),
        }
    }

    #[test]
    fn records_group_into_blocks_of_consecutive_ids() {
        let mut index = EventIndex::default();
        let mut at = 24;
        for n in 0..300u64 {
            let feature = format!("f{}", n % 7);
            index.add_record("journal-a", at, at + 100, &[keys(&feature)]);
            at += 100;
        }
        assert_eq!(index.count(), 300);
        assert_eq!(index.blocks(), 3, "128 + 128 + 44 events");
        let blocks = index.blocks_up(0, 10);
        assert_eq!(blocks[1].block.first_id, 129);
        assert_eq!(blocks[2].block.last_id(), 300);
        assert_eq!(blocks[1].block.start, blocks[0].block.end);
        // A new segment starts a new block even when the last one has room.
        index.add_record("journal-b", 24, 124, &[keys("f0")]);
        assert_eq!(index.blocks(), 4);
        // A record without events after a full block needs none.
        index.add_record("journal-b", 124, 150, &[]);
        assert_eq!(index.blocks(), 4);
        assert_eq!(index.blocks_up(300, 1)[0].block.end, 150);
    }

    #[test]
    fn filters_skip_blocks_that_cannot_match() {
        let mut index = EventIndex::default();
        index.add_record("s", 24, 100, &[keys("a"); 128]);
        index.add_record("s", 100, 200, &[keys("b"); 128]);
        let query = EventQuery::newest(10).feature("a");
        let found = index.candidates_down(256, &query, 10);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].block.first_id, 1);
        assert_eq!(index.total(&query), 128);
        assert_eq!(
            index.candidates_down(256, &EventQuery::newest(1), 10).len(),
            2
        );
    }
}
