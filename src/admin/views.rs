//! Reading at one revision, and deciding in order.
//!
//! * [`ToggleAdmin::at_view`] is the facade over a [`ReadView`]: every read of an operation
//!   run on it answers from one revision, so a document built from many records (an export,
//!   a feature with its environments, an import's validation) is consistent without retrying
//!   on unrelated writes, and without holding writers up.
//! * [`DecisionLocks`] orders the read-decide-commit cycles of writers on the same record:
//!   they take the record's lock in FIFO order, decide on the latest *accepted* state
//!   ([`Store::decision_view`]), submit, and release the lock before they wait for their
//!   commit to be durable. So writers of a hot record neither fight (no conflict retries) nor
//!   wait for each other's sync: the store syncs them in one batch.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::sync::Arc;

use async_trait::async_trait;

use super::ToggleAdmin;
use crate::error::Result;
use crate::store::{
    Accepted, ChangeSet, Collection, Event, EventPage, EventQuery, Key, Listing, ReadView,
    Revision, Store, StoreError, Versioned,
};

/// How many locks the keys are spread over. Two records sharing a lock only means their
/// writers take turns; 256 keeps that rare for any realistic number of concurrent writers.
const STRIPES: usize = 256;

/// Locks that order the decisions on a record, by key (striped).
#[derive(Debug)]
pub(crate) struct DecisionLocks {
    stripes: Vec<tokio::sync::Mutex<()>>,
}

impl DecisionLocks {
    pub(crate) fn new() -> Self {
        Self {
            stripes: (0..STRIPES).map(|_| tokio::sync::Mutex::new(())).collect(),
        }
    }

    /// Wait (first come, first served) for the turn to decide on `key`.
    pub(crate) async fn lock(&self, key: &Key) -> tokio::sync::MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        let stripe = (hasher.finish() % STRIPES as u64) as usize;
        // `stripes` has STRIPES entries, so the index is always in range; `%` keeps it so.
        self.stripes[stripe % self.stripes.len()].lock().await
    }
}

/// A store whose reads answer from one view and whose commits go to the real store.
#[derive(Debug)]
struct ViewStore {
    view: Box<dyn ReadView>,
    store: Arc<dyn Store>,
}

#[async_trait]
impl Store for ViewStore {
    async fn get(&self, key: &Key) -> std::result::Result<Option<Versioned>, StoreError> {
        self.view.get(key).await
    }

    async fn get_many(
        &self,
        keys: &[Key],
    ) -> std::result::Result<Vec<Option<Versioned>>, StoreError> {
        self.view.get_many(keys).await
    }

    async fn list(
        &self,
        collection: Collection,
        prefix: &str,
    ) -> std::result::Result<Listing, StoreError> {
        self.view.list(collection, prefix).await
    }

    async fn events(
        &self,
        after: u64,
        limit: usize,
    ) -> std::result::Result<Vec<Event>, StoreError> {
        self.store.events(after, limit).await
    }

    async fn query_events(&self, query: &EventQuery) -> std::result::Result<EventPage, StoreError> {
        self.store.query_events(query).await
    }

    async fn revision(&self) -> std::result::Result<Revision, StoreError> {
        Ok(self.view.revision())
    }

    async fn view(&self) -> std::result::Result<Box<dyn ReadView>, StoreError> {
        self.store.view().await
    }

    async fn commit(&self, changes: ChangeSet) -> std::result::Result<Revision, StoreError> {
        self.store.commit(changes).await
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<Revision>> {
        self.store.changes()
    }

    async fn submit(&self, changes: ChangeSet) -> std::result::Result<Accepted, StoreError> {
        self.store.submit(changes).await
    }
}

impl ToggleAdmin {
    /// The facade reading from a consistent view of the durable state: for operations that
    /// read many records and answer with them.
    pub(crate) async fn at_view(&self) -> Result<ToggleAdmin> {
        let view = self.store.view().await?;
        Ok(self.over(view))
    }

    /// The facade reading from a view for deciding a commit (it may show accepted commits
    /// that are not yet durable, or lack one still in flight; see [`Store::decision_view`]).
    /// A commit decided on it must expect every record it read at its revision, and must
    /// not expect a collection at a revision read through it.
    pub(crate) async fn at_decision_view(&self) -> Result<ToggleAdmin> {
        let view = self.store.decision_view().await?;
        Ok(self.over(view))
    }

    fn over(&self, view: Box<dyn ReadView>) -> ToggleAdmin {
        ToggleAdmin {
            store: Arc::new(ViewStore {
                view,
                store: Arc::clone(&self.store),
            }),
            locks: Arc::clone(&self.locks),
            client: Arc::clone(&self.client),
        }
    }
}
