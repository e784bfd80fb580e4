//! Consistent reads ([`ReadView`]) and two-step commits ([`Accepted`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;

use super::{Collection, Key, Listing, Records, Revision, StoreError, Versioned};

/// The store as it was at one revision: every read through a view answers from that same
/// state, whatever commits land meanwhile. From [`Store::view`](super::Store::view) and
/// [`Store::decision_view`](super::Store::decision_view).
///
/// A view is for one operation: take it, read what the operation needs, drop it. Stores may
/// hold resources for it (a database transaction, old versions of records).
#[async_trait]
pub trait ReadView: fmt::Debug + Send + Sync {
    /// The revision the view shows: every commit up to it, none after.
    fn revision(&self) -> Revision;

    /// The record at `key`, if there is one.
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError>;

    /// The records at `keys`, in the same order (`None` where there is none).
    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError>;

    /// The records of `collection` whose id starts with `prefix` (all of them for `""`),
    /// ordered by id, with the collection's revision.
    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError>;

    /// Whether this view may lack commits that other processes made before it was taken: a
    /// decision view answering from what this process knows (the PostgresStore's). A
    /// decision that commits is safe on it under record preconditions; a refusal decided on
    /// it (a 404, an invalid change) must be confirmed on a view that does not lag
    /// ([`Store::view`](super::Store::view)) before it is answered. Default `false`.
    fn may_lag(&self) -> bool {
        false
    }
}

/// A [`ReadView`] over an in-memory copy of [`Records`]: what the memory and file stores
/// hand out (the copy shares its maps with the store, so taking one costs next to nothing).
#[derive(Debug, Clone)]
pub struct RecordsView {
    records: Records,
}

impl RecordsView {
    /// A view of `records`.
    pub fn new(records: Records) -> Self {
        Self { records }
    }
}

#[async_trait]
impl ReadView for RecordsView {
    fn revision(&self) -> Revision {
        self.records.revision()
    }

    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        Ok(self.records.get(key))
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        Ok(keys.iter().map(|key| self.records.get(key)).collect())
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        Ok(self.records.list(collection, prefix))
    }
}

type Durability = Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'static>>;

/// A commit the store has accepted (its preconditions held, it has its revision, and every
/// later decision sees it) but that may not be durable yet. From
/// [`Store::submit`](super::Store::submit).
///
/// [`durable`](Self::durable) waits until the commit is durable; only then may its effects be
/// reported to anyone. Dropping an `Accepted` does not withdraw the commit: it is written
/// all the same.
#[must_use = "a commit is acknowledged only once `durable` returns Ok"]
pub struct Accepted {
    revision: Revision,
    durability: Option<Durability>,
}

impl Accepted {
    /// A commit that is durable already.
    pub fn durable_at(revision: Revision) -> Self {
        Self {
            revision,
            durability: None,
        }
    }

    /// A commit that is durable once `durability` resolves to `Ok`.
    pub fn pending(
        revision: Revision,
        durability: impl Future<Output = Result<(), StoreError>> + Send + 'static,
    ) -> Self {
        Self {
            revision,
            durability: Some(Box::pin(durability)),
        }
    }

    /// The commit's revision.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Wait until the commit is durable; then it is acknowledged and returns its revision.
    /// An error means the commit's fate is unknown until the store is reopened (see each
    /// store's documentation); it was not acknowledged.
    pub async fn durable(self) -> Result<Revision, StoreError> {
        if let Some(durability) = self.durability {
            durability.await?;
        }
        Ok(self.revision)
    }
}

impl fmt::Debug for Accepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Accepted")
            .field("revision", &self.revision)
            .field("durable", &self.durability.is_none())
            .finish()
    }
}
