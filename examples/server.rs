//! The admin API as a runnable server.
//!
//! ```sh
//! cargo run --release --features http --example server -- --data DIR --addr 127.0.0.1:4242
//! cargo run --release --features http --example server -- --memory
//! cargo run --release --features http,postgres --example server -- --postgres postgres://…
//! ```
//!
//! * `--data DIR` (or `TOGGLE_ADMIN_DATA`): a FileStore in `DIR`, created if missing.
//!   `--memory`: everything in memory, gone at exit. `--postgres URL` (feature `postgres`):
//!   a PostgresStore, in the schema `toggle_admin` or the one `--postgres-schema NAME` says.
//! * `--addr HOST:PORT` (or `TOGGLE_ADMIN_ADDR`; default `127.0.0.1:4242`; port 0 picks a free
//!   one). `--body-limit BYTES`: the request body limit (default 16 MiB).
//! * On a store without any API key it creates an admin key and prints it once; when
//!   `TOGGLE_ADMIN_BOOTSTRAP_KEY` is set, that value becomes the first admin key instead. It
//!   then creates the environments `development` and `production` and the project `default`
//!   with both, as Unleash ships.
//! * Prints `listening on http://ADDR` once it accepts connections. Logs go to stderr
//!   (`RUST_LOG`, default `info`).
//! * SIGTERM or Ctrl-C: stops accepting, lets the requests in flight finish, then closes the
//!   store. Every acknowledged write is already durable (the stores commit before answering).

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use toggle_admin::admin::NewProject;
use toggle_admin::http::{DEFAULT_BODY_LIMIT, RouterConfig};
use toggle_admin::model::Environment;
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
    },
}

struct Options {
    storage: Storage,
    addr: String,
    body_limit: usize,
}

const USAGE: &str = "usage: server (--data DIR | --memory | --postgres URL [--postgres-schema NAME]) [--addr HOST:PORT] [--body-limit BYTES]";

fn parse_args() -> Result<Options, String> {
    let mut storage = std::env::var("TOGGLE_ADMIN_DATA").ok().map(Storage::Data);
    let mut addr = std::env::var("TOGGLE_ADMIN_ADDR").unwrap_or_else(|_| "127.0.0.1:4242".into());
    let mut body_limit = DEFAULT_BODY_LIMIT;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--data" => storage = Some(Storage::Data(value("--data")?)),
            "--memory" => storage = Some(Storage::Memory),
            "--postgres" => {
                let url = value("--postgres")?;
                #[cfg(feature = "postgres")]
                {
                    storage = Some(Storage::Postgres { url, schema: None });
                }
                #[cfg(not(feature = "postgres"))]
                {
                    let _ = url;
                    return Err("--postgres needs a build with the feature `postgres`".into());
                }
            }
            "--postgres-schema" => {
                let name = value("--postgres-schema")?;
                #[cfg(feature = "postgres")]
                match &mut storage {
                    Some(Storage::Postgres { schema, .. }) => *schema = Some(name),
                    _ => return Err("--postgres-schema goes after --postgres URL".into()),
                }
                #[cfg(not(feature = "postgres"))]
                {
                    let _ = name;
                    return Err(
                        "--postgres-schema needs a build with the feature `postgres`".into(),
                    );
                }
            }
            "--addr" => addr = value("--addr")?,
            "--body-limit" => {
                body_limit = value("--body-limit")?
                    .parse()
                    .map_err(|e| format!("--body-limit: {e}"))?;
            }
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let storage = storage.ok_or_else(|| format!("say where the state lives\n{USAGE}"))?;
    Ok(Options {
        storage,
        addr,
        body_limit,
    })
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
                    longest_batch_us = stats.longest_batch.as_micros() as u64,
                    "closing the FileStore"
                );
            });
            Ok((ToggleAdmin::from_arc(store), report))
        }
        #[cfg(feature = "postgres")]
        Storage::Postgres { url, schema } => {
            use toggle_admin::store::{PostgresConfig, PostgresStore};
            let mut config = PostgresConfig::new(url.clone());
            if let Some(schema) = schema {
                config = config.with_schema(schema.clone());
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
async fn bootstrap(admin: &ToggleAdmin) -> Result<Option<String>, Error> {
    // The store already has keys: it was set up before.
    if admin.is_bootstrapped().await? {
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
        Err(other) => return Err(other),
    };
    let caller = admin.authenticate(Some(&key.secret)).await?;
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
    Ok(chosen.is_none().then_some(key.secret))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::error!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("shutting down: finishing the requests in flight");
}

async fn run(options: Options) -> Result<(), String> {
    let (admin, close) = open(&options.storage).await?;
    let generated = bootstrap(&admin)
        .await
        .map_err(|e| format!("setting up the store: {e}"))?;
    let listener = tokio::net::TcpListener::bind(&options.addr)
        .await
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
    let local: SocketAddr = listener
        .local_addr()
        .map_err(|e| format!("--addr {}: {e}", options.addr))?;
    let app = RouterConfig::new()
        .body_limit(options.body_limit)
        .router(admin.clone())
        // The router owns `/api/`; a standalone server answers every other path with the
        // same JSON 404.
        .fallback(toggle_admin::http::not_found);
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
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
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
        Ok(options) => options,
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
