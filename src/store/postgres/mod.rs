//! [`PostgresStore`] (feature `postgres`): the state in a PostgreSQL database, shared by any
//! number of application instances.

mod batch;
mod commit;
mod config;
mod failure;
mod known;
mod lock_ids;
mod migrate;
mod notify;
mod reads;
mod sql;
mod timeouts;
mod tls;
mod view;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use futures_util::future::join3;
use serde_json::value::RawValue;
use tokio_postgres::Row;
use tokio_postgres::types::Json as PgJson;
use tokio_postgres::types::ToSql;

pub use self::config::PostgresConfig;
use self::failure::{backend, connection_lost, plain};
use self::reads::Queries;
use self::sql::Statements;
use super::{
    ChangeSet, Collection, Event, EventPage, EventQuery, Json, Key, Listing, NewEvent, ReadView,
    Revision, Store, StoreError, Versioned,
};

/// A store in a PostgreSQL database: durable, and shared by every application instance that
/// connects to the same database and schema.
///
/// * **Schema**: [`connect`](PostgresStore::connect) creates the schema and its tables and
///   applies the crate's migrations (recorded in `schema_migrations`), safely when several
///   instances start at once; a schema migrated by a newer version is refused.
/// * **Commit**: a transaction that first locks the keys it reads (shared) and writes
///   (exclusive), so commits of one record are ordered across all instances while commits of
///   different records run side by side; preconditions are checked against the revision
///   columns, then every write and event is applied in one statement. A stale change set
///   gets [`StoreError::Conflict`] and writes nothing; no update is lost between processes.
///   Revisions and event ids come from sequences: they increase, but a commit that fails
///   after taking one leaves a gap, and commits side by side may land in either order (see
///   the [`Store`] contract). One round trip: `BEGIN`, the change sets (each one call of a
///   function of the schema that takes its locks, checks and applies it) and `COMMIT` go out
///   together. A connection lost before the answer leaves the outcome unknown, and the
///   error says so.
/// * **Views, listings and the event log** take their snapshot inside a gate that every
///   commit holds from taking its revision to its end: they wait for the commits already in
///   flight (one `COMMIT` at most) and then hold every revision up to theirs. Record reads
///   (`get`, `get_many`) do not wait.
/// * **Decision views** ([`Store::decision_view`]) answer from the records this instance
///   knows (what its commits wrote and what it read for decisions, at most 50,000 records)
///   and read the others in one statement, so a writer decides without a round trip. They
///   may lag behind other instances ([`ReadView::may_lag`]): a decision on one is safe only
///   under record preconditions for every record it read. A commit that conflicts answers
///   the records it expected as they are now, and the instance decides again on those:
///   that is how it learns what other instances wrote.
/// * **Group commit**: the change sets that queue up while two transactions of this store
///   are in flight go together as the next transaction: one WAL flush for all of them, one
///   statement each, pipelined. Each is still decided alone, against everything committed
///   before it (including earlier change sets of the same transaction): a conflicting one
///   writes nothing and the others commit. Nobody is answered before `COMMIT` returns. A
///   change set the database refuses (a NUL in a value, say) makes the batch run again one
///   transaction per change set, so only its caller sees the error.
/// * **Schema migration 3** (this version) replaced the row every commit locked by the key
///   locks and sequences above. Stop instances of earlier versions before starting this one
///   on their schema: they refuse a schema migrated by a newer version when they start, and
///   those still running fail their commits (their tables are gone) rather than writing
///   around the new order.
/// * **Durability**: a commit is durable when `commit` returns `Ok`, as far as the server's
///   own settings (`synchronous_commit`, `fsync`) make it. If the connection is lost while
///   `COMMIT` is in flight, `commit` fails with a [`StoreError::Backend`] whose message says
///   the outcome is unknown: re-read before deciding again.
/// * **Reads** are one statement each (a listing and its collection revision come from one
///   snapshot) and see every commit that returned before they started.
/// * **Failures**: a database that cannot be reached or does not answer in time (refused,
///   lost or timed-out connections, a server shutting down or starting up, a statement past
///   `statement_timeout`) is [`StoreError::Unavailable`]; other server errors become
///   [`StoreError::Backend`]s; both name the step that failed. Nothing waits without a bound
///   (connect, statement and pool-wait timeouts in [`PostgresConfig`]). Connections the
///   server closed are dropped from the pool and replaced; an operation that finds its
///   pooled connection dead before it sent anything retries on another one, so a restarted
///   server costs at most the calls that were in flight, and the store carries on by itself
///   once the server is back.
///
/// Connections must be the store's own sessions (direct, or through a pooler in session
/// mode): the gate is a session-level advisory lock while a view takes its snapshot, which a
/// transaction-mode pooler (PgBouncer's `pool_mode = transaction`) would not keep on one
/// server session.
///
/// Limits: PostgreSQL text and `jsonb` cannot hold the NUL character, so ids and values
/// containing `\0` are refused with a `Backend` error; event timestamps are kept to the
/// microsecond. Needs a Tokio runtime.
///
/// TLS (rustls) follows the connection string's `sslmode` and `sslrootcert` as libpq does:
/// `disable`, `prefer` (the default: encrypted when the server offers it), `require`
/// (encrypted, certificate not checked unless `sslrootcert` is given), `verify-ca` (signed
/// by a root in `sslrootcert`, default `~/.postgresql/root.crt`) and `verify-full` (and
/// issued for the host name). E.g.
/// `postgres://toggle@db.internal/toggles?sslmode=verify-full&sslrootcert=/etc/ssl/db-ca.pem`.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    schema: Arc<str>,
    statements: Arc<Statements>,
    commits: batch::Batcher,
    /// How long one attempt at an operation waits for the database (see `timeouts`).
    bound: Duration,
    /// `NOTIFY` after commits, `LISTEN` for [`Store::changes`] (see `notify.rs`).
    notifier: Arc<notify::Notifier>,
    /// The records this instance committed or read for a decision (see `known.rs`).
    known: Arc<known::KnownRecords>,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("connections", &status.size)
            .field("max_connections", &status.max_size)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connect to the database of `config`, creating and migrating the store's schema.
    ///
    /// Fails with [`StoreError::Backend`] when the configuration is invalid, the server cannot
    /// be reached, or the migration fails (it then leaves the schema as it was).
    pub async fn connect(config: PostgresConfig) -> Result<Self, StoreError> {
        let schema = &config.schema;
        if schema.is_empty() || schema.len() > 63 || schema.contains('\0') {
            // PostgreSQL silently truncates longer identifiers, which would make the
            // existence check and the statements disagree about the schema's name.
            return Err(plain(format!(
                "PostgreSQL: invalid schema name {schema:?}: it must be 1 to 63 bytes without NUL"
            )));
        }
        let (url, tls_settings) = tls::split_settings(&config.url)?;
        let (ssl_mode, tls) = tls::connector(&tls_settings)?;
        let mut pg_config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| backend("parsing the connection URL", e))?;
        pg_config.ssl_mode(ssl_mode);
        if pg_config.get_application_name().is_none() {
            pg_config.application_name(&config.application_name);
        }
        if pg_config.get_connect_timeout().is_none() {
            pg_config.connect_timeout(config.connect_timeout);
        }
        let options = timeouts::session_options(pg_config.get_options(), config.statement_timeout);
        pg_config.options(&options);
        // `Fast` recycling only checks that the socket is still open: a connection the server
        // ended while idle is caught by the stale-connection retry instead of costing every
        // checkout a round trip, as `Verified` would.
        let listen_config = pg_config.clone();
        let listen_tls = tls.clone();
        let manager = Manager::from_config(
            pg_config,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(config.wait_timeout))
            .create_timeout(Some(config.connect_timeout))
            .build()
            .map_err(|e| plain(format!("PostgreSQL: building the connection pool: {e}")))?;
        let statements = Arc::new(Statements::new(schema));
        let known = Arc::<known::KnownRecords>::default();
        let notifier = Arc::new(notify::Notifier::new(
            schema,
            listen_config,
            listen_tls,
            pool.clone(),
            statements.revision.clone(),
        ));
        let commits = batch::Batcher::start(batch::Committer {
            pool: pool.clone(),
            statements: Arc::clone(&statements),
            attempts: pool.status().max_size + 1,
            bound: timeouts::client_bound(config.statement_timeout),
            known: Arc::clone(&known),
            notifier: Arc::clone(&notifier),
        });
        let store = PostgresStore {
            notifier,
            known,
            pool,
            schema: Arc::from(schema.as_str()),
            statements,
            commits,
            bound: timeouts::client_bound(config.statement_timeout),
        };
        let mut client = store
            .pool
            .get()
            .await
            .map_err(|e| failure::pool("connect", e))?;
        migrate::migrate(&mut client, schema).await?;
        Ok(store)
    }

    /// The schema holding the store's tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Close the pool: open connections are dropped and later operations fail. Clones of this
    /// store share the pool.
    pub fn close(&self) {
        self.pool.close();
    }

    /// A settled view on a pooled connection.
    async fn settled_view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        let client = self
            .pool
            .get()
            .await
            .map_err(|e| failure::pool("taking a view", e))?;
        Ok(Box::new(
            view::PgView::begin(client, Arc::clone(&self.statements), self.bound).await?,
        ))
    }

    /// How many times an operation may retry after finding its pooled connection dead: once
    /// per pooled connection (all may have died together) and once more for a fresh one.
    fn attempts(&self) -> usize {
        self.pool.status().max_size + 1
    }
}

#[async_trait]
impl Queries for PostgresStore {
    fn statements(&self) -> &Statements {
        &self.statements
    }

    /// Run one read statement, on another connection if the pooled one turns out dead.
    /// Reads change nothing, so running one again is always safe.
    async fn query(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        self.read(what, sql, params, Gate::Skip).await
    }

    /// The statement between taking the gate's lock and letting go of it, all three sent at
    /// once: the statement's snapshot is taken once no commit holding a revision is in
    /// flight, and commits wait for that one statement at most.
    async fn query_settled(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        self.read(what, sql, params, Gate::Inside).await
    }
}

/// Whether a read takes its snapshot inside the gate.
#[derive(Clone, Copy)]
enum Gate {
    Skip,
    Inside,
}

impl PostgresStore {
    /// One read statement on a pooled connection, again on another if that one turns out
    /// dead (reads change nothing, so running one again is always safe).
    async fn read(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        gate: Gate,
    ) -> Result<Vec<Row>, StoreError> {
        let mut attempt = 1;
        loop {
            let client = self.pool.get().await.map_err(|e| failure::pool(what, e))?;
            // The connection goes back to the pool only when its statements answered:
            // otherwise (or if this future is dropped midway) it leaves the pool, since it
            // may be dead, hung, or (inside the gate) still hold the gate's lock.
            let settling = Settling(Some(client));
            let Some(client) = settling.0.as_ref() else {
                return Err(plain(format!("PostgreSQL: {what}: no connection")));
            };
            let once = async {
                match gate {
                    Gate::Skip => read_once(client, sql, params).await,
                    Gate::Inside => self.read_settled_once(client, sql, params).await,
                }
            };
            let result = match timeouts::bounded(self.bound, once).await {
                Ok(result) => result,
                Err(elapsed) => return Err(elapsed.error(what, false)),
            };
            let keep = match gate {
                Gate::Skip => !connection_lost_result(&result),
                Gate::Inside => result.is_ok(),
            };
            if keep {
                settling.done();
            }
            match result {
                Ok(rows) => return Ok(rows),
                Err(e) if connection_lost(&e) && attempt < self.attempts() => {
                    tracing::debug!(error = %e, what, "retrying a read on a fresh connection");
                    attempt += 1;
                }
                Err(e) => return Err(backend(what, e)),
            }
        }
    }

    /// One read statement on `client`, between taking the gate's lock and letting go of it.
    async fn read_settled_once(
        &self,
        client: &deadpool_postgres::Client,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let prepared = |sql| client.prepare_cached(sql);
        let (wait, statement, release) = join3(
            prepared(&self.statements.gate_wait),
            prepared(sql),
            prepared(&self.statements.gate_release),
        )
        .await;
        let (wait, statement, release) = (wait?, statement?, release?);
        let schema: [&(dyn ToSql + Sync); 1] = [&self.statements.schema];
        let (waited, rows, released) = join3(
            client.query(&wait, &schema),
            client.query(&statement, params),
            client.query(&release, &schema),
        )
        .await;
        // Each ran in its own transaction: a failed read leaves the lock to the release,
        // which ran after it.
        waited?;
        released?;
        rows
    }
}

/// One read statement on `client`.
async fn read_once(
    client: &deadpool_postgres::Client,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let statement = client.prepare_cached(sql).await?;
    client.query(&statement, params).await
}

/// Whether a read failed because its connection is gone (it then leaves the pool).
fn connection_lost_result(result: &Result<Vec<Row>, tokio_postgres::Error>) -> bool {
    result.as_ref().err().is_some_and(connection_lost)
}

/// A pooled connection that may hold the gate's session lock: dropped before
/// [`Settling::done`], it leaves the pool for good (closing its session, and so the lock)
/// instead of going back with the lock still held.
struct Settling(Option<deadpool_postgres::Client>);

impl Settling {
    /// The connection is back to a plain state: return it to the pool.
    fn done(mut self) {
        self.0.take();
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            discard(client);
        }
    }
}

/// Take a dead connection out of the pool for good. Returning it would be harmless only once
/// the client has noticed the socket is closed, which can lag behind the error we just saw.
fn discard(client: deadpool_postgres::Client) {
    drop(deadpool_postgres::Object::take(client));
}

/// The records a `get_many` statement found, in the order of the `n` keys asked for.
fn records_in_order(
    rows: &[Row],
    n: usize,
    what: &str,
) -> Result<Vec<Option<Versioned>>, StoreError> {
    let mut found = vec![None; n];
    for row in rows {
        let ord: i64 = row.try_get(0).map_err(|e| backend(what, e))?;
        let slot = usize::try_from(ord - 1)
            .ok()
            .and_then(|index| found.get_mut(index))
            .ok_or_else(|| plain(format!("PostgreSQL: {what}: unexpected position {ord}")))?;
        *slot = Some(versioned(row, 1, 2, what)?);
    }
    Ok(found)
}

/// The listing a `list_*` statement found.
fn listing_of(rows: &[Row], what: &str) -> Result<Listing, StoreError> {
    let mut listing = Listing::default();
    if let Some(first) = rows.first() {
        listing.revision = revision_of(first, 0, what)?;
    }
    listing.records.reserve(rows.len());
    for row in rows {
        // The LEFT JOIN yields one row with a NULL id when nothing matches.
        let id: Option<String> = row.try_get(1).map_err(|e| backend(what, e))?;
        if let Some(id) = id {
            listing.records.push((id, versioned(row, 2, 3, what)?));
        }
    }
    Ok(listing)
}

fn revision_of(row: &Row, index: usize, what: &str) -> Result<Revision, StoreError> {
    let value: i64 = row.try_get(index).map_err(|e| backend(what, e))?;
    u64::try_from(value)
        .map(Revision)
        .map_err(|_| plain(format!("PostgreSQL: {what}: negative revision {value}")))
}

fn versioned(
    row: &Row,
    value: usize,
    revision: usize,
    what: &str,
) -> Result<Versioned, StoreError> {
    Ok(Versioned {
        value: row
            .try_get::<_, PgJson<Box<RawValue>>>(value)
            .map(|raw| Json::from_raw(raw.0))
            .map_err(|e| backend(what, e))?,
        revision: revision_of(row, revision, what)?,
    })
}

fn optional_json(row: &Row, index: usize) -> Result<Option<Json>, tokio_postgres::Error> {
    let raw: Option<PgJson<Box<RawValue>>> = row.try_get(index)?;
    Ok(raw.map(|raw| Json::from_raw(raw.0)))
}

fn event_of(row: &Row) -> Result<Event, StoreError> {
    event_at(row, 0)
}

/// The event in the twelve columns of `row` from `first` on.
fn event_at(row: &Row, first: usize) -> Result<Event, StoreError> {
    let what = "reading events";
    let get_err = |e| backend(what, e);
    let id: i64 = row.try_get(first).map_err(get_err)?;
    Ok(Event {
        id: u64::try_from(id)
            .map_err(|_| plain(format!("PostgreSQL: {what}: negative event id {id}")))?,
        revision: revision_of(row, first + 1, what)?,
        event: NewEvent {
            event_type: row.try_get(first + 2).map_err(get_err)?,
            created_by: row.try_get(first + 3).map_err(get_err)?,
            created_at: row
                .try_get::<_, DateTime<Utc>>(first + 4)
                .map_err(get_err)?,
            project: row.try_get(first + 5).map_err(get_err)?,
            feature_name: row.try_get(first + 6).map_err(get_err)?,
            environment: row.try_get(first + 7).map_err(get_err)?,
            data: optional_json(row, first + 8).map_err(get_err)?,
            pre_data: optional_json(row, first + 9).map_err(get_err)?,
            created_by_user_id: row.try_get(first + 10).map_err(get_err)?,
            tags: optional_json(row, first + 11).map_err(get_err)?,
        },
    })
}

/// A page of events from the rows of an `event_pages` statement.
fn event_page_of(rows: &[Row]) -> Result<EventPage, StoreError> {
    let what = "reading events";
    let total: i64 = match rows.first() {
        Some(row) => row.try_get(0).map_err(|e| backend(what, e))?,
        None => 0,
    };
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let id: Option<i64> = row.try_get(1).map_err(|e| backend(what, e))?;
        if id.is_some() {
            events.push(event_at(row, 1)?);
        }
    }
    Ok(EventPage::new(
        events,
        u64::try_from(total).unwrap_or_default(),
    ))
}

#[async_trait]
impl Store for PostgresStore {
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
        reads::get(self, key).await
    }

    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
        reads::get_many(self, keys).await
    }

    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
        reads::list(self, collection, prefix).await
    }

    async fn view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        self.settled_view().await
    }

    async fn decision_view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        Ok(Box::new(known::KnownView::new(self.clone())))
    }

    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .query_settled("reading events", &self.statements.events, &[&after, &limit])
            .await?;
        rows.iter().map(event_of).collect()
    }

    async fn query_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        let filters = usize::from(query.event_type.is_some())
            | usize::from(query.project.is_some()) << 1
            | usize::from(query.feature.is_some()) << 2;
        let clamp = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let before = clamp(query.before.unwrap_or(u64::MAX));
        let offset = clamp(query.offset);
        let limit = clamp(query.limit as u64);
        let rows = self
            .query_settled(
                "reading events",
                &self.statements.event_pages[filters],
                &[
                    &query.event_type,
                    &query.project,
                    &query.feature,
                    &before,
                    &offset,
                    &limit,
                ],
            )
            .await?;
        event_page_of(&rows)
    }

    async fn revision(&self) -> Result<Revision, StoreError> {
        let what = "reading the store revision";
        let rows = self.query(what, &self.statements.revision, &[]).await?;
        let row = rows
            .first()
            .ok_or_else(|| plain(format!("PostgreSQL: {what}: no revision read")))?;
        revision_of(row, 0, what)
    }

    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
        let written = known::Written::of(&changes);
        match self.commits.commit(changes).await {
            Ok(revision) => {
                self.known.committed(written, revision);
                Ok(revision)
            }
            // A conflict taught this instance the records as they are now (see
            // `commit::outcome`).
            Err(error) if error.is_conflict() => Err(error),
            Err(error) => {
                // Its outcome may be unknown: what this instance knew of its records is in
                // doubt.
                self.known.forget(&written);
                Err(error)
            }
        }
    }

    fn changes(&self) -> Option<tokio::sync::watch::Receiver<Revision>> {
        self.notifier.changes()
    }
}
