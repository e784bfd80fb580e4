//! Group commit: commits that arrive while the journal is being written and synced wait
//! together, and the next of them to run writes them all with one `write` and one sync.
//!
//! A commit is *accepted* under the pipeline lock: its preconditions are checked against
//! the visible state overlaid with every commit accepted before it but not yet durable, it
//! takes the next revision, and its framed record joins the pending batch. Then it waits
//! until its revision is durable. Whoever finds no write in flight becomes the *leader*: it
//! takes the whole pending batch, appends it, syncs once, applies the batch to the visible
//! state, and wakes everyone waiting. A commit is visible to readers only once it is
//! durable, and the journal order is the revision order because revisions are handed out
//! and records queued under the same lock.

use std::collections::HashMap;
use std::io::Write as _;
use std::pin::pin;
use std::sync::MutexGuard;
use std::sync::atomic::Ordering;

use super::{FileStore, io_error};
use crate::store::{ChangeSet, Collection, Key, Revision, StoreError, StoreState, Write};

/// The writer side of a file store, behind its pipeline lock.
#[derive(Debug)]
pub(super) struct Pipeline {
    /// The revision of the last accepted commit.
    pub(super) accepted: Revision,
    /// The revision of the last commit written, synced and applied to the visible state.
    pub(super) durable: Revision,
    /// Accepted commits waiting for a leader, in revision order.
    pending: Vec<Pending>,
    /// What the accepted but not yet durable commits wrote.
    overlay: Overlay,
    /// A leader is writing, syncing or compacting; nobody else touches the files.
    pub(super) busy: bool,
    /// Set when a write or sync failed: the journal's contents are then unknown, so the store
    /// refuses every further commit until it is reopened (and recovery says what survived).
    pub(super) failure: Option<Failure>,
    /// The journal's length in bytes, for the compaction threshold.
    pub(super) journal_len: u64,
}

impl Pipeline {
    /// A pipeline over a journal of `journal_len` bytes whose last commit is `revision`.
    pub(super) fn new(revision: Revision, journal_len: u64) -> Self {
        Self {
            accepted: revision,
            durable: revision,
            pending: Vec::new(),
            overlay: Overlay::default(),
            busy: false,
            failure: None,
            journal_len,
        }
    }
}

/// Why a store stopped taking commits.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    kind: std::io::ErrorKind,
    message: String,
}

impl Failure {
    /// A failure described by `error`.
    pub(super) fn from_error(error: &StoreError) -> Self {
        let kind = match error {
            StoreError::Io { source, .. } => source.kind(),
            _ => std::io::ErrorKind::Other,
        };
        Self {
            kind,
            message: error.to_string(),
        }
    }

    pub(super) fn to_error(&self, store: &FileStore) -> StoreError {
        io_error(
            format!(
                "the file store at {} takes no more commits until it is reopened",
                store.dir.display()
            ),
            std::io::Error::new(self.kind, self.message.clone()),
        )
    }
}

/// An accepted commit waiting to be written.
#[derive(Debug)]
struct Pending {
    revision: Revision,
    record: Vec<u8>,
    changes: ChangeSet,
}

/// The effect of the accepted but not yet durable commits on what preconditions look at.
/// It stays small (it holds only the in-flight commits) and is pruned after every batch.
#[derive(Debug, Default)]
struct Overlay {
    /// Per written key: its revision after the pending commits ([`Revision::ABSENT`] when
    /// deleted) and the revision of the commit that wrote it.
    records: HashMap<Key, (Revision, Revision)>,
    /// Per written collection: the revision of the last pending commit that changed it.
    collections: HashMap<Collection, Revision>,
}

/// Why a change set's preconditions do not hold.
enum Refusal {
    /// A visible commit changed what was read.
    Visible(StoreError),
    /// A commit not yet durable did: the conflict is reported once that commit is visible,
    /// so that the caller's re-read sees the change instead of spinning on stale data.
    Pending(StoreError, Revision),
}

impl Overlay {
    /// Check `changes`' preconditions against `state` as the pending commits will leave it.
    fn check(&self, state: &StoreState, changes: &ChangeSet) -> Result<(), Refusal> {
        use crate::store::Precondition;
        let mut rest = Vec::new();
        for precondition in &changes.preconditions {
            match precondition {
                Precondition::Record { key, revision } => match self.records.get(key) {
                    Some((current, written)) if current != revision => {
                        let error = StoreError::Conflict(key.to_string());
                        return Err(Refusal::Pending(error, *written));
                    }
                    Some(_) => {}
                    None => rest.push(precondition.clone()),
                },
                Precondition::CollectionUnchanged {
                    collection,
                    revision,
                } => match self.collections.get(collection) {
                    Some(written) if written > revision => {
                        let error = StoreError::Conflict(format!("collection {collection}"));
                        return Err(Refusal::Pending(error, *written));
                    }
                    Some(_) => {}
                    None => rest.push(precondition.clone()),
                },
            }
        }
        if rest.is_empty() {
            return Ok(());
        }
        state
            .check(&ChangeSet {
                preconditions: rest,
                ..ChangeSet::default()
            })
            .map_err(Refusal::Visible)
    }

    /// Note what commit `revision` writes, mirroring [`StoreState::apply`]: a delete of a
    /// record that does not exist changes nothing.
    fn record(&mut self, state: &StoreState, revision: Revision, changes: &ChangeSet) {
        for write in &changes.writes {
            match write {
                Write::Put { key, .. } => {
                    self.records.insert(key.clone(), (revision, revision));
                    self.collections.insert(key.collection, revision);
                }
                Write::Delete { key } => {
                    let exists = match self.records.get(key) {
                        Some((current, _)) => *current != Revision::ABSENT,
                        None => state.get(key).is_some(),
                    };
                    if exists {
                        self.records
                            .insert(key.clone(), (Revision::ABSENT, revision));
                        self.collections.insert(key.collection, revision);
                    }
                }
            }
        }
    }

    /// Drop what commits up to `durable` wrote: the visible state shows it now.
    fn forget_up_to(&mut self, durable: Revision) {
        self.records.retain(|_, (_, written)| *written > durable);
        self.collections.retain(|_, written| *written > durable);
    }
}

/// The pipeline's busy flag, held by one leader; released (and everyone woken) on drop,
/// also if the leader panics, so that waiters never hang.
pub(super) struct Leadership<'a> {
    store: &'a FileStore,
}

impl<'a> Leadership<'a> {
    /// Take the lead; the caller has checked that nobody holds it.
    pub(super) fn take(store: &'a FileStore, pipeline: &mut Pipeline) -> Self {
        debug_assert!(!pipeline.busy);
        pipeline.busy = true;
        Self { store }
    }
}

impl Drop for Leadership<'_> {
    fn drop(&mut self) {
        let mut pipeline = self.store.pipeline();
        pipeline.busy = false;
        if std::thread::panicking() && pipeline.failure.is_none() {
            pipeline.failure = Some(Failure {
                kind: std::io::ErrorKind::Other,
                message: "a commit panicked while writing the journal".to_owned(),
            });
        }
        drop(pipeline);
        self.store.notify.notify_waiters();
    }
}

/// Flushes the pending batch if a commit is abandoned (its future dropped) while waiting,
/// so that what it queued does not wait for the next commit to be written.
struct Abandoned<'a> {
    store: &'a FileStore,
    armed: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if self.armed {
            let pipeline = self.store.pipeline();
            if !pipeline.busy && !pipeline.pending.is_empty() {
                self.store.lead(pipeline);
            }
        }
    }
}

impl FileStore {
    /// The pipeline lock. A panic while holding it cannot leave it half-updated in a way
    /// that matters (see [`Leadership`]), so poisoning is ignored.
    pub(super) fn pipeline(&self) -> MutexGuard<'_, Pipeline> {
        self.pipeline
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Accept `changes`, then wait until they are durable and visible.
    pub(super) async fn commit_changes(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        // Encoding is the costly part of accepting; do it outside the lock.
        let payload = serde_json::to_vec(&changes).map_err(|source| StoreError::Encoding {
            what: "a change set".to_owned(),
            source,
        })?;
        let accepted = {
            let mut pipeline = self.pipeline();
            if let Some(failure) = &pipeline.failure {
                return Err(failure.to_error(self));
            }
            let state = self.read_state();
            match pipeline.overlay.check(&state, &changes) {
                Ok(()) => {
                    let revision = pipeline.accepted.next();
                    let record = super::journal::frame(revision, &payload)?;
                    pipeline.overlay.record(&state, revision, &changes);
                    pipeline.pending.push(Pending {
                        revision,
                        record,
                        changes,
                    });
                    pipeline.accepted = revision;
                    Ok(revision)
                }
                Err(refusal) => Err(refusal),
            }
        };
        let revision = match accepted {
            Ok(revision) => revision,
            Err(Refusal::Visible(error)) => return Err(error),
            Err(Refusal::Pending(error, until)) => {
                // Waiting (or leading the batch) also makes progress certain when retrying
                // callers keep every runtime thread busy.
                self.wait_until_durable(until).await?;
                return Err(error);
            }
        };
        let mut abandoned = Abandoned {
            store: self,
            armed: true,
        };
        let result = self.wait_until_durable(revision).await;
        abandoned.armed = false;
        result
    }

    async fn wait_until_durable(&self, revision: Revision) -> Result<Revision, StoreError> {
        loop {
            let mut notified = pin!(self.notify.notified());
            {
                let pipeline = self.pipeline();
                if pipeline.durable >= revision {
                    return Ok(revision);
                }
                if let Some(failure) = &pipeline.failure {
                    return Err(failure.to_error(self));
                }
                if !pipeline.busy {
                    self.lead(pipeline);
                    continue;
                }
                // Registered before the lock is released, so the leader's wake-up cannot be
                // missed between here and the await.
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Write, sync and apply the pending batch; then compact if the journal grew past the
    /// threshold. Blocks the calling thread for the I/O: one sync is what a commit costs.
    fn lead(&self, mut pipeline: MutexGuard<'_, Pipeline>) {
        let batch = std::mem::take(&mut pipeline.pending);
        let Some(last) = batch.last().map(|p| p.revision) else {
            return;
        };
        let leadership = Leadership::take(self, &mut pipeline);
        drop(pipeline);

        let written = self.append(&batch);

        let mut pipeline = self.pipeline();
        match written {
            Ok(bytes) => {
                let mut state = self.write_state();
                for pending in batch {
                    state.apply(pending.changes);
                }
                drop(state);
                pipeline.durable = last;
                pipeline.overlay.forget_up_to(last);
                pipeline.journal_len += bytes;
            }
            Err(error) => {
                tracing::error!(
                    dir = %self.dir.display(),
                    %error,
                    "journal write failed; the file store refuses further commits"
                );
                pipeline.failure = Some(Failure::from_error(&error));
            }
        }
        let compact =
            pipeline.failure.is_none() && pipeline.journal_len > self.options.compact_after_bytes;
        drop(pipeline);
        if compact {
            // This batch's committers may return while the leader compacts.
            self.notify.notify_waiters();
            if let Err(error) = self.compact_while_leading(None) {
                tracing::warn!(dir = %self.dir.display(), %error, "compaction failed");
            }
        }
        drop(leadership);
    }

    /// Append the batch's records with one write and, if durable, one sync. Returns the
    /// number of bytes appended.
    fn append(&self, batch: &[Pending]) -> Result<u64, StoreError> {
        let mut bytes = Vec::with_capacity(batch.iter().map(|p| p.record.len()).sum());
        for pending in batch {
            bytes.extend_from_slice(&pending.record);
        }
        let path = self.dir.join(super::journal::FILE_NAME);
        let mut journal = self
            .journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        journal
            .write_all(&bytes)
            .map_err(|e| io_error(format!("could not append to {}", path.display()), e))?;
        if self.options.durable {
            if self.fail_next_sync.swap(false, Ordering::Relaxed) {
                return Err(io_error(
                    format!("could not sync {}", path.display()),
                    std::io::Error::other("injected sync failure"),
                ));
            }
            journal
                .sync_data()
                .map_err(|e| io_error(format!("could not sync {}", path.display()), e))?;
            self.stats.syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.stats
            .commits
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        self.stats.batches.fetch_add(1, Ordering::Relaxed);
        Ok(bytes.len() as u64)
    }
}
