//! Commits in parallel, and group commit: change sets of different records commit side by
//! side; the change sets that arrive while a store's transactions are under way go to the
//! database together, as one transaction.
//!
//! # Commits in parallel
//!
//! Until schema migration 3 every commit locked one row (`store_meta`) until `COMMIT` had
//! reached the disk: that gave gapless revisions in visibility order, and ordered every
//! commit of every instance behind the previous one's WAL flush. Now a transaction locks
//! only what it touches, and a *gate* keeps views whole:
//!
//! * **Key locks.** A transaction first takes a transaction-scoped advisory lock per key of
//!   its change sets, in one order (by lock id, PostgreSQL's `hashtextextended` of schema,
//!   collection and id, computed by the instance: `lock_ids.rs`): exclusive for a key it
//!   writes, shared for a key it only expects at a revision. So commits of one record take
//!   turns, and each one's statement (a fresh READ COMMITTED snapshot, taken once the locks
//!   are held) sees every earlier commit of the records it checks; commits of other records
//!   run alongside, and commits that all expect one record (every variant change expects its
//!   project) share its lock. Record revisions still grow with every write to a record.
//! * **Revisions and event ids from sequences**, taken in the commit statement once its
//!   preconditions hold. A sequence never gives a number back, so a transaction that fails
//!   afterwards (a refused statement, a lost connection) leaves a gap; and two commits side
//!   by side may become visible in either order, and interleave their event ids.
//! * **The store's and each collection's revision** are the highest in two append-only
//!   tables, `commits` and `collection_changes` (one row per commit, and per commit and
//!   collection it changed), instead of one row each that every writer updated: writers of
//!   one collection no longer take turns on its row.
//! * **The gate**, an advisory lock of the store: every commit holds it *shared* from before
//!   it takes its revision until its transaction ends. A view takes it *exclusive*, at
//!   session level, takes its snapshot and lets go, all sent at once: so when its snapshot is
//!   taken, no commit holding a revision is in flight, every revision below the highest it
//!   sees is in it (or was lost), and the view names one state. It waits for at most the
//!   commits already past their decision, and holds new ones back only while it takes its
//!   snapshot. Listings outside a view and reads of the event log run the same way (a
//!   listing's revision may back a collection precondition; an event reader paging by id
//!   must never see an id with a lower one still to come). A commit with a collection
//!   precondition takes the gate exclusive for its whole transaction: it then sees every
//!   commit that ever took a revision, and none lands beside it.
//! * **Decision views** ([`Store::decision_view`](crate::store::Store::decision_view)) take
//!   no snapshot at all: they answer from the records the instance knows (`known.rs`). A
//!   decision made on one expects every record it read at the revision it read, so a write
//!   it missed fails its precondition.
//! * **Plain reads** (`get`, `get_many`, `revision`) skip it too: they see every commit that
//!   returned before they started, and a record's revision is exact; only the store revision
//!   may name a state that lacks a commit still in flight below it, which a view never does.
//!
//! Deadlocks cannot form: every transaction takes its key locks in one global order, then
//! the gate, and a view holds nothing while it waits for the gate.
//!
//! # Group commit
//!
//! Each store runs the change sets that queue up while [`IN_FLIGHT`] transactions are under
//! way as the next transaction: it runs one statement per change set, the first of which
//! takes the key locks of all of them (each checks its own preconditions against everything
//! before it, including the change sets earlier in the same transaction, and writes only
//! when they hold), all sent with its `BEGIN` and `COMMIT` in one round trip. A change set
//! alone in its batch is `BEGIN`, one call and `COMMIT` (`commit.rs`). A batch costs one
//! flush, shared by all of its change sets; a change set whose preconditions fail writes
//! nothing (and takes no revision) and the others still commit, as if each had run alone in
//! that order. Nobody is answered before `COMMIT` has returned, so nothing acknowledged is
//! lost.
//!
//! If any statement of a batch fails (a value the database refuses, say), the transaction is
//! rolled back and the batch's change sets run again one transaction each, so that each
//! caller gets its own answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::commit::{self, Applied, Failure, Locks, Plan};
use super::failure::{self, backend, connection_lost, plain};
use super::known::KnownRecords;
use super::notify::{Carry, Notifier};
use super::sql::Statements;
use super::timeouts;
use crate::store::{ChangeSet, Revision, StoreError};

/// The most change sets in one transaction: enough for every connection of a busy pool,
/// small enough that one failing statement costs little to run again one by one.
const MAX_BATCH: usize = 64;

/// Batches of one store in flight at once. More would commit more records side by side, in
/// smaller batches: on a 2-vCPU machine running the database too, 6 answered 10–20 % less
/// than 2, the database's CPU being the bound there, and 1 answered 13–24 % less, the
/// database and the server waiting on each other (BENCHMARKS.md, "What did not help").
const IN_FLIGHT: usize = 2;

/// One change set waiting for its transaction.
struct Job {
    changes: ChangeSet,
    reply: oneshot::Sender<Result<Revision, StoreError>>,
}

/// The queue of a store's commits; the task that empties it ends when every handle is gone.
#[derive(Clone)]
pub(super) struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
    /// The store's [`IN_FLIGHT`] transaction slots, shared with the queue's task.
    slots: Arc<Semaphore>,
    /// Jobs sent to the queue and not yet taken from it.
    queued: Arc<AtomicUsize>,
    committer: Committer,
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher")
            .field("queued", &self.queued.load(Ordering::Relaxed))
            .field("free_slots", &self.slots.available_permits())
            .finish_non_exhaustive()
    }
}

/// What runs the transactions: the pool, the statements, and how often to retry a
/// connection found dead.
#[derive(Clone)]
pub(super) struct Committer {
    pub pool: Pool,
    pub statements: Arc<Statements>,
    pub attempts: usize,
    /// How long one attempt at a transaction waits for the database (see `timeouts`).
    pub bound: Duration,
    /// What the store's instance knows: a refused change set teaches it the records as
    /// they are now (see `commit::outcome`).
    pub known: Arc<KnownRecords>,
    /// The store's commit notifications: a commit carries one when one is due.
    pub notifier: Arc<Notifier>,
}

impl Batcher {
    /// Start the task that commits what `committer`'s store queues. Needs a Tokio runtime.
    pub(super) fn start(committer: Committer) -> Self {
        let (jobs, queue) = mpsc::unbounded_channel();
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        let queued = Arc::new(AtomicUsize::new(0));
        tokio::spawn(run_queue(
            queue,
            committer.clone(),
            Arc::clone(&slots),
            Arc::clone(&queued),
        ));
        Batcher {
            jobs,
            slots,
            queued,
            committer,
        }
    }

    /// Commit `changes` in the next transaction and wait for its outcome.
    ///
    /// When nothing waits in the queue and a transaction slot is free, the change set is
    /// committed alone in the caller's task: a batch of one either way, without the hops to
    /// the queue's task, the batch's task and back (three thread wake-ups on a lone
    /// writer's path). A slot set free goes to the queue's task first when it waits for one
    /// (the semaphore is fair), so writers in the queue are not overtaken for long.
    pub(super) async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        if self.queued.load(Ordering::Acquire) == 0
            && let Ok(_slot) = Arc::clone(&self.slots).try_acquire_owned()
        {
            metrics::histogram!("toggle_admin_commit_batch_size", "store" => "postgres")
                .record(1.0);
            return self.committer.commit_alone(&changes).await;
        }
        let (reply, answer) = oneshot::channel();
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.jobs.send(Job { changes, reply }).map_err(|_| {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            plain("PostgreSQL: commit: the store's commit task has stopped".into())
        })?;
        answer.await.map_err(|_| {
            plain(
                "PostgreSQL: commit: the store's commit task stopped before answering, so \
                 whether the change set was applied is unknown"
                    .into(),
            )
        })?
    }
}

/// Take what has queued up, up to [`MAX_BATCH`], whenever fewer than [`IN_FLIGHT`] batches
/// are running.
async fn run_queue(
    mut queue: mpsc::UnboundedReceiver<Job>,
    committer: Committer,
    slots: Arc<Semaphore>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(first) = queue.recv().await {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        queued.fetch_sub(batch.len(), Ordering::AcqRel);
        tokio::spawn(committer.clone().run(batch, permit));
    }
}

impl Committer {
    /// Commit `batch` and answer every job in it.
    async fn run(self, batch: Vec<Job>, _permit: OwnedSemaphorePermit) {
        metrics::histogram!("toggle_admin_commit_batch_size", "store" => "postgres")
            .record(batch.len() as f64);
        if let [_] = batch.as_slice() {
            for job in batch {
                let result = self.commit_alone(&job.changes).await;
                answer(job, result);
            }
            return;
        }
        match self.commit_together(&batch).await {
            Ok(results) => {
                for (job, result) in batch.into_iter().zip(results) {
                    answer(job, result);
                }
            }
            Err(Together::Refused) => {
                // Each alone, in the order they were queued, so each gets its own answer.
                for job in batch {
                    let result = self.commit_alone(&job.changes).await;
                    answer(job, result);
                }
            }
            Err(Together::Failed(error)) => {
                for job in batch {
                    answer(job, Err(failure::copy(&error)));
                }
            }
        }
    }

    /// One change set in its own transaction, on a fresh connection if the pooled one turns
    /// out dead before anything was sent, or the server ended its session before its
    /// `COMMIT` ran.
    async fn commit_alone(&self, changes: &ChangeSet) -> Result<Revision, StoreError> {
        let plan = Plan::new(&self.statements.schema, changes);
        let carry = self.notifier.carry();
        let mut attempt = 1;
        loop {
            let mut client = self
                .pool
                .get()
                .await
                .map_err(|e| failure::pool("commit", e))?;
            let attempted = timeouts::bounded(
                self.bound,
                commit::run(
                    &mut client,
                    &self.statements,
                    &plan,
                    &self.known,
                    carry.as_ref(),
                ),
            )
            .await;
            let attempted = match attempted {
                Ok(attempted) => attempted,
                Err(elapsed) => {
                    // No answer in time: the connection leaves the pool, and the outcome is
                    // unknown (COMMIT may have been sent).
                    super::discard(client);
                    return Err(elapsed.error("commit", true));
                }
            };
            match attempted {
                Ok(revision) => {
                    metrics::counter!("toggle_admin_commits_total", "store" => "postgres")
                        .increment(1);
                    self.notifier.committed(revision, carry.is_some());
                    return Ok(revision);
                }
                Err(Failure::StaleConnection(e)) if attempt < self.attempts => {
                    tracing::debug!(error = %e, "retrying a commit on a fresh connection");
                    super::discard(client);
                    attempt += 1;
                }
                Err(Failure::StaleConnection(e) | Failure::LostConnection(e)) => {
                    super::discard(client);
                    return Err(e);
                }
                Err(Failure::Final(e)) => return Err(e),
            }
        }
    }

    /// The change sets of `batch` in one transaction: each one's revision, or the conflict
    /// that kept it out.
    async fn commit_together(
        &self,
        batch: &[Job],
    ) -> Result<Vec<Result<Revision, StoreError>>, Together> {
        let plans: Vec<Plan<'_>> = batch
            .iter()
            .map(|job| Plan::new(&self.statements.schema, &job.changes))
            .collect();
        let carry = self.notifier.carry();
        let mut attempt = 1;
        loop {
            let mut client = self
                .pool
                .get()
                .await
                .map_err(|e| Together::Failed(failure::pool("commit", e)))?;
            let attempted = timeouts::bounded(
                self.bound,
                self.transaction(&mut client, &plans, carry.as_ref()),
            )
            .await;
            let attempted = match attempted {
                Ok(attempted) => attempted,
                Err(elapsed) => {
                    // No answer in time: the connection leaves the pool, and the outcome is
                    // unknown (COMMIT may have been sent).
                    super::discard(client);
                    return Err(Together::Failed(elapsed.error("commit", true)));
                }
            };
            match attempted {
                Ok(results) => return Ok(results),
                Err(Attempt::Stale(e)) if attempt < self.attempts => {
                    tracing::debug!(error = %e, "retrying a batch on a fresh connection");
                    super::discard(client);
                    attempt += 1;
                }
                Err(Attempt::Stale(e) | Attempt::Lost(e)) => {
                    super::discard(client);
                    return Err(Together::Failed(e));
                }
                Err(Attempt::Refused) => return Err(Together::Refused),
                Err(Attempt::Failed(e)) => return Err(Together::Failed(e)),
            }
        }
    }

    /// One transaction over `plans`: lock, one statement per plan, commit, all in one round
    /// trip.
    async fn transaction(
        &self,
        client: &mut deadpool_postgres::Client,
        plans: &[Plan<'_>],
        carry: Option<&Carry<'_>>,
    ) -> Result<Vec<Result<Revision, StoreError>>, Attempt> {
        let statement = commit::prepare(client, &self.statements)
            .await
            .map_err(|failure| match failure {
                Failure::StaleConnection(e) => Attempt::Stale(e),
                Failure::LostConnection(e) | Failure::Final(e) => Attempt::Failed(e),
            })?;
        // Once the transaction is sent, its COMMIT is too: a connection lost before the answer
        // leaves the outcome unknown. A statement the database refuses aborts the whole
        // transaction (the COMMIT rolls it back): the batch then runs again one change set at
        // a time, where the refusal reaches only its own caller.
        let failed = |what: &'static str| {
            move |e: tokio_postgres::Error| {
                if connection_lost(&e) {
                    Attempt::Lost(backend(
                        &format!(
                            "commit: {what}: the connection failed, so whether the change sets \
                             were applied is unknown"
                        ),
                        e,
                    ))
                } else if failure::timed_out(&e) {
                    // One at a time would only time out again.
                    Attempt::Failed(backend(what, e))
                } else {
                    Attempt::Refused
                }
            }
        };
        // The batch's first call takes every change set's key locks, then the gate; the
        // others take no locks, and the gate again in the batch's mode (which costs nothing).
        let locks = Locks::of(plans);
        let exclusive_gate = locks.exclusive_gate();
        let no_notification = [None, None];
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = plans
            .iter()
            .enumerate()
            .map(|(i, plan)| {
                let locks = (i == 0).then(|| locks.keys());
                plan.params(&self.statements, locks, &exclusive_gate, &no_notification)
            })
            .collect();
        let (opened, applied, committed) =
            match commit::apply(client, &self.statements, &statement, &params, carry).await {
                Applied::NotSent(e) if connection_lost(&e) => {
                    return Err(Attempt::Stale(backend("commit: preparing", e)));
                }
                Applied::NotSent(e) => {
                    return Err(Attempt::Failed(backend("commit: preparing", e)));
                }
                Applied::Sent {
                    opened,
                    applied,
                    committed,
                } => (opened, applied, committed),
            };
        // A lost connection first: it leaves everything unknown, whatever else failed.
        let committed = match committed {
            // The server ended the session instead of running `BEGIN`, a lock or a change
            // set: `COMMIT`, sent after them, never ran, so nothing was committed, and
            // another connection may send it all again.
            Err(e) if ended_before_commit(&opened, &applied) => {
                return Err(Attempt::Stale(backend("commit: the session ended", e)));
            }
            Err(e) if connection_lost(&e) => return Err(failed("COMMIT")(e)),
            committed => committed,
        };
        opened.map_err(|(what, e)| failed(what)(e))?;
        let rows = applied
            .into_iter()
            .map(|row| row.map_err(failed("writing a change set")))
            .collect::<Result<Vec<_>, Attempt>>()?;
        committed.map_err(failed("COMMIT"))?;
        // Committed: a row that cannot be read now leaves that change set's outcome unknown.
        let results = plans
            .iter()
            .zip(&rows)
            .map(|(plan, row)| {
                commit::outcome(plan, row, &self.known).map_err(|failure| match failure {
                    Failure::StaleConnection(e)
                    | Failure::LostConnection(e)
                    | Failure::Final(e) => Attempt::Lost(e),
                })
            })
            .collect::<Result<Vec<_>, Attempt>>()?;
        for revision in results.iter().flatten() {
            self.notifier.committed(*revision, carry.is_some());
        }
        let committed = results.iter().filter(|r| r.is_ok()).count();
        metrics::counter!("toggle_admin_commits_total", "store" => "postgres")
            .increment(committed as u64);
        Ok(results)
    }
}

/// Whether the server ended the session instead of running one of the requests sent before
/// `COMMIT`.
fn ended_before_commit(
    opened: &Result<(), (&'static str, tokio_postgres::Error)>,
    applied: &[Result<tokio_postgres::Row, tokio_postgres::Error>],
) -> bool {
    matches!(opened, Err((_, e)) if failure::session_ended_instead(e))
        || applied
            .iter()
            .any(|row| row.as_ref().is_err_and(failure::session_ended_instead))
}

/// How a batch ended when it did not commit.
enum Together {
    /// The database refused a statement: run the change sets one by one.
    Refused,
    /// Nothing more can be done; every caller gets this error.
    Failed(StoreError),
}

/// How one attempt at a batch's transaction ended when it did not commit.
enum Attempt {
    /// The connection was found lost before anything that could commit was sent.
    Stale(StoreError),
    /// The connection died during the transaction: the outcome is unknown.
    Lost(StoreError),
    /// The database refused a statement; the transaction is rolled back.
    Refused,
    /// Anything else.
    Failed(StoreError),
}

/// Answer `job`; a caller that stopped waiting no longer needs the answer.
fn answer(job: Job, result: Result<Revision, StoreError>) {
    let _ = job.reply.send(result);
}
