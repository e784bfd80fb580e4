//! The journal's writer: group commit, on a thread of its own or, for a lone commit, inline.
//!
//! Accepted commits arrive in revision order on a channel. The thread takes everything
//! queued, appends it to the active journal segment with one write, syncs once, makes the
//! batch visible to readers, and answers every commit of it. While it syncs, new commits
//! queue up and form the next batch, so one sync serves as many commits as arrive during
//! the previous one. When the segment grows past the threshold the thread starts a new
//! segment and hands a snapshot to a compaction thread; it never waits for that snapshot.
//!
//! Under concurrency this thread is the bottleneck (busy ~97 % of the time with 16 writers,
//! ~86 % of that in `fdatasync`), so it does as little else as it can: commits arrive already
//! encoded (by the committing task, outside the acceptor lock), and it blocks rather than
//! spins while the queue is empty. Both alternatives were measured and were slower: encoding
//! on this thread lowered 16 writers' throughput by about a tenth, and spinning after a batch
//! for the next commit slowed a lone writer on a 2-core machine (the spinning thread takes the
//! core the next request needs). BENCHMARKS.md, "What did not help", has the figures.
//!
//! # A lone writer writes its own commit
//!
//! Handing a commit to this thread costs two thread wake-ups on its path: the thread's, to
//! write it, and the committing task's worker's, to take the answer (about 25 and 20 µs each
//! on the 2-vCPU machine measured, a third of a lone commit's time beyond its sync). So when
//! a commit is accepted with nothing else in flight and the last [`LONE_STREAK`] batches
//! held one commit each (a lone writer: one client, or a quiet spell), its own task writes
//! the queue's first batch (which holds its commit) inside
//! [`tokio::task::block_in_place`]: Tokio first hands the worker's other tasks to another
//! thread, so the runtime never stalls on the sync. Only on
//! a multi-threaded Tokio runtime (elsewhere `block_in_place` is not available); a commit
//! whose task drops it before writing wakes this thread instead ([`InlineWrite`]'s `Drop`).
//! Order and group commit are unchanged: every commit is queued in revision order under the
//! acceptor lock, whoever holds [`Journal`] writes the queue's head, and under concurrency
//! (commits in flight, batches of more than one) everything stays with this thread.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::Job;
use super::event_index::EventKeys;
use super::space::{self, AppendError};
use super::{Shared, compaction, io_error, journal};
use crate::store::{Event, Records, Revision, StoreError};

/// The most commits one batch takes, so that one very long queue is not one huge write.
const MAX_BATCH: usize = 4096;
/// The longest a batch waits for more commits (see `Writer::gather`).
const MAX_GATHER: Duration = Duration::from_millis(2);
/// How many single-commit batches in a row make a lone writer, whose commits are written
/// inline. More than one: under concurrency a batch of one now and then is common, and an
/// inline write then moves a busy worker's queue of tasks to another thread, which on a
/// saturated machine waits for a core (measured at 16 connections: a maximum latency of
/// 11–50 ms with a streak of one, 9–13 ms with eight; BENCHMARKS.md, "Durability costs").
pub(super) const LONE_STREAK: usize = 8;

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

    /// The store is closing: the writer is gone.
    pub(super) fn closed() -> Self {
        Self {
            kind: std::io::ErrorKind::BrokenPipe,
            message: "the store is closing".to_owned(),
        }
    }

    pub(super) fn to_error(&self, shared: &Shared) -> StoreError {
        io_error(
            format!(
                "the file store at {} takes no more commits until it is reopened (a write or \
                 sync of its journal failed, so what the journal holds is unknown until it is \
                 read again)",
                shared.describe("")
            ),
            std::io::Error::new(self.kind, self.message.clone()),
        )
    }
}

/// The journal's writing end: the queue of accepted commits (in revision order) and the
/// active segment. Whoever holds it writes the next batch: the writer thread, or a lone
/// committer inline (see [`InlineWrite`]).
pub(super) struct Journal {
    queue: mpsc::Receiver<Job>,
    writer: Writer,
}

impl Journal {
    /// The journal writing to `segment` from byte `len` (the segment is `allocated` bytes
    /// long, zeros after `len`), taking the commits sent to `queue`.
    pub(super) fn new(
        queue: mpsc::Receiver<Job>,
        segment: String,
        len: u64,
        allocated: u64,
    ) -> Self {
        Self {
            queue,
            writer: Writer {
                previous_batch: 0,
                last_write: Duration::ZERO,
                segment,
                len,
                allocated,
            },
        }
    }
}

/// Start the writer thread. It writes whenever woken through `wake` (a token per commit
/// queued for it), and once more when `wake` closes, then ends.
pub(super) fn spawn(
    shared: Arc<Shared>,
    wake: mpsc::Receiver<()>,
) -> Result<JoinHandle<()>, StoreError> {
    std::thread::Builder::new()
        .name("toggle-admin-journal".to_owned())
        .spawn(move || {
            while wake.recv().is_ok() {
                // One pass writes everything queued, however many tokens announced it.
                while wake.try_recv().is_ok() {}
                drain(&shared, Pass::Thread);
            }
            drain(&shared, Pass::Thread);
        })
        .map_err(|e| io_error("could not start the journal writer thread", e))
}

/// Who writes, and so how much.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The writer thread: everything queued, batch after batch, gathering (see
    /// `Writer::gather`).
    Thread,
    /// A lone committer inline: one batch (which holds its own commit), no gathering.
    Inline,
}

/// Write what is queued, as `pass` says.
fn drain(shared: &Arc<Shared>, pass: Pass) {
    let mut journal = shared
        .journal
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let Journal { queue, writer } = &mut *journal;
    while let Ok(first) = queue.try_recv() {
        let mut batch = Batch {
            bytes: Vec::new(),
            last: None,
            framed: Vec::new(),
            waiting: Vec::new(),
            compactions: Vec::new(),
        };
        writer.add(shared, &mut batch, first);
        while batch.waiting.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => writer.add(shared, &mut batch, job),
                Err(_) => break,
            }
        }
        if pass == Pass::Thread {
            writer.gather(shared, queue, &mut batch);
        }
        let size = batch.waiting.len();
        let started = Instant::now();
        writer.write(shared, queue, batch);
        if size > 0 {
            writer.previous_batch = size;
            writer.last_write = started.elapsed();
            if pass == Pass::Inline {
                shared.stats.inline_batches.fetch_add(1, Ordering::Relaxed);
            }
        }
        if pass == Pass::Inline {
            break;
        }
    }
}

/// Whether the calling task may write its own commit: on a multi-threaded Tokio runtime,
/// where [`tokio::task::block_in_place`] first hands the worker's other tasks to another
/// thread, so the runtime never stalls on the sync. Elsewhere (a current-thread runtime, no
/// Tokio) the writer thread writes every commit.
pub(super) fn can_write_inline() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// A lone commit that its own task writes (see the module's notes): run it, or, if the
/// task cannot or the future is dropped first, leave it to the writer thread.
pub(super) struct InlineWrite {
    shared: Arc<Shared>,
    written: bool,
}

impl InlineWrite {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            written: false,
        }
    }

    /// Write the queue's first batch (which holds this commit, unless the writer thread took
    /// it already) on this thread.
    pub(super) fn run(mut self) {
        if can_write_inline() {
            let shared = Arc::clone(&self.shared);
            tokio::task::block_in_place(|| drain(&shared, Pass::Inline));
            self.written = true;
        }
    }
}

impl Drop for InlineWrite {
    fn drop(&mut self) {
        if !self.written {
            // The commit is queued in order already; the thread writes it with the rest.
            // Without a wake sender the store is closing, and the thread's last pass takes it.
            self.shared.acceptor().wake_writer();
        }
    }
}

struct Writer {
    /// How many commits the previous batch held, and how long writing it took: what
    /// `gather` goes by.
    previous_batch: usize,
    last_write: Duration,
    /// The active segment's name.
    segment: String,
    /// Where the active segment's records end: where the next batch is written.
    len: u64,
    /// The active segment's length on disk: `len` and the zeros made ready after it.
    allocated: u64,
}

/// One batch: the framed records and who to answer.
struct Batch {
    bytes: Vec<u8>,
    last: Option<(Revision, Records)>,
    /// Each record's span in `bytes` and its events, for the event index.
    framed: Vec<(usize, usize, Vec<Event>)>,
    waiting: Vec<oneshot::Sender<Result<(), StoreError>>>,
    compactions: Vec<oneshot::Sender<Result<(), StoreError>>>,
}

impl Writer {
    /// Wait a little for more commits when the batch is smaller than the one before: under
    /// concurrency, clients answered by the previous batch are deciding their next commits
    /// right now, and one sync for all of them beats two syncs (one for the first, one for
    /// the rest). The wait is bounded by a quarter of the last write's duration (so it is
    /// worth at most a quarter of a sync) and by [`MAX_GATHER`]; a lone writer (previous batch
    /// of one) never waits.
    fn gather(&self, shared: &Shared, queue: &mpsc::Receiver<Job>, batch: &mut Batch) {
        let target = self.previous_batch.min(MAX_BATCH);
        if batch.waiting.is_empty() || batch.waiting.len() >= target {
            return;
        }
        let deadline = Instant::now() + (self.last_write / 4).min(MAX_GATHER);
        while batch.waiting.len() < target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match queue.recv_timeout(left) {
                Ok(job) => self.add(shared, batch, job),
                Err(_) => break,
            }
        }
    }

    fn add(&self, shared: &Shared, batch: &mut Batch, job: Job) {
        match job {
            Job::Commit {
                revision,
                payload,
                records,
                events,
                done,
            } => {
                match journal::frame(revision, &payload) {
                    Ok(record) => {
                        let start = batch.bytes.len();
                        batch.bytes.extend_from_slice(&record);
                        batch.framed.push((start, batch.bytes.len(), events));
                    }
                    Err(error) => {
                        // Only a change set over 4 GiB gets here; it was accepted, so later
                        // commits may depend on it: the store must stop.
                        fail(shared, &error);
                    }
                }
                batch.last = Some((revision, *records));
                batch.waiting.push(done);
            }
            Job::Compact { done } => batch.compactions.push(done),
        }
    }

    fn write(&mut self, shared: &Arc<Shared>, queue: &mpsc::Receiver<Job>, batch: Batch) {
        let started = Instant::now();
        if let Some((revision, records)) = batch.last {
            // Where the batch lands in the segment.
            let base = self.len;
            let mut bytes = batch.bytes;
            bytes.extend_from_slice(&journal::batch_end(revision));
            let written = match failure(shared) {
                Some(failure) => Err(AppendError::Unknown(failure.to_error(shared))),
                None => self.append(shared, &bytes),
            };
            match written {
                Ok(()) => {
                    {
                        // Records and events become visible together, and only now that
                        // they are durable.
                        let mut durable = shared
                            .durable
                            .write()
                            .unwrap_or_else(PoisonError::into_inner);
                        durable.records = records;
                        for (start, end, events) in &batch.framed {
                            let keys: Vec<EventKeys<'_>> =
                                events.iter().map(|e| EventKeys::of(&e.event)).collect();
                            durable.events.add_record(
                                &self.segment,
                                base + *start as u64,
                                base + *end as u64,
                                &keys,
                            );
                        }
                    }
                    shared
                        .durable_revision
                        .send_modify(|durable| durable.0 = revision);
                    shared.out_of_space.store(false, Ordering::Release);
                    let stats = &shared.stats;
                    stats
                        .commits
                        .fetch_add(batch.waiting.len() as u64, Ordering::Relaxed);
                    stats.batches.fetch_add(1, Ordering::Relaxed);
                    stats
                        .longest_batch_micros
                        .fetch_max(elapsed_micros(started), Ordering::Relaxed);
                    // Metrics (listed in `http::operations`).
                    let commits = batch.waiting.len();
                    metrics::counter!("toggle_admin_commits_total", "store" => "file")
                        .increment(commits as u64);
                    metrics::histogram!("toggle_admin_commit_batch_size").record(commits as f64);
                    metrics::histogram!("toggle_admin_journal_sync_seconds")
                        .record(started.elapsed().as_secs_f64());
                    // Before the answers, so that a client answered here finds the journal
                    // idle when it commits next (see `FileStore::accept`).
                    let streak = shared.lone_batches.load(Ordering::Acquire);
                    let streak = if commits == 1 {
                        (streak + 1).min(LONE_STREAK)
                    } else {
                        0
                    };
                    shared.lone_batches.store(streak, Ordering::Release);
                    shared.in_flight.fetch_sub(commits, Ordering::AcqRel);
                    for done in batch.waiting {
                        let _ = done.send(Ok(()));
                    }
                    if self.len > shared.options.compact_after_bytes {
                        self.rotate(shared, revision, None);
                    }
                }
                Err(AppendError::Unwritten(error)) => {
                    space::refuse_unwritten(shared, queue, &error, batch.waiting);
                }
                Err(AppendError::Unknown(error)) => {
                    fail(shared, &error);
                    shared
                        .in_flight
                        .fetch_sub(batch.waiting.len(), Ordering::AcqRel);
                    for done in batch.waiting {
                        let failure = Failure::from_error(&error);
                        let _ = done.send(Err(failure.to_error(shared)));
                    }
                }
            }
        }
        for done in batch.compactions {
            if let Some(failure) = failure(shared) {
                let _ = done.send(Err(failure.to_error(shared)));
                continue;
            }
            let revision = shared.read_state().records.revision();
            self.rotate(shared, revision, Some(done));
        }
    }

    /// Write `bytes` (whole records and a batch end) after the active segment's records and,
    /// if durable, sync it. Past the zeroed space, first make the next
    /// [`preallocate_bytes`](super::Options) ready: written as zeros, synced with the batch.
    /// A failure to make room leaves the journal as it was; a failed write or sync does not
    /// (see `space`).
    fn append(&mut self, shared: &Shared, bytes: &[u8]) -> Result<(), AppendError> {
        let disk = &shared.disk;
        let failed = |what: &str, e| {
            AppendError::Unknown(io_error(
                format!("could not {what} {}", disk.describe(&self.segment)),
                e,
            ))
        };
        let end = self.len + bytes.len() as u64;
        if end > self.allocated {
            let target = end + shared.options.preallocate_bytes;
            self.allocated =
                space::make_room(disk.as_ref(), &self.segment, self.allocated, end, target)
                    .map_err(AppendError::Unwritten)?;
        }
        disk.write_at(&self.segment, self.len, bytes)
            .map_err(|e| failed("write to", e))?;
        if shared.options.durable {
            disk.sync(&self.segment).map_err(|e| failed("sync", e))?;
            shared.stats.syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.len = end;
        shared
            .stats
            .journal_bytes
            .store(self.len, Ordering::Relaxed);
        Ok(())
    }

    /// Close the active segment (whose last commit is `revision`, durable and visible), start
    /// the next one, and write a snapshot at `revision` in the background: always when asked
    /// (`done`), otherwise unless one is being written already.
    fn rotate(
        &mut self,
        shared: &Arc<Shared>,
        revision: Revision,
        done: Option<oneshot::Sender<Result<(), StoreError>>>,
    ) {
        let started = Instant::now();
        let next = journal::segment_name(revision);
        let created = if next == self.segment {
            // Nothing was committed since the last rotation.
            Ok(next.clone())
        } else {
            journal::create_segment(shared.disk.as_ref(), revision)
        };
        match created {
            Ok(next) => {
                if next != self.segment {
                    self.segment = next;
                    self.len = journal::HEADER_LEN;
                    self.allocated = journal::HEADER_LEN;
                    let stats = &shared.stats;
                    stats.segments.fetch_add(1, Ordering::Relaxed);
                    stats.journal_bytes.store(self.len, Ordering::Relaxed);
                    stats
                        .longest_batch_micros
                        .fetch_max(elapsed_micros(started), Ordering::Relaxed);
                }
                let records = shared.read_state().records.clone();
                compaction::start(shared, records, done);
            }
            Err(error) => {
                // The old segment is intact and stays the active one; commits go on there.
                tracing::warn!(%error, "could not start a new journal segment");
                if let Some(done) = done {
                    let _ = done.send(Err(error));
                }
            }
        }
    }
}

fn elapsed_micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The failure the store is in, if any.
fn failure(shared: &Shared) -> Option<super::Failure> {
    if !shared.failed.load(Ordering::Acquire) {
        return None;
    }
    shared.acceptor().failure.clone()
}

fn fail(shared: &Shared, error: &StoreError) {
    tracing::error!(%error, "journal write failed; the file store refuses further commits");
    metrics::counter!("toggle_admin_store_errors_total", "store" => "file").increment(1);
    let mut acceptor = shared.acceptor();
    if acceptor.failure.is_none() {
        shared.record_failure(&mut acceptor, Failure::from_error(error));
    }
    drop(acceptor);
    shared
        .durable_revision
        .send_modify(|durable| durable.1 = true);
}
