//! Group commit: the change sets that arrive while a transaction is under way go to the
//! database together, as one transaction.
//!
//! # Why
//!
//! The store's contract hands out revisions one per commit, without gaps, in the order the
//! commits become visible; event ids follow the same order. PostgreSQL gives that order only
//! through one lock (the `store_meta` row) held until `COMMIT` has reached the disk, so
//! committing each change set in its own transaction orders every commit of every instance
//! behind the previous one's WAL flush: one flush per commit, whatever the number of
//! connections. (Handing revisions out from a sequence instead would let a later revision
//! become visible before an earlier one, and a view's revision would no longer name one
//! state; an ETag or a cache keyed by it could then miss a change.)
//!
//! So each store runs the change sets that queue up while a transaction is in flight as the
//! next transaction: it takes the lock once, runs one statement per change set (each checks
//! its own preconditions against everything before it, including the change sets earlier
//! in the same transaction, and writes only when they hold), pipelined in one round trip,
//! and commits once. A batch costs one lock and one flush, shared by all of its change sets;
//! a change set whose preconditions fail writes nothing and the others still commit, as if
//! each had run alone in that order. Nobody is answered before `COMMIT` has returned, so
//! nothing acknowledged is lost. Two batches may be in flight at once, so the next one's
//! statements are already queued behind the lock while the previous one flushes.
//!
//! If any statement of a batch fails (a value the database refuses, say), the transaction is
//! rolled back and the batch's change sets run again one transaction each, so that each
//! caller gets its own answer.

use std::sync::Arc;

use deadpool_postgres::Pool;
use futures_util::future::{join, join_all};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio_postgres::types::ToSql;

use super::commit::{self, Failure, Plan};
use super::failure::{self, backend, connection_lost, plain};
use super::sql::{Statements, quote_identifier};
use crate::store::{ChangeSet, Revision, StoreError};

/// The most change sets in one transaction: enough for every connection of a busy pool,
/// small enough that one failing statement costs little to run again one by one.
const MAX_BATCH: usize = 64;

/// Batches in flight at once: one flushing, the next waiting for the lock.
const IN_FLIGHT: usize = 2;

/// One change set waiting for its transaction.
struct Job {
    changes: ChangeSet,
    reply: oneshot::Sender<Result<Revision, StoreError>>,
}

/// The queue of a store's commits; the task that empties it ends when every handle is gone.
#[derive(Debug, Clone)]
pub(super) struct Batcher {
    jobs: mpsc::UnboundedSender<Job>,
}

/// What runs the transactions: the pool, the statements, and how often to retry a
/// connection found dead.
#[derive(Clone)]
pub(super) struct Committer {
    pub pool: Pool,
    pub statements: Arc<Statements>,
    pub batch_sql: Arc<str>,
    pub attempts: usize,
}

impl Batcher {
    /// Start the task that commits what `committer`'s store queues. Needs a Tokio runtime.
    pub(super) fn start(committer: Committer) -> Self {
        let (jobs, queue) = mpsc::unbounded_channel();
        tokio::spawn(run_queue(queue, committer));
        Batcher { jobs }
    }

    /// Commit `changes` in the next transaction and wait for its outcome.
    pub(super) async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job { changes, reply })
            .map_err(|_| plain("PostgreSQL: commit: the store's commit task has stopped".into()))?;
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
async fn run_queue(mut queue: mpsc::UnboundedReceiver<Job>, committer: Committer) {
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(first) = queue.recv().await {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            break;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
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
            Err(Together::Failed(message)) => {
                for job in batch {
                    answer(job, Err(plain(message.clone())));
                }
            }
        }
    }

    /// One change set in its own transaction, on a fresh connection if the pooled one turns
    /// out dead before anything was sent.
    async fn commit_alone(&self, changes: &ChangeSet) -> Result<Revision, StoreError> {
        let plan = Plan::new(changes);
        let mut attempt = 1;
        loop {
            let mut client = self
                .pool
                .get()
                .await
                .map_err(|e| failure::pool("commit", e))?;
            match commit::run(&mut client, &self.statements, &plan).await {
                Ok(revision) => {
                    metrics::counter!("toggle_admin_commits_total", "store" => "postgres")
                        .increment(1);
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
        let plans: Vec<Plan<'_>> = batch.iter().map(|job| Plan::new(&job.changes)).collect();
        let mut attempt = 1;
        loop {
            let mut client = self
                .pool
                .get()
                .await
                .map_err(|e| Together::Failed(failure::pool("commit", e).to_string()))?;
            match self.transaction(&mut client, &plans).await {
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

    /// One transaction over `plans`: lock, one pipelined statement per plan, commit.
    async fn transaction(
        &self,
        client: &mut deadpool_postgres::Client,
        plans: &[Plan<'_>],
    ) -> Result<Vec<Result<Revision, StoreError>>, Attempt> {
        let tx = client.transaction().await.map_err(|e| {
            if connection_lost(&e) {
                Attempt::Stale(backend("commit: begin", e).to_string())
            } else {
                Attempt::Failed(backend("commit: begin", e).to_string())
            }
        })?;
        // A statement the database refuses aborts the whole transaction: the batch then runs
        // again one change set at a time, where the refusal reaches only its own caller.
        let during = |what: &'static str| {
            move |e: tokio_postgres::Error| {
                if connection_lost(&e) {
                    Attempt::Lost(backend(what, e).to_string())
                } else {
                    Attempt::Refused
                }
            }
        };
        let lock = tx
            .prepare_cached(&self.statements.lock_meta)
            .await
            .map_err(during("commit: preparing"))?;
        let statement = tx
            .prepare_cached(&self.batch_sql)
            .await
            .map_err(during("commit: preparing"))?;
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = plans.iter().map(Plan::batch_params).collect();
        // Sent in this order on one connection, so they run in this order: the lock first,
        // then each change set seeing the ones before it.
        let locked = tx.query_one(&lock, &[]);
        let applied = join_all(params.iter().map(|p| tx.query_one(&statement, p)));
        let (locked, applied) = join(locked, applied).await;
        locked.map_err(during("commit: locking the store"))?;
        let mut results = Vec::with_capacity(plans.len());
        for (plan, row) in plans.iter().zip(applied) {
            let row = row.map_err(during("commit: writing a change set"))?;
            let failing: Option<i64> = row.try_get(0).map_err(during("commit: reading"))?;
            let revision: Option<i64> = row.try_get(1).map_err(during("commit: reading"))?;
            results.push(match (failing, revision) {
                (Some(ord), _) => Err(commit::conflict(plan.preconditions(), ord)),
                (None, Some(revision)) => Ok(Revision(u64::try_from(revision).unwrap_or_default())),
                (None, None) => {
                    return Err(Attempt::Failed(
                        "PostgreSQL: commit: a change set neither failed nor took a revision"
                            .to_owned(),
                    ));
                }
            });
        }
        tx.commit().await.map_err(|e| {
            Attempt::Lost(
                backend(
                    "commit: COMMIT failed, so whether the change set was applied is unknown",
                    e,
                )
                .to_string(),
            )
        })?;
        let committed = results.iter().filter(|r| r.is_ok()).count();
        metrics::counter!("toggle_admin_commits_total", "store" => "postgres")
            .increment(committed as u64);
        Ok(results)
    }
}

/// How a batch ended when it did not commit.
enum Together {
    /// The database refused a statement: run the change sets one by one.
    Refused,
    /// Nothing more can be done; every caller gets this message.
    Failed(String),
}

/// How one attempt at a batch's transaction ended when it did not commit.
enum Attempt {
    /// The connection was dead at `BEGIN`; nothing was sent.
    Stale(String),
    /// The connection died during the transaction: the outcome is unknown.
    Lost(String),
    /// The database refused a statement; the transaction is rolled back.
    Refused,
    /// Anything else.
    Failed(String),
}

/// Answer `job`; a caller that stopped waiting no longer needs the answer.
fn answer(job: Job, result: Result<Revision, StoreError>) {
    let _ = job.reply.send(result);
}

/// The statement that checks one change set's preconditions and, only when they all hold,
/// applies it as the next commit: `$1`–`$3` the preconditions, `$4`–`$9` the writes, `$10`–
/// `$17` the events, `$18` their number (parameters of [`Plan::batch_params`]). It answers
/// the position of the first precondition that fails, or the commit's revision.
///
/// It reads the revision and the last event id from `store_meta` rather than taking them as
/// parameters, because it runs after the other change sets of its transaction, whose number
/// of successes is not known when the statements are sent. Every data-modifying part reads
/// `go`, which is empty when a precondition fails, so such a change set writes nothing.
///
/// `go` is built from scalar subqueries so that the planner knows it is at most one row: a
/// join with `store_meta` itself was estimated at thousands of rows (the table is never
/// analysed), which pushed the statement's cost over `jit_above_cost` and had PostgreSQL
/// JIT-compile it on every execution, ~18 ms each.
pub(super) fn batch_sql(schema: &str) -> String {
    let s = quote_identifier(schema);
    format!(
        "WITH failing AS ( \
             SELECT p.ord FROM unnest($1::text[], $2::text[], $3::bigint[]) \
                 WITH ORDINALITY AS p(collection, id, revision, ord) \
             WHERE CASE WHEN p.id IS NULL THEN \
                 coalesce((SELECT c.revision FROM {s}.collections c \
                           WHERE c.collection = p.collection), 0) > p.revision \
             ELSE \
                 coalesce((SELECT r.revision FROM {s}.records r \
                           WHERE r.collection = p.collection AND r.id = p.id), 0) \
                     <> p.revision \
             END \
             ORDER BY p.ord LIMIT 1 \
         ), go AS ( \
             SELECT (SELECT revision + 1 FROM {s}.store_meta LIMIT 1) AS revision, \
                    (SELECT last_event_id FROM {s}.store_meta LIMIT 1) AS last_event_id \
             WHERE NOT EXISTS (SELECT 1 FROM failing) \
         ), put AS ( \
             INSERT INTO {s}.records (collection, id, value, revision) \
             SELECT w.collection, w.id, w.value, go.revision \
             FROM go, unnest($4::text[], $5::text[], $6::jsonb[]) AS w(collection, id, value) \
             ON CONFLICT (collection, id) \
             DO UPDATE SET value = excluded.value, revision = excluded.revision \
         ), del AS ( \
             DELETE FROM {s}.records r \
             USING go, unnest($7::text[], $8::text[]) AS d(collection, id) \
             WHERE r.collection = d.collection AND r.id = d.id \
             RETURNING r.collection \
         ), bump AS ( \
             INSERT INTO {s}.collections (collection, revision) \
             SELECT t.collection, go.revision \
             FROM go, (SELECT unnest($9::text[]) UNION SELECT collection FROM del) \
                 AS t(collection) \
             ON CONFLICT (collection) DO UPDATE SET revision = excluded.revision \
         ), ev AS ( \
             INSERT INTO {s}.events (id, revision, type, created_by, created_at, \
                                     project, feature_name, environment, data, pre_data) \
             SELECT go.last_event_id + e.ord, go.revision, e.type, e.created_by, e.created_at, \
                    e.project, e.feature_name, e.environment, e.data, e.pre_data \
             FROM go, unnest($10::text[], $11::text[], $12::timestamptz[], $13::text[], \
                             $14::text[], $15::text[], $16::jsonb[], $17::jsonb[]) \
                 WITH ORDINALITY AS e(type, created_by, created_at, project, \
                                      feature_name, environment, data, pre_data, ord) \
         ), moved AS ( \
             UPDATE {s}.store_meta \
             SET revision = revision + 1, last_event_id = last_event_id + $18::bigint \
             WHERE EXISTS (SELECT 1 FROM go) RETURNING revision \
         ) \
         SELECT (SELECT ord FROM failing), (SELECT revision FROM moved)"
    )
}
