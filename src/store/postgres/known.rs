//! The records a [`PostgresStore`](super::PostgresStore) instance knows, at their revisions:
//! what its own commits wrote and what its decision views read. Decision views answer from
//! it, so a writer decides without a round trip to the database, on top of every commit this
//! instance made, the ones still settling in their group commit included.
//!
//! It is never the truth, only a guess that the database checks: a decision view shows only
//! records (each at the revision it had when it was learnt), every decision taken on one
//! expects each record it read at that revision, and the commit statement checks that. So a
//! record another instance changed since makes the commit fail with a conflict; the refused
//! statement answers the records the change set expected as they are now, which replace
//! what this instance knew (`commit::outcome`), and the caller decides again on them. A
//! commit whose outcome is unknown makes the instance forget its records
//! ([`KnownRecords::forget`]). Another instance's commits are learnt that way, by the
//! conflicts they cause, not from their notifications (`notify.rs` says why). A refusal
//! decided on a view that may lag
//! is confirmed on the database's settled state before it is answered
//! ([`ReadView::may_lag`](crate::store::ReadView::may_lag)).
//!
//! What is learnt never moves a record back: a record is replaced only by one at a higher
//! revision, and a commit's delete removes only an older record. So a slow read that started
//! before a commit cannot undo what the commit taught; a record read just before another
//! commit of this instance deleted it may come back, and is caught by its precondition like
//! any other stale record.
//!
//! Absent records are not remembered: a key without a record is read from the database each
//! time. The map holds at most [`CAPACITY`] records; when it is full it starts again empty.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::{
    ChangeSet, Collection, Key, Listing, Precondition, ReadView, Revision, StoreError, Versioned,
    Write,
};

/// The most records remembered. A feature environment record with a few variants is about a
/// kilobyte, so this bounds the memory at some tens of megabytes.
pub(super) const CAPACITY: usize = 50_000;

/// The records an instance knows; shared by every clone of its store.
#[derive(Debug, Default)]
pub(super) struct KnownRecords {
    records: Mutex<HashMap<Key, Versioned>>,
    /// The highest revision this instance committed or read: a decision view's revision.
    revision: AtomicU64,
}

/// The records a change set writes, kept apart before it goes to the store (which takes it),
/// to be learnt once it committed or forgotten when it did not.
#[derive(Debug)]
pub(super) struct Written {
    /// Each written key with its last value (`None`: deleted).
    writes: Vec<(Key, Option<crate::store::Json>)>,
    /// The keys the change set expected at a revision.
    expected: Vec<Key>,
}

impl Written {
    /// What `changes` writes and expects.
    pub(super) fn of(changes: &ChangeSet) -> Self {
        let mut writes: Vec<(Key, Option<crate::store::Json>)> =
            Vec::with_capacity(changes.writes.len());
        for write in &changes.writes {
            let (key, value) = match write {
                Write::Put { key, value } => (key, Some(value.clone())),
                Write::Delete { key } => (key, None),
            };
            // A later write to the same key wins.
            match writes.iter_mut().find(|(known, _)| known == key) {
                Some(slot) => slot.1 = value,
                None => writes.push((key.clone(), value)),
            }
        }
        let expected = changes
            .preconditions
            .iter()
            .filter_map(|precondition| match precondition {
                Precondition::Record { key, .. } => Some(key.clone()),
                Precondition::CollectionUnchanged { .. } => None,
            })
            .collect();
        Written { writes, expected }
    }
}

impl KnownRecords {
    /// The record at `key` if this instance knows it.
    pub(super) fn get(&self, key: &Key) -> Option<Versioned> {
        let records = self.records.lock().ok()?;
        records.get(key).cloned()
    }

    /// The highest revision this instance committed or read.
    pub(super) fn revision(&self) -> Revision {
        Revision(self.revision.load(Ordering::Acquire))
    }

    /// Remember `record`, read from the database at `key`, unless a newer one is known.
    pub(super) fn learn(&self, key: &Key, record: &Versioned) {
        self.revision.fetch_max(record.revision.0, Ordering::AcqRel);
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        if let Some(known) = records.get(key)
            && known.revision >= record.revision
        {
            return;
        }
        make_room(&mut records);
        records.insert(key.clone(), record.clone());
    }

    /// Remember what a change set that committed at `revision` wrote.
    pub(super) fn committed(&self, written: Written, revision: Revision) {
        self.revision.fetch_max(revision.0, Ordering::AcqRel);
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        for (key, value) in written.writes {
            let newer = records
                .get(&key)
                .is_none_or(|known| known.revision < revision);
            if !newer {
                continue;
            }
            match value {
                Some(value) => {
                    make_room(&mut records);
                    records.insert(key, Versioned { value, revision });
                }
                None => {
                    records.remove(&key);
                }
            }
        }
    }

    /// Forget the record at `key`.
    pub(super) fn forget_key(&self, key: &Key) {
        if let Ok(mut records) = self.records.lock() {
            records.remove(key);
        }
    }

    /// Forget every record a change set that did not commit expected or wrote: one it
    /// expected has moved on (a conflict), or its outcome is unknown.
    pub(super) fn forget(&self, written: &Written) {
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        for key in written
            .expected
            .iter()
            .chain(written.writes.iter().map(|(key, _)| key))
        {
            records.remove(key);
        }
    }
}

/// Start again empty once the map is full (rarely: only more than [`CAPACITY`] records
/// touched by one instance).
fn make_room(records: &mut HashMap<Key, Versioned>) {
    if records.len() >= CAPACITY {
        records.clear();
    }
}

/// A decision view ([`Store::decision_view`](crate::store::Store::decision_view)) answering
/// from the records this instance knows, reading the others from the database (one statement
/// for all of them, outside any transaction) and learning them. Its revision is the highest
/// this instance committed or read when it was taken; its records may be newer (read later)
/// or older (changed by another instance): decisions on it rest on record preconditions.
#[derive(Debug)]
pub(super) struct KnownView {
    store: super::PostgresStore,
    revision: Revision,
}

impl KnownView {
    /// A view of what `store` knows now.
    pub(super) fn new(store: super::PostgresStore) -> Self {
        let revision = store.known.revision();
        KnownView { store, revision }
    }
}

#[async_trait::async_trait]
impl ReadView for KnownView {
    fn revision(&self) -> Revision {
        self.revision
    }

    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        let mut records = self.get_many(std::slice::from_ref(key)).await?;
        Ok(records.pop().flatten())
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        let known = &self.store.known;
        let mut records: Vec<Option<Versioned>> = keys.iter().map(|key| known.get(key)).collect();
        let missing: Vec<Key> = keys
            .iter()
            .zip(&records)
            .filter(|(_, record)| record.is_none())
            .map(|(key, _)| key.clone())
            .collect();
        if missing.is_empty() {
            return Ok(records);
        }
        let read = super::reads::get_many(&self.store, &missing).await?;
        let mut read = missing.iter().zip(read);
        for record in records.iter_mut().filter(|record| record.is_none()) {
            if let Some((key, found)) = read.next() {
                if let Some(found) = &found {
                    known.learn(key, found);
                }
                *record = found;
            }
        }
        Ok(records)
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        super::reads::list(&self.store, collection, prefix).await
    }

    fn may_lag(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Collection, Json};

    fn key(id: &str) -> Key {
        Key::new(Collection::Features, id)
    }

    fn record(value: i64, revision: u64) -> Versioned {
        Versioned {
            value: Json::from(serde_json::json!(value)),
            revision: Revision(revision),
        }
    }

    #[test]
    fn a_read_never_moves_a_record_back() {
        let known = KnownRecords::default();
        known.learn(&key("a"), &record(2, 5));
        known.learn(&key("a"), &record(1, 3));
        assert_eq!(known.get(&key("a")), Some(record(2, 5)));
        known.learn(&key("a"), &record(3, 7));
        assert_eq!(known.get(&key("a")), Some(record(3, 7)));
        assert_eq!(known.revision(), Revision(7));
    }

    #[test]
    fn a_commit_teaches_its_writes_and_deletes_only_older_records() {
        let known = KnownRecords::default();
        known.learn(&key("kept"), &record(1, 9));
        known.learn(&key("gone"), &record(1, 2));
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(key("gone"), Revision(2))
            .put(key("new"), serde_json::json!(1))
            .put(key("new"), serde_json::json!(2))
            .delete(key("kept"))
            .delete(key("gone"));
        known.committed(Written::of(&changes), Revision(8));
        assert_eq!(known.get(&key("new")), Some(record(2, 8)));
        assert_eq!(known.get(&key("gone")), None);
        // Written at 9, after the delete at 8 that this commit made.
        assert_eq!(known.get(&key("kept")), Some(record(1, 9)));
        assert_eq!(known.revision(), Revision(9));
    }

    #[test]
    fn a_failed_change_set_forgets_what_it_expected_and_wrote() {
        let known = KnownRecords::default();
        for id in ["expected", "written", "other"] {
            known.learn(&key(id), &record(1, 1));
        }
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(key("expected"), Revision(1))
            .put(key("written"), serde_json::json!(2));
        known.forget(&Written::of(&changes));
        assert_eq!(known.get(&key("expected")), None);
        assert_eq!(known.get(&key("written")), None);
        assert_eq!(known.get(&key("other")), Some(record(1, 1)));
    }
}
