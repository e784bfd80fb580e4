//! Compaction: write the records as of a closed journal segment to a new snapshot, on a
//! thread of its own, while commits go on.
//!
//! The steps, each leaving a directory that opens with every committed commit:
//!
//! 1. write the records to `snapshot.tmp` and sync it (a crash leaves a stray temp file,
//!    removed on open);
//! 2. rename it over `snapshot` and sync the directory (a crash before the directory sync
//!    leaves either snapshot, both consistent with the journal, which is never cut).
//!
//! The journal segments stay: they are the event log, and open replays the records of those
//! after the snapshot's revision.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, TryLockError};

use tokio::sync::oneshot;

use super::{Shared, io_error, snapshot};
use crate::store::{Records, StoreError};

/// Write a snapshot of `records` on a new thread. Without `done` (an automatic compaction)
/// nothing happens if a snapshot is being written already; with it, the snapshot is
/// written after that one and `done` answered.
pub(super) fn start(
    shared: &Arc<Shared>,
    records: Records,
    done: Option<oneshot::Sender<Result<(), StoreError>>>,
) {
    let thread_shared = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("toggle-admin-snapshot".to_owned())
        .spawn(move || {
            let shared = thread_shared;
            let guard = match (&done, shared.snapshotting.try_lock()) {
                (_, Ok(guard)) => guard,
                (_, Err(TryLockError::Poisoned(poisoned))) => poisoned.into_inner(),
                (None, Err(TryLockError::WouldBlock)) => return,
                (Some(_), Err(TryLockError::WouldBlock)) => shared
                    .snapshotting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            };
            let started = std::time::Instant::now();
            let result = write_snapshot(&shared, &records);
            drop(guard);
            match &result {
                Ok(()) => {
                    shared.stats.compactions.fetch_add(1, Ordering::Relaxed);
                    // Metric (listed in `http::operations`).
                    metrics::histogram!("toggle_admin_compaction_seconds")
                        .record(started.elapsed().as_secs_f64());
                }
                Err(error) => tracing::warn!(%error, "compaction failed"),
            }
            if let Some(done) = done {
                let _ = done.send(result);
            }
        });
    match spawned {
        Ok(handle) => {
            let mut running = shared
                .compactions
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            running.retain(|h| !h.is_finished());
            running.push(handle);
        }
        Err(e) => tracing::warn!(error = %e, "could not start a compaction thread"),
    }
}

/// Steps 1 and 2 of the module's list.
fn write_snapshot(shared: &Shared, records: &Records) -> Result<(), StoreError> {
    let bytes = snapshot::encode(records)?;
    let disk = &shared.disk;
    let temp = snapshot::TEMP_NAME;
    disk.remove(temp)
        .and_then(|()| disk.create(temp, &bytes))
        .map_err(|e| {
            // A snapshot cut short by a full disk would hold on to the space the journal
            // needs next; the previous snapshot and the journal are intact either way.
            let _ = disk.remove(temp);
            io_error(format!("could not write {}", disk.describe(temp)), e)
        })?;
    disk.rename(temp, snapshot::FILE_NAME)
        .and_then(|()| disk.sync_dir())
        .map_err(|e| {
            io_error(
                format!(
                    "could not rename {} to {}",
                    disk.describe(temp),
                    disk.describe(snapshot::FILE_NAME)
                ),
                e,
            )
        })
}
