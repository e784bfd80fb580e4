//! [`MemoryStore`]: the whole state behind one lock, no I/O.

use async_trait::async_trait;
use std::sync::{PoisonError, RwLock};

use super::{
    ChangeSet, Collection, Event, EventPage, EventQuery, Key, Listing, ReadView, RecordsView,
    Revision, Store, StoreError, StoreState, Versioned,
};

/// A store that keeps everything in memory: nothing survives the process.
///
/// The reference implementation of the [`Store`] contract and the fast path for tests and
/// benchmarks. Reads share a read lock; a commit takes the write lock for the precondition
/// check and the apply, so it is atomic and linearisable. A [`view`](Store::view) is a copy
/// of the records that shares their persistent maps: taking one holds the read lock for a
/// few reference-count increments, and no commit ever waits for a reader of a view.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: RwLock<StoreState>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the whole state as it is now (e.g. to start other stores from it with
    /// [`from_state`](Self::from_state): a test fixture built once, copied per case).
    pub fn to_state(&self) -> StoreState {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A store starting from `state` (e.g. a copy of another store's state).
    pub fn from_state(state: StoreState) -> Self {
        Self {
            state: RwLock::new(state),
        }
    }
}

#[async_trait]
impl Store for MemoryStore {
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        Ok(self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key))
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        let state = self.state.read().unwrap_or_else(PoisonError::into_inner);
        Ok(keys.iter().map(|key| state.get(key)).collect())
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        Ok(self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .list(collection, prefix))
    }

    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        Ok(self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .events(after, limit))
    }

    async fn query_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        Ok(self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .query_events(query))
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .revision())
    }

    async fn view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        let records = self
            .state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .records()
            .clone();
        Ok(Box::new(RecordsView::new(records)))
    }

    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .commit(changes)
    }
}
