//! A store that misbehaves on purpose: [`Wrapped`] forwards every call to a real store but
//! lets a [`Behaviour`] decide what a commit does (fail, conflict, let another writer in
//! first), what `get_many` answers and what `revision` does, so that a test states only that
//! behaviour.

use std::fmt::Debug;

use toggle_admin::async_trait;
use toggle_admin::store::{
    ChangeSet, Collection, Event, Key, Listing, ReadView, Revision, StoreError, Versioned,
};
use toggle_admin::{MemoryStore, Store};

/// What a [`Wrapped`] store does on a commit, a `get_many` and a `revision`; the default is
/// what `inner` does.
#[async_trait]
pub trait Behaviour: Debug + Send + Sync + 'static {
    async fn commit(
        &self,
        inner: &MemoryStore,
        changes: ChangeSet,
    ) -> Result<Revision, StoreError> {
        inner.commit(changes).await
    }

    async fn get_many(
        &self,
        inner: &MemoryStore,
        keys: &[Key],
    ) -> Result<Vec<Option<Versioned>>, StoreError> {
        inner.get_many(keys).await
    }

    async fn revision(&self, inner: &MemoryStore) -> Result<Revision, StoreError> {
        inner.revision().await
    }
}

/// A MemoryStore with a [`Behaviour`] on commits (and `get_many`, `revision`). `submit` and `decision_view` keep the
/// trait's defaults, so a submit goes through the behaviour's commit too and a decision
/// sees only what the behaviour let through.
#[derive(Debug, Default)]
pub struct Wrapped<B> {
    pub inner: MemoryStore,
    pub behaviour: B,
}

impl<B> Wrapped<B> {
    pub fn new(behaviour: B) -> Self {
        Self {
            inner: MemoryStore::new(),
            behaviour,
        }
    }
}

#[async_trait]
impl<B: Behaviour> Store for Wrapped<B> {
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        self.inner.get(key).await
    }
    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        self.behaviour.get_many(&self.inner, keys).await
    }
    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        self.inner.list(collection, prefix).await
    }
    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        self.inner.events(after, limit).await
    }
    async fn revision(&self) -> Result<Revision, StoreError> {
        self.behaviour.revision(&self.inner).await
    }
    async fn view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        self.inner.view().await
    }
    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.behaviour.commit(&self.inner, changes).await
    }
}
