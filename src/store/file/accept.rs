//! Accepting a commit: check its preconditions against the accepted state, number it and
//! queue it for the journal, all under one short lock (see the design notes of the
//! [`FileStore`] module).

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, mpsc};

use tokio::sync::oneshot;

use super::Job;
use super::writer::{self, Failure};
use super::{FileStore, Shared};
use crate::store::{Accepted, ChangeSet, Records, Revision, StoreError};

/// The accepted state and the queue to the writer, behind one lock: checking, numbering and
/// queueing a commit happen together, so the queue is in revision order.
pub(super) struct Acceptor {
    /// Every accepted commit applied: what the next commit's preconditions are checked
    /// against.
    pub(super) records: Records,
    /// Set when a write or sync failed: the journal's contents are then unknown, so the store
    /// refuses every further commit until it is reopened (and recovery says what survived).
    pub(super) failure: Option<Failure>,
    /// How many times a batch could not be written at all and the accepted state went back
    /// to the durable one (see `space`): a commit refused for a conflict waits for this to
    /// change, or for what it conflicted with to become durable.
    pub(super) rollbacks: u64,
    /// To the journal, in revision order; `None` once the store is closing.
    pub(super) queue: Option<mpsc::Sender<Job>>,
    /// Wakes the writer thread to write what is queued; `None` once the store is closing.
    pub(super) wake: Option<mpsc::Sender<()>>,
}

impl FileStore {
    /// Accept `changes`; on a conflict, answer only once the commits it conflicted with are
    /// visible to reads, so that the caller's re-read sees them instead of spinning on the
    /// state before them (which also spaces out retries by one batch).
    pub(super) async fn submit_changes(&self, changes: ChangeSet) -> Result<Accepted, StoreError> {
        match self.accept(changes) {
            Ok(accepted) => Ok(accepted),
            Err(Refused::Conflict(error, accepted, rollbacks)) => {
                let mut durable = self.shared.durable_revision.subscribe();
                // An error here means the store is closing; the conflict stands either way.
                // A rollback means `accepted` may never be durable.
                let _ = durable
                    .wait_for(|(revision, failed, rolled_back)| {
                        *failed || *revision >= accepted || *rolled_back != rollbacks
                    })
                    .await;
                Err(error)
            }
            Err(Refused::Failed(error)) => Err(error),
        }
    }

    /// Accept `changes`: check, number and queue them; see the module's design notes.
    fn accept(&self, changes: ChangeSet) -> Result<Accepted, Refused> {
        // Encoding is the costly part of accepting; do it outside the lock.
        let payload = serde_json::to_vec(&changes)
            .map_err(|source| StoreError::Encoding {
                what: "a change set".to_owned(),
                source,
            })
            .map_err(Refused::Failed)?;
        let (done, answer) = tokio::sync::oneshot::channel();
        let (revision, inline) = {
            let mut acceptor = self.shared.acceptor();
            if let Some(failure) = &acceptor.failure {
                return Err(Refused::Failed(failure.to_error(&self.shared)));
            }
            if let Err(error) = acceptor.records.check(&changes) {
                return Err(Refused::Conflict(
                    error,
                    acceptor.records.revision(),
                    acceptor.rollbacks,
                ));
            }
            let (revision, events) = acceptor.records.apply(changes.writes, changes.events);
            let job = Job::Commit {
                revision,
                payload,
                records: Box::new(acceptor.records.clone()),
                events,
                done,
            };
            let sent = match &acceptor.queue {
                Some(queue) => queue.send(job).is_ok(),
                None => false,
            };
            if !sent {
                let failure = Failure::closed();
                let error = failure.to_error(&self.shared);
                self.shared.record_failure(&mut acceptor, failure);
                return Err(Refused::Failed(error));
            }
            // A lone commit (nothing else in flight, and the last batches held one commit
            // each) is written by its own task, saving the two thread wake-ups of a hand-off
            // to the writer thread; everything else is the writer thread's.
            let idle = self.shared.in_flight.fetch_add(1, Ordering::AcqRel) == 0;
            let inline = idle
                && self.shared.lone_batches.load(Ordering::Acquire) >= writer::LONE_STREAK
                && writer::can_write_inline();
            if !inline {
                acceptor.wake_writer();
            }
            (revision, inline)
        };
        let shared = Arc::clone(&self.shared);
        let inline = inline.then(|| writer::InlineWrite::new(Arc::clone(&shared)));
        Ok(Accepted::pending(revision, async move {
            if let Some(write) = inline {
                write.run();
            }
            match answer.await {
                Ok(result) => result,
                Err(_) => Err(Failure::closed().to_error(&shared)),
            }
        }))
    }
}

/// Why a change set was not accepted.
enum Refused {
    /// A precondition failed against the accepted state, whose revision is given, after so
    /// many rollbacks.
    Conflict(StoreError, Revision, u64),
    /// The store cannot take commits.
    Failed(StoreError),
}

impl Shared {
    /// The acceptor lock. Nothing panics while holding it in a way that leaves it
    /// half-updated (a check fails before anything changes), so poisoning is ignored.
    pub(super) fn acceptor(&self) -> std::sync::MutexGuard<'_, Acceptor> {
        self.acceptor.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stop taking commits: `failure` under the acceptor lock, and the flag writers check
    /// without it, always together.
    pub(super) fn record_failure(&self, acceptor: &mut Acceptor, failure: Failure) {
        acceptor.failure = Some(failure);
        self.failed.store(true, Ordering::Release);
    }
}

impl Acceptor {
    /// Wake the writer thread to write what is queued; `false` once the store is closing
    /// (the thread's last pass then takes what is queued).
    pub(super) fn wake_writer(&self) -> bool {
        self.wake.as_ref().is_some_and(|wake| wake.send(()).is_ok())
    }
}

impl FileStore {
    /// Start a new journal segment and write a snapshot of the records now; returns once the
    /// snapshot is in place.
    ///
    /// Commits go on meanwhile. The store also does this by itself, in the background,
    /// when the active segment grows past
    /// [`FileStoreBuilder::compact_after_bytes`](super::FileStoreBuilder::compact_after_bytes).
    pub async fn compact(&self) -> Result<(), StoreError> {
        let (done, answer) = oneshot::channel();
        {
            let acceptor = self.shared.acceptor();
            if let Some(failure) = &acceptor.failure {
                return Err(failure.to_error(&self.shared));
            }
            let sent = acceptor
                .queue
                .as_ref()
                .is_some_and(|queue| queue.send(Job::Compact { done }).is_ok())
                && acceptor.wake_writer();
            if !sent {
                return Err(super::Failure::closed().to_error(&self.shared));
            }
        }
        answer
            .await
            .unwrap_or_else(|_| Err(super::Failure::closed().to_error(&self.shared)))
    }
}
