//! Compaction: fold the journal into a new snapshot and start an empty journal.
//!
//! The steps, each leaving a directory that opens with every committed commit:
//!
//! 1. write the state to `snapshot.tmp` and sync it (a crash leaves a stray temp file,
//!    removed on open);
//! 2. rename it over `snapshot` and sync the directory (a crash leaves a snapshot at
//!    revision *S* beside the old journal, whose records up to *S* replay skips);
//! 3. write an empty journal starting after *S* to `journal.tmp` and sync it;
//! 4. rename it over `journal` and sync the directory.
//!
//! Open finishes a compaction that stopped after step 2 (it sees a journal that starts
//! before the snapshot) by running all four steps again.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::group_commit::{Failure, Leadership};
use super::{FileStore, io_error, journal, snapshot, sync_dir};
use crate::store::{Revision, StoreError};

/// Where [`FileStore::compact_with_crash_at`] stops, as if the process died there.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionCrash {
    /// The new snapshot is written and synced under its temporary name.
    AfterSnapshotTempWritten,
    /// The new snapshot is in place; the old journal is still there.
    AfterSnapshotRenamed,
    /// The new empty journal is written under its temporary name, not yet in place.
    AfterJournalTempWritten,
}

/// How a compaction stopped short.
pub(super) struct Interrupted {
    /// What went wrong.
    pub(super) error: StoreError,
    /// The journal was renamed but the rename may not be durable: appending to either file
    /// could lose commits, so the store must stop taking them.
    pub(super) must_stop: bool,
}

impl From<StoreError> for Interrupted {
    fn from(error: StoreError) -> Self {
        Self {
            error,
            must_stop: false,
        }
    }
}

fn simulated(step: CompactionCrash) -> Interrupted {
    Interrupted {
        error: io_error(
            "compaction stopped",
            std::io::Error::other(format!("simulated crash {step:?}")),
        ),
        must_stop: true,
    }
}

/// Run the four steps for a state at `revision` encoded as `snapshot_bytes`; returns the new
/// journal, positioned for appending.
pub(super) fn rewrite(
    dir: &Path,
    snapshot_bytes: &[u8],
    revision: Revision,
    crash: Option<CompactionCrash>,
) -> Result<File, Interrupted> {
    snapshot::write_temp(dir, snapshot_bytes)?;
    if crash == Some(CompactionCrash::AfterSnapshotTempWritten) {
        return Err(simulated(CompactionCrash::AfterSnapshotTempWritten));
    }
    rename(dir, snapshot::TEMP_NAME, snapshot::FILE_NAME)?;
    // If this sync fails the rename may or may not survive a crash; either snapshot is
    // consistent with the journal still in place, which keeps being appended to.
    sync_dir(dir)?;
    if crash == Some(CompactionCrash::AfterSnapshotRenamed) {
        return Err(simulated(CompactionCrash::AfterSnapshotRenamed));
    }
    let file = journal::create_temp(dir, revision)?;
    if crash == Some(CompactionCrash::AfterJournalTempWritten) {
        return Err(simulated(CompactionCrash::AfterJournalTempWritten));
    }
    rename(dir, journal::TEMP_NAME, journal::FILE_NAME)?;
    sync_dir(dir).map_err(|error| Interrupted {
        error,
        must_stop: true,
    })?;
    Ok(file)
}

fn rename(dir: &Path, from: &str, to: &str) -> Result<(), StoreError> {
    let (from, to) = (dir.join(from), dir.join(to));
    std::fs::rename(&from, &to).map_err(|e| {
        io_error(
            format!("could not rename {} to {}", from.display(), to.display()),
            e,
        )
    })
}

impl FileStore {
    /// Fold the journal into a new snapshot now and start an empty journal.
    ///
    /// Waits for commits in flight, and holds new ones back while it runs; it costs a
    /// write of the whole state. The store also compacts by itself when the journal grows
    /// past [`FileStoreBuilder::compact_after_bytes`](super::FileStoreBuilder::compact_after_bytes).
    pub async fn compact(&self) -> Result<(), StoreError> {
        self.compact_at(None).await
    }

    /// Compact, but stop at `step` as if the process crashed there. The store then takes
    /// no more commits; drop it and reopen the directory. For crash tests only.
    #[doc(hidden)]
    pub async fn compact_with_crash_at(&self, step: CompactionCrash) -> Result<(), StoreError> {
        self.compact_at(Some(step)).await
    }

    async fn compact_at(&self, crash: Option<CompactionCrash>) -> Result<(), StoreError> {
        loop {
            let mut notified = std::pin::pin!(self.notify.notified());
            {
                let mut pipeline = self.pipeline();
                if let Some(failure) = &pipeline.failure {
                    return Err(failure.to_error(self));
                }
                if !pipeline.busy {
                    let leadership = Leadership::take(self, &mut pipeline);
                    drop(pipeline);
                    let result = self.compact_while_leading(crash);
                    drop(leadership);
                    return result;
                }
                notified.as_mut().enable();
            }
            notified.await;
        }
    }

    /// Compact; the caller holds the [`Leadership`], so no batch is written meanwhile and
    /// the visible state is exactly the journal's.
    pub(super) fn compact_while_leading(
        &self,
        crash: Option<CompactionCrash>,
    ) -> Result<(), StoreError> {
        let (bytes, revision) = {
            let state = self.read_state();
            (snapshot::encode(&state)?, state.revision())
        };
        match rewrite(&self.dir, &bytes, revision, crash) {
            Ok(file) => {
                *self
                    .journal
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = file;
                self.pipeline().journal_len = journal::HEADER_LEN;
                self.stats.compactions.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(Interrupted { error, must_stop }) => {
                if must_stop {
                    self.pipeline().failure = Some(Failure::from_error(&error));
                }
                Err(error)
            }
        }
    }
}
