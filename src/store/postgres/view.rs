//! A read view as one `REPEATABLE READ, READ ONLY` transaction: every statement of it reads
//! the database snapshot its first statement took.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::Client;
use futures_util::future::{join, join3};
use tokio::sync::Mutex;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::failure::{backend, plain};
use super::reads::{self, Queries};
use super::revision_of;
use super::sql::Statements;
use super::timeouts;
use crate::store::{Collection, Key, Listing, ReadView, Revision, StoreError, Versioned};

/// A view holding a pooled connection inside an open read-only transaction; dropping it
/// ends the transaction (or, without a runtime to do that on, drops the connection).
pub(super) struct PgView {
    client: Mutex<Option<Client>>,
    statements: Arc<Statements>,
    revision: Revision,
    /// Whether the session may still hold the gate's lock (the view was dropped while
    /// taking its snapshot): its `Drop` then lets go of it.
    in_gate: bool,
    /// How long one statement's answer is waited for (see `timeouts`).
    bound: Duration,
}

impl PgView {
    /// Open the transaction on `client` and read the revision it sees.
    pub(super) async fn begin(
        client: Client,
        statements: Arc<Statements>,
        bound: Duration,
    ) -> Result<Self, StoreError> {
        let what = "taking a view";
        // The view owns the connection before `BEGIN` is sent: if this future is dropped
        // while `BEGIN` is in flight (a client that hangs up), the view's `Drop` still ends
        // the transaction. A connection left inside a read-only transaction went back to the
        // pool before, and the next commit on it failed ("cannot execute SELECT FOR UPDATE in
        // a read-only transaction").
        let mut view = PgView {
            client: Mutex::new(Some(client)),
            statements,
            revision: Revision::ABSENT,
            in_gate: true,
            bound,
        };
        let begun = timeouts::bounded(bound, view.open()).await;
        let rows = match begun {
            Ok(rows) => rows?,
            Err(elapsed) => {
                // A connection that does not answer leaves the pool.
                view.abandon().await;
                return Err(elapsed.error(what, false));
            }
        };
        // The release ran.
        view.in_gate = false;
        let row = rows
            .first()
            .ok_or_else(|| plain(format!("PostgreSQL: {what}: no revision read")))?;
        view.revision = revision_of(row, 0, what)?;
        Ok(view)
    }

    /// Drop the view's connection for good (it did not answer in time).
    async fn abandon(&self) {
        if let Some(client) = self.client.lock().await.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }

    /// `BEGIN` and the revision the transaction sees, inside the gate.
    async fn open(&self) -> Result<Vec<Row>, StoreError> {
        let what = "taking a view";
        let view = self;
        let rows = {
            let guard = view.client.lock().await;
            let client = guard
                .as_ref()
                .ok_or_else(|| plain(format!("PostgreSQL: {what}: the view is closed")))?;
            // `BEGIN` and the first read go out together (tokio-postgres pipelines the
            // requests of one connection in the order they are made): one round trip instead
            // of two. The read runs inside the transaction that `BEGIN` opened; if `BEGIN`
            // failed, its error is the one reported.
            //
            // The snapshot is taken inside the gate (see `batch.rs`, "Commits in parallel"):
            // the gate's lock waits until no commit holding a revision is still in flight,
            // and is let go as soon as the first read has taken the snapshot. So the view
            // holds every commit up to its revision, and commits wait for it no longer than
            // that. The lock is the session's: if this future is dropped before the release
            // runs, the view's `Drop` lets go of it.
            let statements = &view.statements;
            let prepared = |sql| client.prepare_cached(sql);
            let begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY";
            let (wait, statement, release) = join3(
                prepared(&statements.gate_wait),
                prepared(&statements.revision),
                prepared(&statements.gate_release),
            )
            .await;
            let (wait, statement, release) = (
                wait.map_err(|e| backend(what, e))?,
                statement.map_err(|e| backend(what, e))?,
                release.map_err(|e| backend(what, e))?,
            );
            let schema: [&(dyn ToSql + Sync); 1] = [&statements.schema];
            let ((waited, begun), (rows, released)) = join(
                join(client.query(&wait, &schema), client.batch_execute(begin)),
                join(
                    client.query(&statement, &[]),
                    client.query(&release, &schema),
                ),
            )
            .await;
            waited.map_err(|e| backend(what, e))?;
            begun.map_err(|e| backend(what, e))?;
            released.map_err(|e| backend(what, e))?;
            rows.map_err(|e| backend(what, e))?
        };
        Ok(rows)
    }
}

impl Drop for PgView {
    fn drop(&mut self) {
        let Some(client) = self.client.get_mut().take() else {
            return;
        };
        // The gate's lock is the session's, so ROLLBACK alone would keep it if the view was
        // dropped while taking it.
        let end = if self.in_gate {
            "ROLLBACK; SELECT pg_advisory_unlock_all()"
        } else {
            "ROLLBACK"
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if client.batch_execute(end).await.is_err() {
                        drop(deadpool_postgres::Object::take(client));
                    }
                });
            }
            // A connection left inside a transaction must not go back to the pool.
            Err(_) => drop(deadpool_postgres::Object::take(client)),
        }
    }
}

#[async_trait]
impl Queries for PgView {
    fn statements(&self) -> &Statements {
        &self.statements
    }

    async fn query(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let mut guard = self.client.lock().await;
        let client = guard
            .as_ref()
            .ok_or_else(|| plain(format!("PostgreSQL: {what}: the view is closed")))?;
        let once = async {
            let statement = client.prepare_cached(sql).await?;
            client.query(&statement, params).await
        };
        match timeouts::bounded(self.bound, once).await {
            Ok(rows) => rows.map_err(|e| backend(what, e)),
            Err(elapsed) => {
                // A connection that does not answer leaves the pool; the view is closed.
                if let Some(client) = guard.take() {
                    drop(deadpool_postgres::Object::take(client));
                }
                Err(elapsed.error(what, false))
            }
        }
    }

    async fn query_settled(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        self.query(what, sql, params).await
    }
}

impl fmt::Debug for PgView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgView")
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ReadView for PgView {
    fn revision(&self) -> Revision {
        self.revision
    }

    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        reads::get(self, key).await
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        reads::get_many(self, keys).await
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        reads::list(self, collection, prefix).await
    }
}
