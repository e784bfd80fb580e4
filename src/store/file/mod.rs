//! [`FileStore`]: a durable store in one directory on one machine, with group commit.
//!
//! # Files
//!
//! | file | what |
//! |---|---|
//! | `LOCK` | locked (`flock`) while a store has the directory open |
//! | `snapshot` | the whole state as of one revision (absent until the first compaction) |
//! | `journal` | one framed record per commit after the snapshot's revision, appended |
//! | `*.tmp` | a compaction in progress; removed on open |
//!
//! The formats are described in the `journal` and `snapshot` modules' sources; both files
//! start with magic bytes and a format version.
//!
//! # Durability
//!
//! With durability on (the default), `commit` returns `Ok` only once the commit's record is
//! written and synced (`fdatasync`): after a crash of the process or the machine, every
//! acknowledged commit is there. With durability off (for tests and caches), records are
//! written but not synced: a crash of the machine may lose recently acknowledged commits,
//! never corrupt the store. A crash of the process alone loses nothing either way.

mod compaction;
mod group_commit;
mod journal;
mod snapshot;

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use tokio::sync::Notify;

#[doc(hidden)]
pub use compaction::CompactionCrash;
use group_commit::Pipeline;

use super::{
    ChangeSet, Collection, Event, Key, Listing, Revision, Store, StoreError, StoreState, Versioned,
};

const LOCK_FILE: &str = "LOCK";
const DEFAULT_COMPACT_AFTER_BYTES: u64 = 64 * 1024 * 1024;

/// A store that keeps its state in memory and its history in a directory: a snapshot plus
/// an append-only journal, replayed on open.
///
/// * **Reads** are served from memory and never touch the disk.
/// * **Commits** append one checksummed record each (no rewrite of the state, so a commit
///   costs the same however much the store holds) and, by default, sync it before
///   returning. Commits that arrive while a sync is in flight share the next one (group
///   commit). A commit becomes visible to readers only once it is durable.
/// * **Recovery**: [`open`](FileStore::open) replays the journal over the snapshot. A record
///   torn by a crash mid-append is cut off and reported in [`recovery`](FileStore::recovery);
///   damage anywhere else fails with [`StoreError::Corrupt`] naming the file and offset.
/// * **Compaction** folds the journal into a new snapshot when it grows past a threshold,
///   or on demand ([`compact`](FileStore::compact)), crash-safely (temp file, sync, rename,
///   sync directory).
/// * **One process at a time**: the directory is locked while open; a second open fails
///   with [`StoreError::Locked`].
/// * If writing or syncing the journal fails, the commits of that batch fail with
///   [`StoreError::Io`], and so does every later commit: after a failed sync the file's
///   contents are unknown, so the store must be reopened (which recovers what is there).
///
/// Opening, committing and compacting do blocking file I/O on the calling thread.
///
/// ```no_run
/// # async fn demo() -> Result<(), toggle_admin::store::StoreError> {
/// use toggle_admin::store::{ChangeSet, Collection, FileStore, Key, Revision, Store};
///
/// let store = FileStore::open("./toggle-admin-data")?;
/// let mut changes = ChangeSet::new();
/// changes
///     .expect_revision(Key::new(Collection::Projects, "default"), Revision::ABSENT)
///     .put(Key::new(Collection::Projects, "default"), serde_json::json!({"name": "Default"}));
/// let revision = store.commit(changes).await?;
/// assert_eq!(store.revision().await?, revision);
/// # Ok(()) }
/// ```
pub struct FileStore {
    dir: PathBuf,
    options: Options,
    /// What readers see: every durable commit, nothing else.
    state: RwLock<StoreState>,
    pipeline: Mutex<Pipeline>,
    /// The append handle; only the leader (see `group_commit`) uses it.
    journal: Mutex<File>,
    /// Wakes commits waiting for a batch to be durable or for the lead to be free.
    notify: Notify,
    stats: Counters,
    recovery: Recovery,
    fail_next_sync: AtomicBool,
    /// Held (locked) for the store's lifetime; closing it releases the directory.
    _lock: File,
}

#[derive(Debug, Clone, Copy)]
struct Options {
    durable: bool,
    compact_after_bytes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    compactions: AtomicU64,
}

/// Options for opening a [`FileStore`]; from [`FileStore::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct FileStoreBuilder {
    dir: PathBuf,
    options: Options,
}

impl FileStoreBuilder {
    /// Whether `commit` syncs the journal before returning (default `true`). Turn it off
    /// only for tests and caches: a machine crash may then lose acknowledged commits (it
    /// never corrupts the store).
    pub fn durable(mut self, durable: bool) -> Self {
        self.options.durable = durable;
        self
    }

    /// Compact when the journal grows past this many bytes (default 64 MiB). Compaction
    /// writes the whole state, so a low threshold trades commit latency for open time.
    pub fn compact_after_bytes(mut self, bytes: u64) -> Self {
        self.options.compact_after_bytes = bytes;
        self
    }

    /// Open (creating it if needed) the store in the directory; see [`FileStore::open`].
    pub fn open(self) -> Result<FileStore, StoreError> {
        FileStore::open_with(self.dir, self.options)
    }
}

/// What [`FileStore::open`] found and repaired.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Recovery {
    /// The revision of the snapshot loaded ([`Revision::ABSENT`] without one).
    pub snapshot_revision: Revision,
    /// How many journal records were applied over the snapshot.
    pub records_replayed: u64,
    /// The damaged end of the journal that was cut off, if any.
    pub truncated_tail: Option<TruncatedTail>,
    /// True if open finished a compaction that a crash interrupted.
    pub finished_compaction: bool,
}

/// The end of a journal cut off on open: a record a crash left half-written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedTail {
    /// Where the cut record started: the journal's length now.
    pub offset: u64,
    /// How many bytes were cut.
    pub bytes: u64,
    /// What was wrong with the record.
    pub reason: String,
}

/// Counters of a [`FileStore`]'s work since it was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FileStoreStats {
    /// Commits written to the journal.
    pub commits: u64,
    /// Batches written: one write (and one sync, when durable) each.
    pub batches: u64,
    /// Journal syncs; fewer than `commits` when commits shared them.
    pub syncs: u64,
    /// Compactions completed.
    pub compactions: u64,
    /// The journal's current length in bytes.
    pub journal_bytes: u64,
}

impl FileStore {
    /// Open the store in `dir` with default options (durable, compaction after 64 MiB of
    /// journal), creating the directory and an empty store if needed.
    ///
    /// Fails with [`StoreError::Locked`] if the directory is open elsewhere,
    /// [`StoreError::Corrupt`] if its files are damaged other than by a torn last record,
    /// and [`StoreError::UnsupportedFormat`] if they were written by a newer version.
    pub fn open(dir: impl AsRef<Path>) -> Result<FileStore, StoreError> {
        Self::builder(dir).open()
    }

    /// Options for opening the store in `dir`.
    pub fn builder(dir: impl AsRef<Path>) -> FileStoreBuilder {
        FileStoreBuilder {
            dir: dir.as_ref().to_path_buf(),
            options: Options {
                durable: true,
                compact_after_bytes: DEFAULT_COMPACT_AFTER_BYTES,
            },
        }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What open found and repaired.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// Counters of the work done since open.
    pub fn stats(&self) -> FileStoreStats {
        FileStoreStats {
            commits: self.stats.commits.load(Ordering::Relaxed),
            batches: self.stats.batches.load(Ordering::Relaxed),
            syncs: self.stats.syncs.load(Ordering::Relaxed),
            compactions: self.stats.compactions.load(Ordering::Relaxed),
            journal_bytes: self.pipeline().journal_len,
        }
    }

    /// Make the next journal sync fail, to test the failure path.
    #[doc(hidden)]
    pub fn fail_next_sync(&self) {
        self.fail_next_sync.store(true, Ordering::Relaxed);
    }

    fn open_with(dir: PathBuf, options: Options) -> Result<FileStore, StoreError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_error(format!("could not create {}", dir.display()), e))?;
        let lock = lock_dir(&dir)?;
        // Leftovers of an interrupted compaction; the files in place hold everything.
        journal::remove_if_exists(&dir.join(snapshot::TEMP_NAME))?;
        journal::remove_if_exists(&dir.join(journal::TEMP_NAME))?;

        let mut state = snapshot::read(&dir)?;
        let mut recovery = Recovery {
            snapshot_revision: state.revision(),
            ..Recovery::default()
        };
        let journal_path = dir.join(journal::FILE_NAME);
        let contents = match std::fs::read(&journal_path) {
            Ok(bytes) => Some(journal::read(&bytes, &journal_path)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(io_error(
                    format!("could not read {}", journal_path.display()),
                    e,
                ));
            }
        };
        let (journal, journal_len) = match contents {
            Some(contents) => {
                if contents.base > state.revision() {
                    return Err(StoreError::Corrupt {
                        file: journal_path.display().to_string(),
                        offset: 12,
                        reason: format!(
                            "the journal starts after {} but the snapshot holds only up to {}",
                            contents.base,
                            state.revision()
                        ),
                    });
                }
                let base = contents.base;
                replay(&mut state, contents.records, &mut recovery, &journal_path)?;
                if let Some(tail) = &contents.torn_tail {
                    tracing::warn!(
                        file = %journal_path.display(),
                        offset = tail.offset,
                        bytes = tail.bytes,
                        reason = %tail.reason,
                        "cut off the torn end of the journal"
                    );
                }
                recovery.truncated_tail = contents.torn_tail;
                if base < recovery.snapshot_revision {
                    // A compaction stopped after its snapshot was in place: finish it.
                    recovery.finished_compaction = true;
                    (finish_compaction(&dir, &state)?, journal::HEADER_LEN)
                } else {
                    let file = open_for_append(&journal_path, contents.valid_len)?;
                    (file, contents.valid_len)
                }
            }
            None if state.revision() == Revision::ABSENT => {
                let file = journal::create_temp(&dir, Revision::ABSENT)?;
                let (from, to) = (dir.join(journal::TEMP_NAME), journal_path.clone());
                std::fs::rename(&from, &to).map_err(|e| {
                    io_error(format!("could not create {}", journal_path.display()), e)
                })?;
                sync_dir(&dir)?;
                (file, journal::HEADER_LEN)
            }
            None => {
                // Compaction never removes the journal, so someone did; the snapshot is all
                // there is. Start a journal after it.
                tracing::warn!(file = %journal_path.display(), "the journal is missing");
                (finish_compaction(&dir, &state)?, journal::HEADER_LEN)
            }
        };
        let revision = state.revision();
        Ok(FileStore {
            dir,
            options,
            state: RwLock::new(state),
            pipeline: Mutex::new(Pipeline::new(revision, journal_len)),
            journal: Mutex::new(journal),
            notify: Notify::new(),
            stats: Counters::default(),
            recovery,
            fail_next_sync: AtomicBool::new(false),
            _lock: lock,
        })
    }

    fn read_state(&self) -> RwLockReadGuard<'_, StoreState> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, StoreState> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Apply the journal's records after the snapshot's revision.
fn replay(
    state: &mut StoreState,
    records: Vec<(Revision, ChangeSet)>,
    recovery: &mut Recovery,
    journal_path: &Path,
) -> Result<(), StoreError> {
    for (revision, changes) in records {
        // Records up to the snapshot's revision are already in it (a compaction stopped
        // before it replaced the journal).
        if revision <= state.revision() {
            continue;
        }
        if revision != state.revision().next() {
            return Err(StoreError::Corrupt {
                file: journal_path.display().to_string(),
                offset: journal::HEADER_LEN,
                reason: format!("the journal skips from {} to {revision}", state.revision()),
            });
        }
        state.apply(changes);
        recovery.records_replayed += 1;
    }
    Ok(())
}

fn finish_compaction(dir: &Path, state: &StoreState) -> Result<File, StoreError> {
    let bytes = snapshot::encode(state)?;
    compaction::rewrite(dir, &bytes, state.revision(), None).map_err(|i| i.error)
}

fn open_for_append(path: &Path, valid_len: u64) -> Result<File, StoreError> {
    let context = || format!("could not open {} for appending", path.display());
    let mut file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| io_error(context(), e))?;
    let len = file.metadata().map_err(|e| io_error(context(), e))?.len();
    if len != valid_len {
        // Cut the torn tail durably, so new records never follow garbage.
        file.set_len(valid_len)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error(format!("could not truncate {}", path.display()), e))?;
    }
    file.seek(SeekFrom::Start(valid_len))
        .map_err(|e| io_error(context(), e))?;
    Ok(file)
}

fn lock_dir(dir: &Path) -> Result<File, StoreError> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| io_error(format!("could not open {}", path.display()), e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked {
            path: dir.display().to_string(),
        }),
        Err(TryLockError::Error(e)) => {
            Err(io_error(format!("could not lock {}", path.display()), e))
        }
    }
}

/// Make renames and creations in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error(format!("could not sync the directory {}", dir.display()), e))
    }
    // Elsewhere a directory cannot be opened to be synced; renames are made durable by the
    // file system's own journal.
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn io_error(context: impl Into<String>, source: std::io::Error) -> StoreError {
    StoreError::Io {
        context: context.into(),
        source,
    }
}

impl fmt::Debug for FileStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileStore")
            .field("dir", &self.dir)
            .field("durable", &self.options.durable)
            .field("compact_after_bytes", &self.options.compact_after_bytes)
            .field("revision", &self.read_state().revision())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Store for FileStore {
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        Ok(self.read_state().get(key))
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        let state = self.read_state();
        Ok(keys.iter().map(|key| state.get(key)).collect())
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        Ok(self.read_state().list(collection, prefix))
    }

    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        Ok(self.read_state().events(after, limit))
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self.read_state().revision())
    }

    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.commit_changes(changes).await
    }
}
