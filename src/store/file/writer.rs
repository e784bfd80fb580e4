//! The writer thread: group commit.
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
//! core the next request needs). See BENCHMARKS.md, sixth session.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::event_index::EventKeys;
use super::{Shared, compaction, io_error, journal};
use crate::store::{Event, Records, Revision, StoreError};

/// The most commits one batch takes, so that one very long queue is not one huge write.
const MAX_BATCH: usize = 4096;
/// The longest a batch waits for more commits (see `Writer::gather`).
const MAX_GATHER: Duration = Duration::from_millis(2);

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
        done: oneshot::Sender<Result<(), StoreError>>,
    },
    /// Start a new segment and write a snapshot now; answer once the snapshot is in place.
    Compact {
        done: oneshot::Sender<Result<(), StoreError>>,
    },
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
                "the file store at {} takes no more commits until it is reopened",
                shared.describe("")
            ),
            std::io::Error::new(self.kind, self.message.clone()),
        )
    }
}

/// Start the writer thread, writing to `segment` from byte `len` (the segment is `allocated`
/// bytes long, zeros after `len`).
pub(super) fn spawn(
    shared: Arc<Shared>,
    queue: mpsc::Receiver<Job>,
    segment: String,
    len: u64,
    allocated: u64,
) -> Result<JoinHandle<()>, StoreError> {
    std::thread::Builder::new()
        .name("toggle-admin-journal".to_owned())
        .spawn(move || {
            Writer {
                shared,
                previous_batch: 0,
                last_write: Duration::ZERO,
                segment,
                len,
                allocated,
            }
            .run(queue)
        })
        .map_err(|e| io_error("could not start the journal writer thread", e))
}

struct Writer {
    shared: Arc<Shared>,
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
    fn run(mut self, queue: mpsc::Receiver<Job>) {
        while let Ok(first) = queue.recv() {
            let mut batch = Batch {
                bytes: Vec::new(),
                last: None,
                framed: Vec::new(),
                waiting: Vec::new(),
                compactions: Vec::new(),
            };
            self.add(&mut batch, first);
            while batch.waiting.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(job) => self.add(&mut batch, job),
                    Err(_) => break,
                }
            }
            self.gather(&queue, &mut batch);
            let size = batch.waiting.len();
            let started = Instant::now();
            self.write(batch);
            if size > 0 {
                self.previous_batch = size;
                self.last_write = started.elapsed();
            }
        }
    }

    /// Wait a little for more commits when the batch is smaller than the one before: under
    /// concurrency, clients answered by the previous batch are deciding their next commits
    /// right now, and one sync for all of them beats two syncs (one for the first, one for
    /// the rest). The wait is bounded by a quarter of the last write's duration (so it is
    /// worth at most a quarter of a sync) and by [`MAX_GATHER`]; a lone writer (previous batch
    /// of one) never waits.
    fn gather(&self, queue: &mpsc::Receiver<Job>, batch: &mut Batch) {
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
                Ok(job) => self.add(batch, job),
                Err(_) => break,
            }
        }
    }

    fn add(&self, batch: &mut Batch, job: Job) {
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
                        self.fail(&error);
                    }
                }
                batch.last = Some((revision, *records));
                batch.waiting.push(done);
            }
            Job::Compact { done } => batch.compactions.push(done),
        }
    }

    /// The failure the store is in, if any.
    fn failure(&self) -> Option<super::Failure> {
        if !self.shared.failed.load(Ordering::Acquire) {
            return None;
        }
        self.shared.acceptor().failure.clone()
    }

    fn fail(&self, error: &StoreError) {
        tracing::error!(%error, "journal write failed; the file store refuses further commits");
        metrics::counter!("toggle_admin_store_errors_total", "store" => "file").increment(1);
        let mut acceptor = self.shared.acceptor();
        if acceptor.failure.is_none() {
            acceptor.failure = Some(Failure::from_error(error));
        }
        self.shared.failed.store(true, Ordering::Release);
        drop(acceptor);
        self.shared
            .durable_revision
            .send_modify(|durable| durable.1 = true);
    }

    fn write(&mut self, batch: Batch) {
        let started = Instant::now();
        if let Some((revision, records)) = batch.last {
            // Where the batch lands in the segment.
            let base = self.len;
            let mut bytes = batch.bytes;
            bytes.extend_from_slice(&journal::batch_end(revision));
            let written = match self.failure() {
                Some(failure) => Err(failure.to_error(&self.shared)),
                None => self.append(&bytes),
            };
            match written {
                Ok(()) => {
                    {
                        // Records and events become visible together, and only now that
                        // they are durable.
                        let mut durable = self
                            .shared
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
                    self.shared
                        .durable_revision
                        .send_modify(|durable| durable.0 = revision);
                    let stats = &self.shared.stats;
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
                    for done in batch.waiting {
                        let _ = done.send(Ok(()));
                    }
                    if self.len > self.shared.options.compact_after_bytes {
                        self.rotate(revision, None);
                    }
                }
                Err(error) => {
                    self.fail(&error);
                    for done in batch.waiting {
                        let failure = Failure::from_error(&error);
                        let _ = done.send(Err(failure.to_error(&self.shared)));
                    }
                }
            }
        }
        for done in batch.compactions {
            if let Some(failure) = self.failure() {
                let _ = done.send(Err(failure.to_error(&self.shared)));
                continue;
            }
            let revision = self.shared.read_state().records.revision();
            self.rotate(revision, Some(done));
        }
    }

    /// Write `bytes` (whole records and a batch end) after the active segment's records and,
    /// if durable, sync it. Past the zeroed space, first make the next
    /// [`preallocate_bytes`](super::Options) ready: written as zeros, synced with the batch.
    fn append(&mut self, bytes: &[u8]) -> Result<(), StoreError> {
        let disk = &self.shared.disk;
        let failed = |what: &str, e| {
            io_error(
                format!("could not {what} {}", disk.describe(&self.segment)),
                e,
            )
        };
        let end = self.len + bytes.len() as u64;
        if end > self.allocated {
            let target = end + self.shared.options.preallocate_bytes;
            let zeros = vec![0; usize::try_from(target - self.allocated).unwrap_or(0)];
            disk.write_at(&self.segment, self.allocated, &zeros)
                .map_err(|e| failed("make room in", e))?;
            self.allocated = target;
        }
        disk.write_at(&self.segment, self.len, bytes)
            .map_err(|e| failed("write to", e))?;
        if self.shared.options.durable {
            disk.sync(&self.segment).map_err(|e| failed("sync", e))?;
            self.shared.stats.syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.len = end;
        self.shared
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
        revision: Revision,
        done: Option<oneshot::Sender<Result<(), StoreError>>>,
    ) {
        let started = Instant::now();
        let next = journal::segment_name(revision);
        let created = if next == self.segment {
            // Nothing was committed since the last rotation.
            Ok(next.clone())
        } else {
            journal::create_segment(self.shared.disk.as_ref(), revision)
        };
        match created {
            Ok(next) => {
                if next != self.segment {
                    self.segment = next;
                    self.len = journal::HEADER_LEN;
                    self.allocated = journal::HEADER_LEN;
                    let stats = &self.shared.stats;
                    stats.segments.fetch_add(1, Ordering::Relaxed);
                    stats.journal_bytes.store(self.len, Ordering::Relaxed);
                    stats
                        .longest_batch_micros
                        .fetch_max(elapsed_micros(started), Ordering::Relaxed);
                }
                let records = self.shared.read_state().records.clone();
                compaction::start(&self.shared, records, done);
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
