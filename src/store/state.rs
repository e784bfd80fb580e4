//! The state of a store held in memory: [`Records`] (every collection at one revision, cheap
//! to copy) and the event log. [`MemoryStore`](super::MemoryStore) is this behind a lock; the
//! file store replays its journal into one.
//!
//! Records live in persistent (immutable, structurally shared) ordered maps, so a copy of
//! all of them costs a few reference-count increments whatever the store holds. That copy
//! is what a [`ReadView`](super::ReadView) reads: a consistent state at one revision that no
//! later commit disturbs, taken without waiting for writers and without making them wait.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::event_log::EventLog;
use super::events::{EventCounts, EventPage, EventQuery, page_of};
use super::{
    ChangeSet, Collection, Event, Key, Listing, NewEvent, Precondition, Revision, StoreError,
    Versioned, Write,
};

/// Ids are shared between versions of a map, so copying a map node copies pointers.
type RecordMap = imbl::OrdMap<Arc<str>, Versioned>;

/// One collection: its records ordered by id and the revision that last wrote in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct CollectionState {
    revision: Revision,
    records: RecordMap,
}

/// Every record of a store at one revision, with the number of events recorded up to it.
///
/// Cloning is cheap (a persistent map per collection), so a clone is a consistent snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    revision: Revision,
    event_count: u64,
    collections: [CollectionState; Collection::ALL.len()],
}

impl Records {
    /// The revision of the last applied commit.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// How many events the commits up to [`revision`](Self::revision) recorded.
    pub fn event_count(&self) -> u64 {
        self.event_count
    }

    fn collection(&self, collection: Collection) -> &CollectionState {
        &self.collections[collection.index()]
    }

    /// The record at `key`.
    pub fn get(&self, key: &Key) -> Option<Versioned> {
        self.collection(key.collection)
            .records
            .get(key.id.as_str())
            .cloned()
    }

    /// The records of `collection` whose id starts with `prefix`, ordered by id.
    pub fn list(&self, collection: Collection, prefix: &str) -> Listing {
        let state = self.collection(collection);
        let start: Arc<str> = Arc::from(prefix);
        let records = state
            .records
            .range(start..)
            .take_while(|(id, _)| id.starts_with(prefix))
            .map(|(id, v)| (id.to_string(), v.clone()))
            .collect();
        Listing {
            revision: state.revision,
            records,
        }
    }

    /// Check every precondition of `changes` against these records.
    pub fn check(&self, changes: &ChangeSet) -> Result<(), StoreError> {
        for precondition in &changes.preconditions {
            match precondition {
                Precondition::Record { key, revision } => {
                    let current = self
                        .collection(key.collection)
                        .records
                        .get(key.id.as_str())
                        .map_or(Revision::ABSENT, |v| v.revision);
                    if current != *revision {
                        return Err(StoreError::Conflict(key.to_string()));
                    }
                }
                Precondition::CollectionUnchanged {
                    collection,
                    revision,
                } => {
                    if self.collection(*collection).revision > *revision {
                        return Err(StoreError::Conflict(format!("collection {collection}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// Apply `writes` and `events` as the next commit without checking preconditions (the
    /// caller has checked them against these records). Returns the commit's revision and its
    /// events with their ids.
    pub fn apply(&mut self, writes: Vec<Write>, events: Vec<NewEvent>) -> (Revision, Vec<Event>) {
        let revision = self.revision.next();
        self.revision = revision;
        self.apply_writes(revision, writes);
        let events = events
            .into_iter()
            .map(|event| {
                self.event_count += 1;
                Event {
                    id: self.event_count,
                    revision,
                    event,
                }
            })
            .collect();
        (revision, events)
    }

    fn apply_writes(&mut self, revision: Revision, writes: Vec<Write>) {
        for write in writes {
            match write {
                Write::Put { key, value } => {
                    let collection = &mut self.collections[key.collection.index()];
                    collection.revision = revision;
                    collection
                        .records
                        .insert(Arc::from(key.id), Versioned { value, revision });
                }
                Write::Delete { key } => {
                    let collection = &mut self.collections[key.collection.index()];
                    if collection.records.remove(key.id.as_str()).is_some() {
                        collection.revision = revision;
                    }
                }
            }
        }
    }
}

/// The on-disk shape of [`Records`] (and of a whole [`StoreState`]): collections by name,
/// empty ones left out.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordsOut<'a> {
    revision: Revision,
    event_count: u64,
    collections: BTreeMap<&'static str, &'a CollectionState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    events: Option<&'a EventLog>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RecordsIn {
    revision: Revision,
    #[serde(default)]
    event_count: Option<u64>,
    collections: BTreeMap<Collection, CollectionState>,
    #[serde(default)]
    events: Vec<Event>,
}

impl RecordsIn {
    fn into_parts(self) -> (Records, Vec<Event>) {
        let mut records = Records {
            revision: self.revision,
            event_count: self.event_count.unwrap_or(self.events.len() as u64),
            ..Records::default()
        };
        for (collection, state) in self.collections {
            records.collections[collection.index()] = state;
        }
        (records, self.events)
    }
}

impl Records {
    fn out<'a>(&'a self, events: Option<&'a EventLog>) -> RecordsOut<'a> {
        RecordsOut {
            revision: self.revision,
            event_count: self.event_count,
            collections: Collection::ALL
                .iter()
                .map(|c| (c.as_str(), self.collection(*c)))
                .filter(|(_, state)| state.revision != Revision::ABSENT)
                .collect(),
            events,
        }
    }
}

impl Serialize for Records {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.out(None).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Records {
    /// Also reads a whole [`StoreState`], dropping its events.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(RecordsIn::deserialize(deserializer)?.into_parts().0)
    }
}

/// Records, events and revision of a store, with the precondition check and the apply step of
/// a commit. Serialisable as a whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreState {
    records: Records,
    events: EventLog,
    /// Derived from `events`, for exact query totals.
    counts: EventCounts,
}

impl StoreState {
    /// An empty state at [`Revision::ABSENT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A state of `records` and the `events` recorded up to them.
    pub(super) fn from_parts(records: Records, events: Vec<Event>) -> Self {
        let mut counts = EventCounts::default();
        for event in &events {
            counts.add(&event.event);
        }
        Self {
            records,
            events: EventLog::from_vec(events),
            counts,
        }
    }

    /// The revision of the last applied commit.
    pub fn revision(&self) -> Revision {
        self.records.revision
    }

    /// Every record at the current revision: a cheap, consistent copy.
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// The record at `key`.
    pub fn get(&self, key: &Key) -> Option<Versioned> {
        self.records.get(key)
    }

    /// The records of `collection` whose id starts with `prefix`, ordered by id.
    pub fn list(&self, collection: Collection, prefix: &str) -> Listing {
        self.records.list(collection, prefix)
    }

    /// Up to `limit` events with id greater than `after`.
    pub fn events(&self, after: u64, limit: usize) -> Vec<Event> {
        // The event with id `after + 1` sits at index `after`.
        let start = usize::try_from(after).unwrap_or(usize::MAX);
        self.events
            .range(start, start.saturating_add(limit))
            .cloned()
            .collect()
    }

    /// A page of the events matching `query`, newest first: a walk back from the cursor
    /// over the log in memory, stopping once the page is full.
    pub fn query_events(&self, query: &EventQuery) -> EventPage {
        page_of(&self.events, &self.counts, query)
    }

    /// The number of events in the log.
    pub fn event_count(&self) -> u64 {
        self.events.len() as u64
    }

    /// Check every precondition of `changes` against this state.
    pub fn check(&self, changes: &ChangeSet) -> Result<(), StoreError> {
        self.records.check(changes)
    }

    /// Apply `changes` as the next commit without checking its preconditions (the caller has
    /// checked them against this state). Returns the commit's revision.
    pub fn apply(&mut self, changes: ChangeSet) -> Revision {
        let (revision, events) = self.records.apply(changes.writes, changes.events);
        for event in &events {
            self.counts.add(&event.event);
        }
        self.events.extend(events);
        revision
    }

    /// Check, then apply: one whole commit.
    pub fn commit(&mut self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.check(&changes)?;
        Ok(self.apply(changes))
    }
}

impl Serialize for StoreState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.records.out(Some(&self.events)).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for StoreState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (records, events) = RecordsIn::deserialize(deserializer)?.into_parts();
        Ok(Self::from_parts(records, events))
    }
}

impl StoreState {
    /// The records and the event log, taken apart.
    pub(super) fn into_parts(self) -> (Records, Vec<Event>) {
        (self.records, self.events.into_vec())
    }
}
