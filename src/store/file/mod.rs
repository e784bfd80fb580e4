//! [`FileStore`]: a durable store in one directory on one machine, with group commit.
//!
//! # Files
//!
//! | file | what |
//! |---|---|
//! | `LOCK` | locked (`flock`) while a store has the directory open |
//! | `journal-<revision>` | journal segments: one framed record per commit after that revision and a batch end after each batch, written in order over zeros made ready ahead of them; only the last is written to, the others are never rewritten |
//! | `snapshot` | every record as of one revision (absent until the first compaction) |
//! | `*.tmp` | a snapshot being written; removed on open |
//!
//! The formats are described in the `journal` and `snapshot` modules' sources; both files
//! start with magic bytes and a format version.
//!
//! # Design notes
//!
//! * **Decided in order, against the accepted state.** A commit's preconditions are checked
//!   under one short lock against the *accepted* records (every commit that passed its
//!   check, durable or not); it then takes the next revision, its records become the
//!   accepted ones, and it is queued for the writer. Commits on the same records therefore
//!   never fight: each is decided after the one before it, without waiting for the disk, and
//!   [`Store::decision_view`] lets the facade decide on the accepted state too.
//! * **Group commit on a writer thread.** One dedicated thread (never an async runtime
//!   thread) takes everything queued, writes it with one write, syncs once, then makes the
//!   batch visible to readers and answers every commit of it. The write lands on space
//!   zeroed and synced beforehand, so the sync writes data blocks only, not the file's
//!   length (about half the time of an appending sync on the machines measured). Revisions are queued in order,
//!   so the journal and durability follow revision order, and a commit decided on an
//!   accepted one can never be durable before it. A lone writer's commit (nothing else in
//!   flight, the last batches of one commit each) is written by its own task instead,
//!   inside `tokio::task::block_in_place` on a multi-threaded runtime, which saves the two
//!   thread wake-ups of the hand-off (see `writer`).
//! * **Readers see durable state only**: [`Store::get`], [`Store::list`] and
//!   [`Store::view`] read the records as of the last synced batch; a view is a clone of
//!   persistent maps, so it never waits for writers and never holds them up.
//! * **The event log stays on disk.** Memory holds the records and a sparse index of the
//!   journal segments (one entry per block of about 128 events, with a Bloom filter of
//!   their types, projects and features: see `event_index`), not the events: a page of the
//!   log is read from the segments on demand, on a blocking thread, so memory does not grow
//!   with the log.
//! * **Compaction off the commit path.** When the active segment passes the threshold the
//!   writer starts a new segment (one extra sync) and hands the records as of the closed one
//!   to a background thread, which writes the snapshot (temp file, sync, rename, sync
//!   directory). Segments are never rewritten: they hold the event log, so a snapshot holds
//!   only the current records and its size does not grow with history.
//!
//! # Durability
//!
//! With durability on (the default), `commit` returns `Ok` only once the commit's record is
//! written and synced (`fdatasync`): after a crash of the process or the machine, every
//! acknowledged commit is there. With durability off (for tests and caches), records are
//! written but not synced: a crash of the machine may lose recently acknowledged commits,
//! never corrupt the store. A crash of the process alone loses nothing either way.

mod accept;
mod compaction;
mod disk;
mod event_index;
mod event_read;
#[cfg(test)]
mod event_tests;
mod journal;
mod open;
#[cfg(test)]
mod sim;
mod snapshot;
mod space;
#[cfg(test)]
mod tests;
mod writer;

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, mpsc};
use std::thread::JoinHandle;

use async_trait::async_trait;

use accept::Acceptor;
use disk::{Disk, OsDisk};
use writer::Failure;

use super::{
    Accepted, ChangeSet, Collection, Event, EventPage, EventQuery, Key, Listing, ReadView, Records,
    RecordsView, Revision, Store, StoreError, Versioned,
};
use event_index::EventIndex;

const LOCK_FILE: &str = "LOCK";
const DEFAULT_COMPACT_AFTER_BYTES: u64 = 64 * 1024 * 1024;
/// Zeroed journal space made ready at a time: one sync of this much every few hundred
/// batches, short enough not to show in a commit's latency (about a millisecond).
const DEFAULT_PREALLOCATE_BYTES: u64 = 256 * 1024;

/// A store that keeps its state in memory and its history in a directory: journal segments
/// and a snapshot, replayed on open.
///
/// * **Reads** of records are served from memory and never touch the disk; they show
///   durable commits only. A [`view`](Store::view) is a consistent copy that costs next to
///   nothing. The event log is not kept in memory: [`Store::query_events`] and
///   [`Store::events`] read the page asked for from the journal segments through a small
///   index (built on open, extended as batches become durable).
/// * **Commits** are decided in order against the accepted state, then appended as one
///   checksummed record each, written over zeroed space (no rewrite of the state, so a commit costs the same however
///   much the store holds) and, by default, synced before they are acknowledged. Commits
///   that arrive while a sync is in flight share the next one (group commit). The writing
///   and syncing happen on a dedicated thread, never on the async runtime.
/// * **Recovery**: [`open`](FileStore::open) replays the journal over the snapshot. A record
///   torn by a crash mid-write (in the last batch of the last segment, whose pages may have
///   reached the disk in any order) is cut off and reported in
///   [`recovery`](FileStore::recovery); damage anywhere else fails with
///   [`StoreError::Corrupt`] naming the file and offset. (Damage to the last batch, or to
///   the end of the one before it, cannot be told from a torn write and is cut off as one.)
/// * **Compaction** writes a snapshot of the records in the background when the active
///   journal segment grows past a threshold, or on demand ([`compact`](FileStore::compact)),
///   crash-safely (temp file, sync, rename, sync directory). The journal segments are kept:
///   they are the event log.
/// * **One process at a time**: the directory is locked while open; a second open fails
///   with [`StoreError::Locked`] (after half a second of asking: a lock just released can
///   linger that long in a child process being spawned).
/// * **A full disk** refuses commits with [`StoreError::OutOfSpace`] and changes nothing;
///   reads go on, and commits are taken again as soon as there is space, without a reopen.
///   Running out of space (or any other failure) while making room for a batch, before any
///   of it is written, leaves the journal as it was: the batch and the commits queued after
///   it (decided on it) are refused, and the next commit tries again.
/// * If **writing or syncing** a batch fails, the commits of that batch fail with
///   [`StoreError::Io`], and so does every later commit until the store is reopened (which
///   recovers what is there): the journal's contents are then unknown, and after a failed
///   `fsync` a later one may report success for pages the kernel dropped (PostgreSQL's rule
///   is to stop, and so is this store's).
///
/// Opening replays the journal on the calling thread (blocking file I/O); dropping the store
/// waits for the writer thread to finish what was queued and for a running compaction.
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
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
    recovery: Recovery,
    /// Held (locked) for the store's lifetime; closing it releases the directory.
    _lock: Option<File>,
}

/// What the async side and the writer and compaction threads share.
struct Shared {
    disk: Arc<dyn Disk>,
    options: Options,
    /// What readers see: every durable commit, nothing else.
    durable: RwLock<Durable>,
    /// Where commits are decided.
    acceptor: Mutex<Acceptor>,
    /// Set (after [`Acceptor::failure`]) when the store stops taking commits: lets a writer
    /// check for a failure before each batch without taking the acceptor lock, which the
    /// committing task may still hold when the writer thread wakes up for its commit.
    failed: AtomicBool,
    /// Set when the last batch was refused for want of space, cleared by the next batch
    /// written: what [`Store::readiness`] reports, since a probe that changes nothing never
    /// makes room (see `space`).
    out_of_space: AtomicBool,
    /// The journal's writing end: held by whoever writes a batch.
    journal: Mutex<writer::Journal>,
    /// Commits accepted and not yet answered by a writer.
    in_flight: AtomicUsize,
    /// How many batches in a row held a single commit (up to [`writer::LONE_STREAK`]): a
    /// lone writer, whose next commit its own task writes when nothing else is in flight
    /// (see `FileStore::accept`).
    lone_batches: AtomicUsize,
    stats: Counters,
    /// Held while a snapshot is written, so that two never write the same temp file.
    snapshotting: Mutex<()>,
    /// Compaction threads to wait for on close.
    compactions: Mutex<Vec<JoinHandle<()>>>,
    /// The last durable revision, whether the store failed, and how many times the accepted
    /// state was rolled back (see `space`): for commits that wait until what they conflicted
    /// with is visible.
    durable_revision: tokio::sync::watch::Sender<(Revision, bool, u64)>,
}

/// The durable state: the records, and the index of the event log (whose events stay in
/// the journal segments, read on demand).
struct Durable {
    records: Records,
    events: EventIndex,
}

#[derive(Debug, Clone, Copy)]
struct Options {
    durable: bool,
    compact_after_bytes: u64,
    /// How much zeroed space the writer makes ready at a time (see `journal`).
    preallocate_bytes: u64,
}

#[derive(Debug, Default)]
struct Counters {
    commits: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    compactions: AtomicU64,
    segments: AtomicU64,
    journal_bytes: AtomicU64,
    longest_batch_micros: AtomicU64,
    inline_batches: AtomicU64,
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

    /// Close the active journal segment when it grows past this many bytes (default
    /// 64 MiB), start a new one, and write a snapshot of the records in the background.
    /// Commits never wait for the snapshot; a lower threshold means more, smaller segment
    /// files and quicker opens.
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
    /// How many journal segments were read.
    pub segments_read: u64,
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
    /// Compactions (snapshots written) completed.
    pub compactions: u64,
    /// The active journal segment's length in bytes.
    pub journal_bytes: u64,
    /// Journal segments created since open (one per rotation).
    pub segments_created: u64,
    /// The longest time one batch took to write and sync: the longest a commit waited
    /// for the disk beyond its own batch's work.
    pub longest_batch: std::time::Duration,
    /// Batches a lone commit's own task wrote, rather than the writer thread (see the
    /// module's design notes); part of `batches`.
    pub inline_batches: u64,
}

impl FileStore {
    /// Open the store in `dir` with default options (durable, a new journal segment and a
    /// snapshot after 64 MiB of journal), creating the directory and an empty store if
    /// needed.
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
                preallocate_bytes: DEFAULT_PREALLOCATE_BYTES,
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
        let stats = &self.shared.stats;
        FileStoreStats {
            commits: stats.commits.load(Ordering::Relaxed),
            batches: stats.batches.load(Ordering::Relaxed),
            syncs: stats.syncs.load(Ordering::Relaxed),
            compactions: stats.compactions.load(Ordering::Relaxed),
            journal_bytes: stats.journal_bytes.load(Ordering::Relaxed),
            segments_created: stats.segments.load(Ordering::Relaxed),
            longest_batch: std::time::Duration::from_micros(
                stats.longest_batch_micros.load(Ordering::Relaxed),
            ),
            inline_batches: stats.inline_batches.load(Ordering::Relaxed),
        }
    }

    fn open_with(dir: PathBuf, options: Options) -> Result<FileStore, StoreError> {
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_error(format!("could not create {}", dir.display()), e))?;
        let lock = lock_dir(&dir)?;
        let mut store = Self::open_on(Arc::new(OsDisk::new(&dir)), options)?;
        store.dir = dir;
        store._lock = Some(lock);
        Ok(store)
    }

    /// Open the store on `disk` (the caller holds whatever lock the disk needs).
    fn open_on(disk: Arc<dyn Disk>, options: Options) -> Result<FileStore, StoreError> {
        let opened = open::recover(disk.as_ref())?;
        let revision = opened.records.revision();
        let (sender, receiver) = mpsc::channel();
        let (wake, woken) = mpsc::channel();
        let stats = Counters::default();
        stats
            .journal_bytes
            .store(opened.active_len, Ordering::Relaxed);
        let shared = Arc::new(Shared {
            disk,
            options,
            acceptor: Mutex::new(Acceptor {
                records: opened.records.clone(),
                failure: None,
                rollbacks: 0,
                queue: Some(sender),
                wake: Some(wake),
            }),
            failed: AtomicBool::new(false),
            out_of_space: AtomicBool::new(false),
            journal: Mutex::new(writer::Journal::new(
                receiver,
                opened.active_segment,
                opened.active_len,
                opened.active_allocated,
            )),
            in_flight: AtomicUsize::new(0),
            lone_batches: AtomicUsize::new(writer::LONE_STREAK),
            durable: RwLock::new(Durable {
                records: opened.records,
                events: opened.events,
            }),
            stats,
            snapshotting: Mutex::new(()),
            compactions: Mutex::new(Vec::new()),
            durable_revision: tokio::sync::watch::Sender::new((revision, false, 0)),
        });
        let writer = writer::spawn(Arc::clone(&shared), woken)?;
        Ok(FileStore {
            dir: PathBuf::new(),
            shared,
            writer: Some(writer),
            recovery: opened.recovery,
            _lock: None,
        })
    }

    fn read_state(&self) -> RwLockReadGuard<'_, Durable> {
        self.shared.read_state()
    }

    /// Run `read` (which reads event blocks from the segments) on a blocking thread.
    async fn read_events<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Shared) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let shared = Arc::clone(&self.shared);
        tokio::task::spawn_blocking(move || read(&shared))
            .await
            .map_err(|e| StoreError::Backend {
                message: format!("reading the event log of {} failed", self.dir.display()),
                source: Some(Box::new(e)),
            })?
    }
}

impl Shared {
    fn read_state(&self) -> RwLockReadGuard<'_, Durable> {
        self.durable.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn describe(&self, name: &str) -> String {
        self.disk.describe(name)
    }
}

impl Drop for FileStore {
    fn drop(&mut self) {
        // Closing the queue lets the writer finish what is queued and stop.
        {
            let mut acceptor = self.shared.acceptor();
            acceptor.queue = None;
            acceptor.wake = None;
        }
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        let running = std::mem::take(
            &mut *self
                .shared
                .compactions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for compaction in running {
            let _ = compaction.join();
        }
    }
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
    let deadline = std::time::Instant::now() + LOCK_PATIENCE;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: dir.display().to_string(),
                });
            }
            Err(TryLockError::Error(e)) => {
                return Err(io_error(format!("could not lock {}", path.display()), e));
            }
        }
    }
}

/// How long `open` keeps asking for a directory lock that is held, before it fails with
/// [`StoreError::Locked`]. A lock that this process has just released (a store dropped and
/// opened again) can still be held for a moment by a child process: a process that another
/// thread is spawning holds a copy of every open file, and with it the lock, from its fork
/// until its exec closes them. A store held open elsewhere is refused after this time.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);
/// The pause between two attempts at the lock.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(5);

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
            .field("durable", &self.shared.options.durable)
            .field(
                "compact_after_bytes",
                &self.shared.options.compact_after_bytes,
            )
            .field("revision", &self.read_state().records.revision())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Store for FileStore {
    async fn readiness(&self) -> Result<(), StoreError> {
        if self.shared.out_of_space.load(Ordering::Acquire) {
            return Err(StoreError::OutOfSpace {
                context: "the last batch was refused because the disk is full; the next commit tries again".to_owned(),
                source: std::io::Error::new(
                    std::io::ErrorKind::StorageFull,
                    "the disk is full",
                ),
            });
        }
        Ok(())
    }

    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        Ok(self.read_state().records.get(key))
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        let records = self.read_state().records.clone();
        Ok(keys.iter().map(|key| records.get(key)).collect())
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        let records = self.read_state().records.clone();
        Ok(records.list(collection, prefix))
    }

    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        if limit == 0 || self.read_state().events.count() <= after {
            return Ok(Vec::new());
        }
        self.read_events(move |shared| event_read::after(shared, after, limit))
            .await
    }

    async fn query_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        if query.limit == 0 {
            return Ok(EventPage::new(
                Vec::new(),
                self.read_state().events.total(query),
            ));
        }
        let query = query.clone();
        self.read_events(move |shared| event_read::query(shared, &query))
            .await
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        Ok(self.read_state().records.revision())
    }

    async fn view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        let records = self.read_state().records.clone();
        Ok(Box::new(RecordsView::new(records)))
    }

    async fn decision_view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        let records = self.shared.acceptor().records.clone();
        Ok(Box::new(RecordsView::new(records)))
    }

    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        self.submit_changes(changes).await?.durable().await
    }

    async fn submit(&self, changes: ChangeSet) -> Result<Accepted, StoreError> {
        self.submit_changes(changes).await
    }
}

/// Work for the writer thread.
pub(super) enum Job {
    /// An accepted commit to make durable.
    Commit {
        revision: Revision,
        /// The change set as JSON: the journal record's payload.
        payload: Vec<u8>,
        /// The accepted records right after this commit (boxed: they are large by value).
        records: Box<Records>,
        /// The commit's events, numbered.
        events: Vec<Event>,
        done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
    },
    /// Start a new segment and write a snapshot now; answer once the snapshot is in place.
    Compact {
        done: tokio::sync::oneshot::Sender<Result<(), StoreError>>,
    },
}
