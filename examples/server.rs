//! The admin API as a runnable server.
//!
//! ```sh
//! cargo run --release --features http,ui --example server -- --data DIR --addr 127.0.0.1:4242
//! cargo run --release --features http,ui --example server -- --memory
//! cargo run --release --features http,ui,postgres --example server -- --postgres postgres://…
//! cargo run --release --features http,ui,mimalloc --example server -- --data DIR   # allocator: mimalloc
//! ```
//!
//! With feature `ui` (the commands above) the admin page is served at `/admin` (`--ui-path`,
//! `off` to leave it out); without it, the admin API alone.
//!
//! Every flag can also be given by an environment variable (named as Unleash names it where
//! Unleash has one); a flag on the command line wins. `--help` lists them all.
//!
//! * Storage, one of: `--data DIR` (a FileStore in `DIR`, created if missing), `--memory`
//!   (gone at exit), `--postgres URL` (feature `postgres`; a PostgresStore in the schema
//!   `toggle_admin` or `--postgres-schema NAME`). TLS to PostgreSQL follows the URL's
//!   `sslmode` and `sslrootcert` as libpq does (`disable`, `prefer` (default), `require`,
//!   `verify-ca`, `verify-full`); `--postgres-ssl-mode` and `--postgres-ssl-ca-file` add
//!   them to the URL. For a managed database use
//!   `?sslmode=verify-full&sslrootcert=/path/to/provider-ca.pem`.
//!   `--postgres-connect-timeout` and `--postgres-statement-timeout` bound the waits for the
//!   database: while it is down or does not answer, requests get 503 `ServiceUnavailable`
//!   within them, and the server carries on once it is back.
//! * On a store without any API key it creates an admin key and prints it once; when
//!   `TOGGLE_ADMIN_BOOTSTRAP_KEY` is set (at least 32 characters, e.g. `openssl rand -hex
//!   32`), that value becomes the first admin key instead. It then creates the environments
//!   `development` and `production` and the project `default` with both, as Unleash ships.
//! * The frontend API (`/api/frontend*`) answers CORS for `--frontend-origins` (comma-separated,
//!   default `*`, env `UNLEASH_FRONTEND_API_ORIGINS` as in Unleash).
//! * `GET /health`, `GET /ready` (the store commits) and Prometheus metrics at
//!   `/internal-backstage/prometheus`, none needing a key.
//! * Prints `listening on http://ADDR` once it accepts connections. Logs go to stderr
//!   (`RUST_LOG`, default `info`).
//! * SIGTERM or Ctrl-C: stops accepting, lets the requests in flight finish (at most
//!   `--shutdown-timeout` seconds), then closes the store. Every acknowledged write is
//!   already durable (the stores commit before answering).

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use toggle_admin::http::{
    DEFAULT_BODY_LIMIT, DEFAULT_BODY_READ_TIMEOUT, DEFAULT_COMPRESSION_MIN_SIZE,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_SHUTDOWN_DEADLINE, RouterConfig,
};
use toggle_admin::model::Environment;
use toggle_admin::model::NewProject;
use toggle_admin::store::FileStore;
use toggle_admin::{Error, MemoryStore, ToggleAdmin};

/// Where the state lives.
enum Storage {
    Memory,
    Data(String),
    #[cfg(feature = "postgres")]
    Postgres {
        url: String,
        schema: Option<String>,
        connect_timeout: Option<Duration>,
        statement_timeout: Option<Duration>,
    },
}

struct Options {
    storage: Storage,
    addr: String,
    config: RouterConfig,
    push: toggle_admin::admin::PushConfig,
    /// The admin page's configuration; `None` when `--ui-path off`.
    #[cfg(feature = "ui")]
    ui: Option<toggle_admin::ui::UiConfig>,
}

/// A command-line flag, the environment variables that give it too (first set wins), its
/// value's name (`None`: a switch) and what it does.
struct Flag {
    name: &'static str,
    env: &'static [&'static str],
    value: Option<&'static str>,
    help: &'static str,
}

const FLAGS: &[Flag] = &[
    Flag {
        name: "--data",
        env: &["TOGGLE_ADMIN_DATA"],
        value: Some("DIR"),
        help: "a FileStore in DIR",
    },
    Flag {
        name: "--memory",
        env: &["TOGGLE_ADMIN_MEMORY"],
        value: None,
        help: "keep everything in memory (gone at exit)",
    },
    Flag {
        name: "--postgres",
        env: &["DATABASE_URL"],
        value: Some("URL"),
        help: "a PostgresStore (feature `postgres`); libpq URL with sslmode/sslrootcert",
    },
    Flag {
        name: "--postgres-schema",
        env: &["DATABASE_SCHEMA"],
        value: Some("NAME"),
        help: "the PostgresStore's schema (default toggle_admin)",
    },
    Flag {
        name: "--postgres-ssl-mode",
        env: &["DATABASE_SSL_MODE"],
        value: Some("MODE"),
        help: "sslmode: disable, prefer (default), require, verify-ca, verify-full",
    },
    Flag {
        name: "--postgres-ssl-ca-file",
        env: &["DATABASE_SSL_CA_FILE"],
        value: Some("FILE"),
        help: "sslrootcert: PEM root certificates for verify-ca/verify-full",
    },
    Flag {
        name: "--postgres-connect-timeout",
        env: &["DATABASE_CONNECT_TIMEOUT"],
        value: Some("SECS"),
        help: "give up opening a database connection after this (default 5)",
    },
    Flag {
        name: "--postgres-statement-timeout",
        env: &["DATABASE_STATEMENT_TIMEOUT"],
        value: Some("SECS"),
        help: "cancel database statements running longer (default 10)",
    },
    Flag {
        name: "--addr",
        env: &["TOGGLE_ADMIN_ADDR"],
        value: Some("HOST:PORT"),
        help: "where to listen (default 127.0.0.1:4242; port 0 picks one)",
    },
    Flag {
        name: "--host",
        env: &["HTTP_HOST"],
        value: Some("HOST"),
        help: "the host part of --addr",
    },
    Flag {
        name: "--port",
        env: &["HTTP_PORT", "PORT"],
        value: Some("PORT"),
        help: "the port part of --addr",
    },
    Flag {
        name: "--body-limit",
        env: &["TOGGLE_ADMIN_BODY_LIMIT"],
        value: Some("BYTES"),
        help: "largest request body (default 16 MiB)",
    },
    Flag {
        name: "--request-timeout",
        env: &["TOGGLE_ADMIN_REQUEST_TIMEOUT"],
        value: Some("SECS"),
        help: "answer 503 to requests taking longer (default 60)",
    },
    Flag {
        name: "--headers-timeout",
        env: &["SERVER_HEADERS_TIMEOUT"],
        value: Some("SECS"),
        help: "close connections slower to send headers (default 10)",
    },
    Flag {
        name: "--body-timeout",
        env: &["TOGGLE_ADMIN_BODY_TIMEOUT"],
        value: Some("SECS"),
        help: "fail requests slower to send their body (default 30)",
    },
    Flag {
        name: "--shutdown-timeout",
        env: &["SERVER_GRACEFUL_SHUTDOWN_TIMEOUT"],
        value: Some("SECS"),
        help: "at shutdown, time left to requests in flight (default 30)",
    },
    Flag {
        name: "--ui-path",
        env: &["TOGGLE_ADMIN_UI_PATH"],
        value: Some("PATH|off"),
        help: "where the admin page is (feature `ui`; default /admin)",
    },
    Flag {
        name: "--ui-secure-cookie",
        env: &["TOGGLE_ADMIN_UI_SECURE_COOKIE"],
        value: Some("auto|always|never"),
        help: "the page's session cookie is Secure: over TLS (auto, default), always, never",
    },
    Flag {
        name: "--compression-min-size",
        env: &["TOGGLE_ADMIN_COMPRESSION_MIN_SIZE"],
        value: Some("BYTES|off"),
        help: "gzip answers from this size when accepted (default 1024)",
    },
    Flag {
        name: "--max-streams",
        env: &["TOGGLE_ADMIN_MAX_STREAMS"],
        value: Some("N"),
        help: "SDK streams open at once at most; more get 429 (default 20000)",
    },
    Flag {
        name: "--max-streams-per-key",
        env: &["TOGGLE_ADMIN_MAX_STREAMS_PER_KEY"],
        value: Some("N"),
        help: "SDK streams one API key may hold open; more get 429 (default 1000)",
    },
    Flag {
        name: "--delta-history",
        env: &["TOGGLE_ADMIN_DELTA_HISTORY"],
        value: Some("N"),
        help: "delta events kept per scope (default 1000; older clients hydrate)",
    },
    Flag {
        name: "--frontend-origins",
        env: &["UNLEASH_FRONTEND_API_ORIGINS"],
        value: Some("ORIGINS"),
        help: "origins (comma-separated) browsers may call /api/frontend from (default *)",
    },
];

fn usage() -> String {
    let mut text = String::from(
        "usage: server (--data DIR | --memory | --postgres URL) [options]\n\n\
         Every flag can also be set by the environment variable named; a flag wins.\n\
         TOGGLE_ADMIN_BOOTSTRAP_KEY (env only): the first admin key, at least 32 characters.\n\
         RUST_LOG: log filter (default info).\n\n",
    );
    for flag in FLAGS {
        let left = match flag.value {
            Some(value) => format!("{} {value}", flag.name),
            None => flag.name.to_owned(),
        };
        text.push_str(&format!(
            "  {left:<34} {} [{}]\n",
            flag.help,
            flag.env.join(", ")
        ));
    }
    text.push_str("  --help                             this text\n");
    text
}

/// What `parse_args` decided: run, or print the help.
enum Parsed {
    Run(Box<Options>),
    Help,
}

fn parse_args() -> Result<Parsed, String> {
    // Command line first; then the environment fills what it did not set.
    let mut given: HashMap<&'static str, String> = HashMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(Parsed::Help);
        }
        let flag = FLAGS
            .iter()
            .find(|f| f.name == arg)
            .ok_or_else(|| format!("unknown argument {arg}\n{}", usage()))?;
        let value = match flag.value {
            Some(_) => args
                .next()
                .ok_or_else(|| format!("{} needs a value", flag.name))?,
            None => "true".to_owned(),
        };
        given.insert(flag.name, value);
    }
    let storage_flags = ["--data", "--memory", "--postgres"];
    let storage_on_command_line = storage_flags.iter().any(|f| given.contains_key(f));
    for flag in FLAGS {
        if given.contains_key(flag.name)
            || (storage_on_command_line && storage_flags.contains(&flag.name))
        {
            continue;
        }
        if let Some(value) = flag
            .env
            .iter()
            .find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
        {
            given.insert(flag.name, value);
        }
    }
    let chosen: Vec<&str> = storage_flags
        .iter()
        .copied()
        .filter(|f| given.get(f).is_some_and(|v| *f != "--memory" || is_true(v)))
        .collect();
    let storage = match chosen.as_slice() {
        [] => return Err(format!("say where the state lives\n{}", usage())),
        ["--data"] => Storage::Data(given["--data"].clone()),
        ["--memory"] => Storage::Memory,
        ["--postgres"] => postgres_storage(&given)?,
        several => {
            return Err(format!(
                "choose one of {} (given by flags or environment)",
                several.join(", ")
            ));
        }
    };
    let mut addr = given
        .get("--addr")
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:4242".into());
    if given.contains_key("--host") || given.contains_key("--port") {
        let (host, port) = addr
            .rsplit_once(':')
            .ok_or_else(|| format!("--addr {addr}: expected HOST:PORT"))?;
        let host = given.get("--host").map_or(host, String::as_str);
        let port = given.get("--port").map_or(port, String::as_str);
        addr = format!("{host}:{port}");
    }
    let number = |name: &str| -> Result<Option<u64>, String> {
        given
            .get(name)
            .map(|v| v.parse::<u64>().map_err(|e| format!("{name} {v}: {e}")))
            .transpose()
    };
    let seconds = |name: &str, default: Duration| -> Result<Duration, String> {
        Ok(number(name)?.map_or(default, Duration::from_secs))
    };
    let body_limit = match number("--body-limit")? {
        Some(bytes) => usize::try_from(bytes).map_err(|e| format!("--body-limit: {e}"))?,
        None => DEFAULT_BODY_LIMIT,
    };
    let compression = match given.get("--compression-min-size").map(String::as_str) {
        None => Some(DEFAULT_COMPRESSION_MIN_SIZE),
        Some("off") => None,
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|e| format!("--compression-min-size {v}: {e} (bytes, or off)"))?,
        ),
    };
    let config = RouterConfig::new()
        .body_limit(body_limit)
        .request_timeout(seconds("--request-timeout", DEFAULT_REQUEST_TIMEOUT)?)
        .header_read_timeout(seconds("--headers-timeout", DEFAULT_HEADER_READ_TIMEOUT)?)
        .body_read_timeout(seconds("--body-timeout", DEFAULT_BODY_READ_TIMEOUT)?)
        .shutdown_deadline(seconds("--shutdown-timeout", DEFAULT_SHUTDOWN_DEADLINE)?)
        .compression_min_size(compression)
        .frontend_origins(
            given
                .get("--frontend-origins")
                .map_or("*", String::as_str)
                .split(',')
                .map(str::trim)
                .filter(|o| !o.is_empty()),
        );
    let mut push = toggle_admin::admin::PushConfig::default();
    let count = |name: &str, default: usize| -> Result<usize, String> {
        number(name)?.map_or(Ok(default), |n| {
            usize::try_from(n).map_err(|e| format!("{name}: {e}"))
        })
    };
    push.max_streams = count("--max-streams", push.max_streams)?;
    push.max_streams_per_key = count("--max-streams-per-key", push.max_streams_per_key)?;
    push.history_events = count("--delta-history", push.history_events)?;
    #[cfg(feature = "ui")]
    let ui = {
        use toggle_admin::ui::{SecureCookie, UiConfig};
        let secure = match given.get("--ui-secure-cookie").map(String::as_str) {
            None | Some("auto") => SecureCookie::Auto,
            Some("always") => SecureCookie::Always,
            Some("never") => SecureCookie::Never,
            Some(v) => {
                return Err(format!(
                    "--ui-secure-cookie {v}: expected auto, always or never"
                ));
            }
        };
        match given.get("--ui-path").map(String::as_str) {
            Some("off") => None,
            path => Some(
                UiConfig::new()
                    .base_path(path.unwrap_or(toggle_admin::ui::DEFAULT_BASE_PATH))
                    .secure_cookie(secure),
            ),
        }
    };
    Ok(Parsed::Run(Box::new(Options {
        storage,
        addr,
        config,
        push,
        #[cfg(feature = "ui")]
        ui,
    })))
}

fn is_true(value: &str) -> bool {
    matches!(value, "true" | "1" | "yes")
}

#[cfg(feature = "postgres")]
fn postgres_storage(given: &HashMap<&'static str, String>) -> Result<Storage, String> {
    let mut url = given["--postgres"].clone();
    for (flag, key) in [
        ("--postgres-ssl-mode", "sslmode"),
        ("--postgres-ssl-ca-file", "sslrootcert"),
    ] {
        if let Some(value) = given.get(flag) {
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
    }
    let seconds = |flag: &str| -> Result<Option<Duration>, String> {
        given
            .get(flag)
            .map(|v| match v.parse::<u64>() {
                Ok(0) => Err(format!("{flag} {v}: must be at least 1")),
                Ok(secs) => Ok(Duration::from_secs(secs)),
                Err(e) => Err(format!("{flag} {v}: {e}")),
            })
            .transpose()
    };
    Ok(Storage::Postgres {
        url,
        schema: given.get("--postgres-schema").cloned(),
        connect_timeout: seconds("--postgres-connect-timeout")?,
        statement_timeout: seconds("--postgres-statement-timeout")?,
    })
}

#[cfg(not(feature = "postgres"))]
fn postgres_storage(_: &HashMap<&'static str, String>) -> Result<Storage, String> {
    Err("--postgres (DATABASE_URL) needs a build with the feature `postgres`".into())
}

/// Called after the server stopped, to release the store (connections, locks).
type Close = Box<dyn FnOnce() + Send>;

async fn open(storage: &Storage) -> Result<(ToggleAdmin, Close), String> {
    match storage {
        Storage::Memory => Ok((ToggleAdmin::new(MemoryStore::new()), Box::new(|| ()))),
        Storage::Data(dir) => {
            let path = dir.clone();
            let store = tokio::task::spawn_blocking(move || FileStore::open(path))
                .await
                .map_err(|e| format!("--data {dir}: opening the store failed: {e}"))?
                .map_err(|e| format!("--data {dir}: {e}"))?;
            let recovery = store.recovery();
            if let Some(tail) = &recovery.truncated_tail {
                tracing::warn!(
                    offset = tail.offset,
                    bytes = tail.bytes,
                    reason = %tail.reason,
                    "cut off the end of the journal that a crash left half-written"
                );
            }
            tracing::info!(
                dir = %dir,
                snapshot_revision = recovery.snapshot_revision.0,
                records_replayed = recovery.records_replayed,
                "opened the FileStore"
            );
            let store = std::sync::Arc::new(store);
            let handle = std::sync::Arc::clone(&store);
            let report = Box::new(move || {
                let stats = handle.stats();
                tracing::info!(
                    commits = stats.commits,
                    batches = stats.batches,
                    syncs = stats.syncs,
                    compactions = stats.compactions,
                    segments_created = stats.segments_created,
                    inline_batches = stats.inline_batches,
                    longest_batch_us = stats.longest_batch.as_micros() as u64,
                    "closing the FileStore"
                );
            });
            Ok((ToggleAdmin::from_arc(store), report))
        }
        #[cfg(feature = "postgres")]
        Storage::Postgres {
            url,
            schema,
            connect_timeout,
            statement_timeout,
        } => {
            use toggle_admin::store::{PostgresConfig, PostgresStore};
            let mut config = PostgresConfig::new(url.clone());
            if let Some(schema) = schema {
                config = config.with_schema(schema.clone());
            }
            if let Some(timeout) = connect_timeout {
                config = config.with_connect_timeout(*timeout);
            }
            if let Some(timeout) = statement_timeout {
                config = config.with_statement_timeout(*timeout);
            }
            let store = PostgresStore::connect(config)
                .await
                .map_err(|e| format!("--postgres: {e}"))?;
            let store = std::sync::Arc::new(store);
            let handle = std::sync::Arc::clone(&store);
            let admin = ToggleAdmin::from_arc(store);
            Ok((admin, Box::new(move || handle.close())))
        }
    }
}

/// On a store without keys: the first admin key, then Unleash's stock environments and
/// project. Returns the generated secret to print, if one was generated.
async fn bootstrap(admin: &ToggleAdmin) -> Result<Option<String>, String> {
    // The store already has keys: it was set up before.
    if admin
        .is_bootstrapped()
        .await
        .map_err(|e| format!("reading the store: {e}"))?
    {
        return Ok(None);
    }
    let chosen = std::env::var("TOGGLE_ADMIN_BOOTSTRAP_KEY")
        .ok()
        .filter(|s| !s.is_empty());
    let created = match &chosen {
        Some(secret) => admin.bootstrap_admin_key_with_secret("admin", secret).await,
        None => admin.bootstrap_admin_key("admin").await,
    };
    let key = match created {
        Ok(key) => key,
        // Another instance bootstrapped it between the check and now.
        Err(Error::NoAccess { .. }) => return Ok(None),
        Err(error @ Error::Validation { .. }) if chosen.is_some() => {
            return Err(format!("TOGGLE_ADMIN_BOOTSTRAP_KEY: {error}"));
        }
        Err(other) => return Err(format!("setting up the store: {other}")),
    };
    stock_setup(admin, &key.secret)
        .await
        .map_err(|e| format!("setting up the store: {e}"))?;
    Ok(chosen.is_none().then_some(key.secret))
}

/// Unleash's stock environments and project, as the first admin key `secret`.
async fn stock_setup(admin: &ToggleAdmin, secret: &str) -> Result<(), Error> {
    let caller = admin.authenticate(Some(secret)).await?;
    for name in ["development", "production"] {
        let environment = Environment {
            name: name.into(),
            environment_type: name.into(),
            ..Default::default()
        };
        match admin.create_environment(&caller, &environment).await {
            Ok(_) | Err(Error::NameExists { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    let project = NewProject {
        id: "default".into(),
        name: "Default".into(),
        description: Some("Default project".into()),
        environments: vec!["development".into(), "production".into()],
        ..Default::default()
    };
    match admin.create_project(&caller, &project).await {
        Ok(_) | Err(Error::NameExists { .. }) => {}
        Err(other) => return Err(other),
    }
    tracing::info!(
        "new store: created the first admin key, environments development and production, project default"
    );
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

async fn run(options: Options) -> Result<(), String> {
    let prometheus = PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| format!("installing the metrics recorder: {e}"))?;
    let (admin, close) = open(&options.storage).await?;
    admin.set_push_config(options.push);
    let generated = bootstrap(&admin).await?;
    let listener = tokio::net::TcpListener::bind(&options.addr)
        .await
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
    let local: SocketAddr = listener
        .local_addr()
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
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
            let mut every =
                tokio::time::interval(toggle_admin::admin::DEFAULT_METRICS_FLUSH_INTERVAL);
            loop {
                every.tick().await;
                if let Err(e) = admin.flush_client_metrics().await {
                    tracing::warn!("writing client metrics: {e}");
                }
            }
        })
    };
    let config = options.config;
    #[cfg(feature = "ui")]
    let config = match options.ui {
        Some(ui) => {
            let _ = writeln!(
                std::io::stdout().lock(),
                "admin page at http://{local}{}",
                ui.base()
            );
            config.merge(ui.router(admin.clone()))
        }
        None => config,
    };
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

/// With feature `mimalloc`, the process allocates with mimalloc: more throughput at 16
/// connections (+2–41 % over a FileStore, by machine) and a lower p99 (see Cargo.toml and
/// BENCHMARKS.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let options = match parse_args() {
        Ok(Parsed::Run(options)) => *options,
        Ok(Parsed::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
