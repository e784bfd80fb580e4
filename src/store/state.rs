//! The whole state of a store held in memory: records by collection, the event log and the
//! revision counter. [`MemoryStore`](super::MemoryStore) is this behind a lock; the file store
//! replays its journal into one.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{
    ChangeSet, Collection, Event, Key, Listing, Precondition, Revision, StoreError, Versioned,
    Write,
};

/// One collection: its records ordered by id and the revision that last wrote in it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct CollectionState {
    revision: Revision,
    records: BTreeMap<String, Versioned>,
}

/// Records, events and revision of a store, with the precondition check and the apply step of
/// a commit. Serialisable as a whole, so it can be a snapshot.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StoreState {
    revision: Revision,
    collections: HashMap<Collection, CollectionState>,
    events: Vec<Event>,
}

impl StoreState {
    /// An empty state at [`Revision::ABSENT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The revision of the last applied commit.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The record at `key`.
    pub fn get(&self, key: &Key) -> Option<Versioned> {
        self.collections
            .get(&key.collection)
            .and_then(|c| c.records.get(&key.id))
            .cloned()
    }

    /// The records of `collection` whose id starts with `prefix`, ordered by id.
    pub fn list(&self, collection: Collection, prefix: &str) -> Listing {
        let Some(state) = self.collections.get(&collection) else {
            return Listing::default();
        };
        let records = state
            .records
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(id, _)| id.starts_with(prefix))
            .map(|(id, v)| (id.clone(), v.clone()))
            .collect();
        Listing {
            revision: state.revision,
            records,
        }
    }

    /// Up to `limit` events with id greater than `after`.
    pub fn events(&self, after: u64, limit: usize) -> Vec<Event> {
        // Event ids are 1, 2, 3 … so the event with id `after + 1` sits at index `after`.
        let start = usize::try_from(after).unwrap_or(usize::MAX);
        self.events
            .iter()
            .skip(start)
            .take(limit)
            .cloned()
            .collect()
    }

    /// The number of events in the log.
    pub fn event_count(&self) -> u64 {
        self.events.len() as u64
    }

    /// Check every precondition of `changes` against this state.
    pub fn check(&self, changes: &ChangeSet) -> Result<(), StoreError> {
        for precondition in &changes.preconditions {
            match precondition {
                Precondition::Record { key, revision } => {
                    let current = self
                        .collections
                        .get(&key.collection)
                        .and_then(|c| c.records.get(&key.id))
                        .map_or(Revision::ABSENT, |v| v.revision);
                    if current != *revision {
                        return Err(StoreError::Conflict(key.to_string()));
                    }
                }
                Precondition::CollectionUnchanged {
                    collection,
                    revision,
                } => {
                    let current = self
                        .collections
                        .get(collection)
                        .map_or(Revision::ABSENT, |c| c.revision);
                    if current > *revision {
                        return Err(StoreError::Conflict(format!("collection {collection}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// Apply `changes` as the next commit without checking its preconditions (the caller has
    /// checked them against this state). Returns the commit's revision.
    pub fn apply(&mut self, changes: ChangeSet) -> Revision {
        let revision = self.revision.next();
        self.revision = revision;
        for write in changes.writes {
            match write {
                Write::Put { key, value } => {
                    let collection = self.collections.entry(key.collection).or_default();
                    collection.revision = revision;
                    collection
                        .records
                        .insert(key.id, Versioned { value, revision });
                }
                Write::Delete { key } => {
                    if let Some(collection) = self.collections.get_mut(&key.collection)
                        && collection.records.remove(&key.id).is_some()
                    {
                        collection.revision = revision;
                    }
                }
            }
        }
        for event in changes.events {
            let id = self.events.len() as u64 + 1;
            self.events.push(Event {
                id,
                revision,
                event,
            });
        }
        revision
    }

    /// Check, then apply: one whole commit.
    pub fn commit(&mut self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.check(&changes)?;
        Ok(self.apply(changes))
    }
}
