//! `toggle-admin serve`: the admin API, the client and frontend APIs and the admin page over
//! one store.
//!
//! * Storage, one of: `--data DIR` (a FileStore in `DIR`, created if missing), `--memory`
//!   (gone at exit), `--postgres URL` (a PostgresStore in the schema `toggle_admin` or
//!   `--postgres-schema NAME`). TLS to PostgreSQL follows the URL's `sslmode` and
//!   `sslrootcert` as libpq does; `--postgres-ssl-mode` and `--postgres-ssl-ca-file` add them
//!   to the URL. While the database is down or does not answer, requests get 503
//!   `ServiceUnavailable` within `--postgres-connect-timeout` / `--postgres-statement-timeout`,
//!   and the server carries on once it is back.
//! * On a store without any API key it creates an admin key and prints it once; when
//!   `TOGGLE_ADMIN_BOOTSTRAP_KEY` is set (at least 32 characters), that value becomes the first
//!   admin key instead. It then creates the environments `development` and `production` and
//!   the project `default` with both, as Unleash ships.
//! * With `--import-file FILE` (`IMPORT_FILE`), imports FILE, an export document, into
//!   `--import-project` (default `default`) and `--import-environment` (default
//!   `development`) at every start, before it answers; `--import-mode create-missing` (the
//!   default) leaves existing features as they are, `replace` makes them as the file says. A
//!   broken file stops the start (see `seed`).
//! * Prints `listening on http://ADDR` once it accepts connections.
//! * SIGTERM or Ctrl-C: stops accepting, lets the requests in flight finish (at most
//!   `--shutdown-timeout` seconds), then closes the store. Every acknowledged write is already
//!   durable (the stores commit before answering).

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Args, FromArgMatches, ValueEnum};
use metrics_exporter_prometheus::PrometheusBuilder;
use toggle_admin::admin::{DEFAULT_HISTORY_EVENTS, DEFAULT_METRICS_FLUSH_INTERVAL, PushConfig};
use toggle_admin::http::{
    DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_COMPRESSION_MIN_SIZE,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_SHUTDOWN_DEADLINE, RouterConfig,
};
use toggle_admin::store::PostgresConfig;
use toggle_admin::ui::{DEFAULT_BASE_PATH, SecureCookie, UiConfig};

use seed::SeedArgs;
use store::{Store, bootstrap, open};

mod seed;
mod store;

/// Shown after the flags in `--help`.
const AFTER_HELP: &str = "\
Every flag can also be set by the environment variable named; a flag wins, and a storage flag \
given on the command line (--data, --memory, --postgres) overrides all three variables.
TOGGLE_ADMIN_BOOTSTRAP_KEY (environment only): on a store without keys, the first admin key \
(at least 32 characters) instead of a generated one that is printed once.
RUST_LOG: the log filter (default info); logs go to stderr.";

/// The flags of `toggle-admin serve`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ServeArgs {
    #[command(flatten)]
    storage: Storage,

    #[command(flatten)]
    seed: SeedArgs,

    /// The PostgresStore's schema (default toggle_admin)
    #[arg(long, env = "DATABASE_SCHEMA", value_name = "NAME")]
    postgres_schema: Option<String>,

    /// sslmode: disable, prefer (default), require, verify-ca, verify-full
    #[arg(long, env = "DATABASE_SSL_MODE", value_name = "MODE")]
    postgres_ssl_mode: Option<String>,

    /// sslrootcert: PEM root certificates for verify-ca and verify-full
    #[arg(long, env = "DATABASE_SSL_CA_FILE", value_name = "FILE")]
    postgres_ssl_ca_file: Option<String>,

    /// Give up opening a database connection after this (default 5)
    #[arg(
        long,
        env = "DATABASE_CONNECT_TIMEOUT",
        value_name = "SECS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    postgres_connect_timeout: Option<u64>,

    /// Cancel database statements running longer (default 10)
    #[arg(
        long,
        env = "DATABASE_STATEMENT_TIMEOUT",
        value_name = "SECS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    postgres_statement_timeout: Option<u64>,

    /// Where to listen (port 0 picks a free one)
    #[arg(
        long,
        env = "TOGGLE_ADMIN_ADDR",
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:4242"
    )]
    addr: String,

    /// The host part of --addr
    #[arg(long, env = "HTTP_HOST", value_name = "HOST")]
    host: Option<String>,

    /// The port part of --addr; PORT is read too when HTTP_PORT is not set
    #[arg(long, env = "HTTP_PORT", value_name = "PORT")]
    port: Option<String>,

    /// Largest request body; larger ones get 413
    #[arg(
        long,
        env = "TOGGLE_ADMIN_BODY_LIMIT",
        value_name = "BYTES",
        default_value_t = DEFAULT_BODY_LIMIT
    )]
    body_limit: usize,

    /// Answer 503 to requests taking longer
    #[arg(
        long,
        env = "TOGGLE_ADMIN_REQUEST_TIMEOUT",
        value_name = "SECS",
        default_value_t = DEFAULT_REQUEST_TIMEOUT.as_secs()
    )]
    request_timeout: u64,

    /// Close connections slower to send their headers
    #[arg(
        long,
        env = "SERVER_HEADERS_TIMEOUT",
        value_name = "SECS",
        default_value_t = DEFAULT_HEADER_READ_TIMEOUT.as_secs()
    )]
    headers_timeout: u64,

    /// Fail requests slower to send their body
    #[arg(
        long,
        env = "TOGGLE_ADMIN_BODY_TIMEOUT",
        value_name = "SECS",
        default_value_t = DEFAULT_BODY_READ_TIMEOUT.as_secs()
    )]
    body_timeout: u64,

    /// At shutdown, the time left to requests in flight
    #[arg(
        long,
        env = "SERVER_GRACEFUL_SHUTDOWN_TIMEOUT",
        value_name = "SECS",
        default_value_t = DEFAULT_SHUTDOWN_DEADLINE.as_secs()
    )]
    shutdown_timeout: u64,

    /// Where the admin page is; off leaves it out
    #[arg(
        long,
        env = "TOGGLE_ADMIN_UI_PATH",
        value_name = "PATH|off",
        default_value = DEFAULT_BASE_PATH
    )]
    ui_path: String,

    /// The admin page's session cookie is Secure: over TLS (auto), always, never
    #[arg(
        long,
        env = "TOGGLE_ADMIN_UI_SECURE_COOKIE",
        value_name = "WHEN",
        value_enum,
        default_value_t = CookieSecurity::Auto
    )]
    ui_secure_cookie: CookieSecurity,

    /// Gzip answers from this size when the client accepts it; off never
    #[arg(
        long,
        env = "TOGGLE_ADMIN_COMPRESSION_MIN_SIZE",
        value_name = "BYTES|off",
        value_parser = compression_min_size,
        default_value_t = MinSize(Some(DEFAULT_COMPRESSION_MIN_SIZE))
    )]
    compression_min_size: MinSize,

    /// SDK streams open at once at most; more get 429
    #[arg(
        long,
        env = "TOGGLE_ADMIN_MAX_STREAMS",
        value_name = "N",
        default_value_t = PushConfig::default().max_streams
    )]
    max_streams: usize,

    /// SDK streams one API key may hold open; more get 429
    #[arg(
        long,
        env = "TOGGLE_ADMIN_MAX_STREAMS_PER_KEY",
        value_name = "N",
        default_value_t = PushConfig::default().max_streams_per_key
    )]
    max_streams_per_key: usize,

    /// Delta events kept per scope (older clients hydrate)
    #[arg(
        long,
        env = "TOGGLE_ADMIN_DELTA_HISTORY",
        value_name = "N",
        default_value_t = DEFAULT_HISTORY_EVENTS
    )]
    delta_history: usize,

    /// Origins (comma-separated) browsers may call /api/frontend from; * for any
    #[arg(
        long,
        env = "UNLEASH_FRONTEND_API_ORIGINS",
        value_name = "ORIGINS",
        default_value = "*"
    )]
    frontend_origins: String,

    /// The URL clients reach the server at, http(s)://HOST[/PATH], as /api/admin/ui-config
    /// answers it; by default each request's own address
    #[arg(long, env = "UNLEASH_URL", value_name = "URL", value_parser = public_url)]
    unleash_url: Option<String>,
}

/// The storage flags, as clap reads them.
#[derive(Debug, Args)]
struct StorageFlags {
    /// A FileStore in DIR (created if missing)
    #[arg(long, env = "TOGGLE_ADMIN_DATA", value_name = "DIR")]
    data: Option<String>,

    /// Keep everything in memory (gone at exit); the variable counts when true, 1 or yes
    #[arg(long, env = "TOGGLE_ADMIN_MEMORY", action = ArgAction::SetTrue, value_parser = is_true)]
    memory: bool,

    /// A PostgresStore: a libpq URL (sslmode and sslrootcert as libpq reads them)
    #[arg(long, env = "DATABASE_URL", value_name = "URL")]
    postgres: Option<String>,
}

/// The storage flags that count: the command line's, when it gives any (the environment's
/// are then ignored, so that `--memory` runs in memory whatever `DATABASE_URL` says), else the
/// environment's.
#[derive(Debug)]
struct Storage(StorageFlags);

const STORAGE_IDS: [&str; 3] = ["data", "memory", "postgres"];

impl FromArgMatches for Storage {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = StorageFlags::from_arg_matches(matches)?;
        let source = |id: &str| matches.value_source(id);
        if STORAGE_IDS
            .iter()
            .any(|id| source(id) == Some(ValueSource::CommandLine))
        {
            let from_environment = |id: &str| source(id) == Some(ValueSource::EnvVariable);
            if from_environment("data") {
                flags.data = None;
            }
            if from_environment("memory") {
                flags.memory = false;
            }
            if from_environment("postgres") {
                flags.postgres = None;
            }
        }
        Ok(Storage(flags))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for Storage {
    fn augment_args(command: clap::Command) -> clap::Command {
        StorageFlags::augment_args(command)
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        StorageFlags::augment_args_for_update(command)
    }
}

fn is_true(value: &str) -> Result<bool, std::convert::Infallible> {
    Ok(matches!(value, "true" | "1" | "yes"))
}

/// `--unleash-url`: an absolute `http` or `https` URL with a host (clients build links on it).
fn public_url(value: &str) -> Result<String, String> {
    let value = value.trim();
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
        .ok_or("expected an http:// or https:// URL")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.contains(['@', ' ']) {
        return Err("expected a URL with a host, such as https://flags.example.com".to_owned());
    }
    Ok(value.to_owned())
}

/// `--ui-secure-cookie`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum CookieSecurity {
    Auto,
    Always,
    Never,
}

impl From<CookieSecurity> for SecureCookie {
    fn from(value: CookieSecurity) -> Self {
        match value {
            CookieSecurity::Auto => SecureCookie::Auto,
            CookieSecurity::Always => SecureCookie::Always,
            CookieSecurity::Never => SecureCookie::Never,
        }
    }
}

/// `--compression-min-size`: bytes, or `None` for `off`.
#[derive(Debug, Clone, Copy)]
struct MinSize(Option<u64>);

impl std::fmt::Display for MinSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(bytes) => write!(f, "{bytes}"),
            None => f.write_str("off"),
        }
    }
}

fn compression_min_size(value: &str) -> Result<MinSize, String> {
    match value {
        "off" => Ok(MinSize(None)),
        bytes => bytes
            .parse()
            .map(|bytes| MinSize(Some(bytes)))
            .map_err(|e| format!("{e} (bytes, or off)")),
    }
}

impl ServeArgs {
    fn store(&self) -> Result<Store, String> {
        let StorageFlags {
            data,
            memory,
            postgres,
        } = &self.storage.0;
        let chosen: Vec<&str> = [
            data.is_some().then_some("--data"),
            memory.then_some("--memory"),
            postgres.is_some().then_some("--postgres"),
        ]
        .into_iter()
        .flatten()
        .collect();
        match (data, postgres, chosen.as_slice()) {
            (_, _, []) => Err(
                "say where the state lives: --data DIR, --memory or --postgres URL \
                 (or TOGGLE_ADMIN_DATA, TOGGLE_ADMIN_MEMORY, DATABASE_URL); see --help"
                    .into(),
            ),
            (Some(dir), _, ["--data"]) => Ok(Store::Data(dir.clone())),
            (_, _, ["--memory"]) => Ok(Store::Memory),
            (_, Some(url), ["--postgres"]) => Ok(Store::Postgres(self.postgres_config(url))),
            (_, _, several) => Err(format!(
                "choose one of {} (given by flags or environment)",
                several.join(", ")
            )),
        }
    }

    fn postgres_config(&self, url: &str) -> PostgresConfig {
        let mut url = url.to_owned();
        for (value, key) in [
            (&self.postgres_ssl_mode, "sslmode"),
            (&self.postgres_ssl_ca_file, "sslrootcert"),
        ] {
            let Some(value) = value else { continue };
            url = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
                let separator = if url.contains('?') { '&' } else { '?' };
                format!(
                    "{url}{separator}{key}={}",
                    value.replace('%', "%25").replace('&', "%26")
                )
            } else {
                format!("{url} {key}='{value}'")
            };
        }
        let mut config = PostgresConfig::new(url);
        if let Some(schema) = &self.postgres_schema {
            config = config.with_schema(schema.clone());
        }
        if let Some(secs) = self.postgres_connect_timeout {
            config = config.with_connect_timeout(Duration::from_secs(secs));
        }
        if let Some(secs) = self.postgres_statement_timeout {
            config = config.with_statement_timeout(Duration::from_secs(secs));
        }
        config
    }

    /// `--addr`, with `--host` and `--port` (or `PORT`) in place of its parts.
    fn addr(&self) -> Result<String, String> {
        let port = self
            .port
            .clone()
            .or_else(|| std::env::var("PORT").ok().filter(|v| !v.is_empty()));
        if self.host.is_none() && port.is_none() {
            return Ok(self.addr.clone());
        }
        let (host, default_port) = self
            .addr
            .rsplit_once(':')
            .ok_or_else(|| format!("--addr {}: expected HOST:PORT", self.addr))?;
        let host = self.host.as_deref().unwrap_or(host);
        let port = port.as_deref().unwrap_or(default_port);
        Ok(format!("{host}:{port}"))
    }

    fn router_config(&self) -> RouterConfig {
        let config = RouterConfig::new()
            .body_limit(self.body_limit)
            .request_timeout(Duration::from_secs(self.request_timeout))
            .header_read_timeout(Duration::from_secs(self.headers_timeout))
            .body_read_timeout(Duration::from_secs(self.body_timeout))
            .shutdown_deadline(Duration::from_secs(self.shutdown_timeout))
            .compression_min_size(self.compression_min_size.0)
            .frontend_origins(
                self.frontend_origins
                    .split(',')
                    .map(str::trim)
                    .filter(|o| !o.is_empty()),
            );
        match &self.unleash_url {
            Some(url) => config.public_url(url),
            None => config,
        }
    }

    fn push_config(&self) -> PushConfig {
        PushConfig {
            max_streams: self.max_streams,
            max_streams_per_key: self.max_streams_per_key,
            history_events: self.delta_history,
            ..PushConfig::default()
        }
    }

    /// The admin page's configuration; `None` for `--ui-path off`.
    fn ui_config(&self) -> Option<UiConfig> {
        (self.ui_path != "off").then(|| {
            UiConfig::new()
                .base_path(&self.ui_path)
                .secure_cookie(self.ui_secure_cookie.into())
        })
    }
}

/// Serve until SIGTERM or Ctrl-C.
pub async fn run(args: ServeArgs) -> Result<(), String> {
    let store = args.store()?;
    let addr = args.addr()?;
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| format!("installing the metrics recorder: {e}"))?;
    // A broken file stops the start before the store is even opened.
    let seed = args.seed.read().await?;
    let (admin, close) = open(store).await?;
    admin.set_push_config(args.push_config());
    let generated = bootstrap(&admin).await?;
    if let Some(seed) = &seed
        && let Err(message) = seed.run(&admin).await
    {
        // The new store's generated key is shown once: not lost with the failed start.
        if let Some(secret) = &generated {
            let _ = writeln!(
                std::io::stdout().lock(),
                "admin API key (shown once, keep it): {secret}"
            );
        }
        drop(admin);
        close();
        return Err(message);
    }
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| format!("--addr {addr}: {e}"))?;
    let local: SocketAddr = listener
        .local_addr()
        .map_err(|e| format!("--addr {addr}: {e}"))?;
    // Before "listening on" is printed: from then on a SIGTERM means a clean stop.
    let shutdown = shutdown_signal();
    {
        let mut out = std::io::stdout().lock();
        if let Some(secret) = generated {
            let _ = writeln!(out, "admin API key (shown once, keep it): {secret}");
        }
        let _ = writeln!(out, "listening on http://{local}");
        let _ = out.flush();
    }
    tracing::info!(%local, "serving the admin API");
    // SDK metrics are buffered in memory: written every few seconds, and at shutdown.
    let flusher = {
        let admin = admin.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(DEFAULT_METRICS_FLUSH_INTERVAL);
            loop {
                every.tick().await;
                if let Err(e) = admin.flush_client_metrics().await {
                    tracing::warn!("writing client metrics: {e}");
                }
            }
        })
    };
    let mut config = args.router_config();
    if let Some(ui) = args.ui_config() {
        let _ = writeln!(
            std::io::stdout().lock(),
            "admin page at http://{local}{}",
            ui.base()
        );
        config = config.merge(ui.router(admin.clone()));
    }
    let served = config
        .prometheus(prometheus)
        .serve(admin.clone(), listener, shutdown)
        .await;
    flusher.abort();
    if let Err(e) = admin.flush_client_metrics().await {
        tracing::error!("writing client metrics at shutdown: {e}");
    }
    drop(admin);
    close();
    served.map_err(|e| format!("serving: {e}"))?;
    tracing::info!("stopped");
    Ok(())
}

/// SIGTERM or Ctrl-C. The handlers are installed when this is called, not when the future is
/// first polled, so that a signal sent as soon as "listening on" is printed is never missed
/// (the default action would kill the process mid-shutdown).
fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let terminate = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (terminate, interrupt) {
                (Ok(mut terminate), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = terminate.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                (Err(e), _) | (_, Err(e)) => {
                    tracing::error!("cannot listen for SIGTERM and SIGINT: {e}");
                    std::future::pending::<()>().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    }
}
