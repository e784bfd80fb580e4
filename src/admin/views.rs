//! Deciding in order.
//!
//! (Reading at one revision is `reader.rs`: a [`Reader::View`](super::reader::Reader::View)
//! answers every read of an operation from one revision, so a document built from many
//! records — an export, a feature with its environments, an import's validation — is
//! consistent without retrying on unrelated writes, and without holding writers up.)
//!
//! [`DecisionLocks`] orders the read-decide-commit cycles of writers on the same record:
//! they take the record's lock in FIFO order, decide on the latest *accepted* state
//! ([`Store::decision_view`]), submit, and release the lock before they wait for their
//! commit to be durable. So writers of a hot record neither fight (no conflict retries) nor
//! wait for each other's sync: the store syncs them in one batch.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};

use crate::store::Key;
#[cfg(doc)]
use crate::store::Store;

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
