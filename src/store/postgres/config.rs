//! How a [`PostgresStore`](super::PostgresStore) reaches its database: the connection
//! string, the schema, the pool and the timeouts.

use std::fmt;
use std::time::Duration;

/// How to reach the database and where in it the store lives.
///
/// ```
/// # use toggle_admin::store::PostgresConfig;
/// let config = PostgresConfig::new("postgres://toggle@db.internal/toggles")
///     .with_schema("toggle_admin")
///     .with_pool_size(16);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct PostgresConfig {
    /// A libpq-style connection string: a URL (`postgres://user:password@host:port/db`) or
    /// `key=value` pairs. Settings such as `application_name` and `connect_timeout` given
    /// here win over the defaults below. `sslmode` and `sslrootcert` choose TLS as in libpq
    /// (see [`PostgresStore`](super::PostgresStore)).
    pub url: String,
    /// The schema holding the store's tables, created if missing (default `toggle_admin`).
    /// Several stores can share a database in different schemas. At most 63 bytes.
    pub schema: String,
    /// The most connections the store's pool opens (default 16).
    pub pool_size: usize,
    /// The `application_name` the connections report, unless the URL sets one (default
    /// `toggle-admin`); it is how an operator finds the store's sessions in
    /// `pg_stat_activity`.
    pub application_name: String,
    /// How long opening one connection may take, unless the URL sets `connect_timeout`
    /// (default 5 s). A server that is down refuses at once; this bounds the wait for one
    /// that does not answer at all.
    pub connect_timeout: Duration,
    /// How long one statement may run (default 10 s): the sessions' `statement_timeout`,
    /// and, plus 2 s, how long the store waits for the answers of one attempt at an
    /// operation before it drops the connection (a server that froze or a network that
    /// drops packets never answers; see `StoreError::Unavailable`). The connection string's
    /// own `options=-c statement_timeout=…` wins on the server.
    pub statement_timeout: Duration,
    /// How long an operation waits for a free connection when all are busy before failing
    /// (default 30 s).
    pub wait_timeout: Duration,
}

impl PostgresConfig {
    /// The defaults for the database at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        PostgresConfig {
            url: url.into(),
            schema: "toggle_admin".to_owned(),
            pool_size: 16,
            application_name: "toggle-admin".to_owned(),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            wait_timeout: Duration::from_secs(30),
        }
    }

    /// Give up opening a connection after `timeout` (see
    /// [`connect_timeout`](Self::connect_timeout)).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Cancel statements running longer than `timeout` (see
    /// [`statement_timeout`](Self::statement_timeout)).
    pub fn with_statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = timeout;
        self
    }

    /// Use `schema` for the store's tables.
    pub fn with_schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Open at most `pool_size` connections.
    pub fn with_pool_size(mut self, pool_size: usize) -> Self {
        self.pool_size = pool_size;
        self
    }

    /// Report `name` as the connections' `application_name`.
    pub fn with_application_name(mut self, name: impl Into<String>) -> Self {
        self.application_name = name.into();
        self
    }
}

impl fmt::Debug for PostgresConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may carry a password: leave it out.
        f.debug_struct("PostgresConfig")
            .field("schema", &self.schema)
            .field("pool_size", &self.pool_size)
            .field("application_name", &self.application_name)
            .field("connect_timeout", &self.connect_timeout)
            .field("statement_timeout", &self.statement_timeout)
            .field("wait_timeout", &self.wait_timeout)
            .finish_non_exhaustive()
    }
}
