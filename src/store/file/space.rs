//! Running out of disk space, and the other failures a [`FileStore`](super::FileStore)
//! recovers from by itself.
//!
//! A batch is written in three steps (see `writer`): make room (write zeros past the space
//! already made ready, when the batch does not fit in it), write the batch over those zeros,
//! sync. Which step failed decides what the store does:
//!
//! | step that failed | what is on disk | the store |
//! |---|---|---|
//! | making room | the journal's records as before; past them zeros, or nothing (the zeros are written past every record, never over one) | refuses the batch, and every commit queued after it (they were decided on it), with [`StoreError::OutOfSpace`] when the disk is full; rolls its accepted state back to the durable one; tries again at the next commit |
//! | writing the batch | some of the batch's bytes, maybe, over the zeros after the last record | stops: every later commit fails until the store is reopened |
//! | syncing | unknown: after a failed `fsync` the kernel may have dropped the dirty pages it could not write, and a later sync can report success without them (PostgreSQL's rule since 2018: stop, and recover from the journal) | stops, likewise |
//!
//! A failed write of the batch is not retried in place: the bytes it left would lie under
//! the next batch, and a shorter next batch would leave whole records of the refused one after
//! its end, which recovery could take for commits. Reopening the store reads the journal as
//! it is and cuts off what is not a whole batch.
//!
//! On a full disk making room fails first: the writer makes [`preallocate_bytes`] of zeros
//! ready at a time, so a batch only writes where zeros already were, which on most file
//! systems needs no new blocks. When the full step does not fit, the writer asks only for
//! what the batch needs, so the store fills the disk to its last block before it refuses.
//!
//! [`preallocate_bytes`]: super::Options

use std::io;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use tokio::sync::oneshot;

use super::Job;
use super::Shared;
use super::disk::Disk;
use crate::store::StoreError;

/// How appending a batch to the journal failed.
pub(super) enum AppendError {
    /// Nothing of the batch was written (making room failed): what is on disk is what was
    /// there before, and the store goes on.
    Unwritten(StoreError),
    /// Writing or syncing the batch failed: the journal's contents are unknown until it is
    /// read again, so the store stops.
    Unknown(StoreError),
}

/// Whether `error` says the disk (or the user's quota on it) is full.
pub(super) fn is_out_of_space(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// Write zeros into `segment` from `allocated` up to `target`, or, if the disk is too full
/// for that, up to `needed` (the end of the batch to be written). Returns the segment's new
/// length. Fails with the error of the last attempt; whatever it wrote is zeros past
/// `allocated`.
pub(super) fn make_room(
    disk: &dyn Disk,
    segment: &str,
    allocated: u64,
    needed: u64,
    target: u64,
) -> Result<u64, StoreError> {
    let zeros = |to: u64| vec![0; usize::try_from(to.saturating_sub(allocated)).unwrap_or(0)];
    let error = match disk.write_at(segment, allocated, &zeros(target)) {
        Ok(()) => return Ok(target),
        Err(e) if is_out_of_space(&e) && needed < target => {
            match disk.write_at(segment, allocated, &zeros(needed)) {
                Ok(()) => return Ok(needed),
                Err(e) => e,
            }
        }
        Err(e) => e,
    };
    let context = format!(
        "could not make room for a batch in {}; nothing of it was written, and the next \
         commit tries again",
        disk.describe(segment)
    );
    Err(if is_out_of_space(&error) {
        StoreError::OutOfSpace {
            context,
            source: error,
        }
    } else {
        StoreError::Io {
            context,
            source: error,
        }
    })
}

/// Refuse a batch none of which was written (`waiting`, its commits) with `error`, and
/// every commit queued after it: they were decided on the state the batch's commits made,
/// which will now never be. The accepted state goes back to the durable one, so the next
/// commit is decided on what is on disk, and the store goes on.
///
/// Called by whoever holds the journal, so nothing else takes from `queue`; under the
/// acceptor lock, so nothing is queued meanwhile: once it returns the queue holds only
/// commits decided on the durable state.
pub(super) fn refuse_unwritten(
    shared: &Shared,
    queue: &mpsc::Receiver<Job>,
    error: &StoreError,
    mut waiting: Vec<oneshot::Sender<Result<(), StoreError>>>,
) {
    tracing::warn!(%error, "the journal could not take a batch; its commits are refused, the store goes on");
    metrics::counter!("toggle_admin_store_errors_total", "store" => "file").increment(1);
    shared
        .out_of_space
        .store(error.is_out_of_space(), Ordering::Release);
    let commits = waiting.len();
    let mut compactions = Vec::new();
    let mut acceptor = shared.acceptor();
    while let Ok(job) = queue.try_recv() {
        match job {
            Job::Commit { done, .. } => waiting.push(done),
            Job::Compact { done } => compactions.push(done),
        }
    }
    acceptor.records = shared.read_state().records.clone();
    acceptor.rollbacks += 1;
    let rollbacks = acceptor.rollbacks;
    // Commits waiting for a revision that will now never be durable see this and answer.
    shared
        .durable_revision
        .send_modify(|durable| durable.2 = rollbacks);
    drop(acceptor);
    shared.in_flight.fetch_sub(waiting.len(), Ordering::AcqRel);
    if waiting.len() > commits {
        tracing::warn!(
            refused = waiting.len() - commits,
            "refused the commits queued after it, which were decided on it"
        );
    }
    for done in waiting {
        let _ = done.send(Err(copy(error)));
    }
    for done in compactions {
        let _ = done.send(Err(copy(error)));
    }
}

/// The same error again, for another caller: the kind and message (an I/O error's source
/// cannot be cloned; its kind and text are kept).
pub(super) fn copy(error: &StoreError) -> StoreError {
    let source_of = |source: &io::Error| io::Error::new(source.kind(), source.to_string());
    match error {
        StoreError::OutOfSpace { context, source } => StoreError::OutOfSpace {
            context: context.clone(),
            source: source_of(source),
        },
        StoreError::Io { context, source } => StoreError::Io {
            context: context.clone(),
            source: source_of(source),
        },
        other => StoreError::Io {
            context: other.to_string(),
            source: io::Error::other("the journal could not take the batch"),
        },
    }
}
