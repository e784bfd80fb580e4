//! What operators and load balancers need: `GET /health`, `GET /ready`, request metrics
//! and the Prometheus scrape endpoint.
//!
//! Metrics go through the [`metrics`] facade: the server example installs a Prometheus
//! recorder and hands its handle to [`RouterConfig::prometheus`]; an application embedding
//! the router may install any other recorder (and exporter) instead, and gets the same
//! metrics. Without a recorder, recording costs next to nothing.
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `http_requests_total` | counter | `method`, `path` (the route's pattern), `status` |
//! | `http_request_duration_seconds` | histogram | `method`, `path`, `status` |
//! | `toggle_admin_commits_total` | counter | `store` (`file`, `postgres`) |
//! | `toggle_admin_commit_batch_size` | histogram | (FileStore: commits per journal write) |
//! | `toggle_admin_journal_sync_seconds` | histogram | (FileStore: one write and fsync) |
//! | `toggle_admin_compaction_seconds` | histogram | (FileStore: one snapshot) |
//! | `toggle_admin_store_errors_total` | counter | `store` (`file`: a journal write failed; `http`: a request failed by its store; `probe`: a readiness probe failed) |

use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::json;

use super::RouterConfig;
use crate::ToggleAdmin;
use crate::store::{ChangeSet, Collection, Key, Revision, StoreError};

/// Where the Prometheus text exposition is served, as in Unleash.
pub const PROMETHEUS_PATH: &str = "/internal-backstage/prometheus";

/// The operations settings of a [`RouterConfig`].
#[derive(Debug, Clone, Default)]
pub(super) struct Operations {
    prometheus: Option<PrometheusHandle>,
    /// Whether `/health` and `/ready` are served: always by [`RouterConfig::serve`], by
    /// [`RouterConfig::router`] only when asked ([`RouterConfig::health_routes`]), because a
    /// host app merging the router often has a `/health` of its own.
    pub(super) health: bool,
    /// Whether every other path gets the JSON 404 (set by [`RouterConfig::serve`]: served on
    /// its own, the router owns every path).
    pub(super) standalone: bool,
}

/// Health and metrics.
impl RouterConfig {
    /// Serve the metrics recorded by `handle`'s recorder at
    /// `GET /internal-backstage/prometheus` (no key needed, as in Unleash). Without it the
    /// path is not served; the metrics still go to whatever recorder is installed.
    pub fn prometheus(mut self, handle: PrometheusHandle) -> Self {
        self.operations.prometheus = Some(handle);
        self
    }

    /// Serve `GET /health` and `GET /ready` (no key needed) from
    /// [`router`](RouterConfig::router) too. Off by default there, so that the router merges
    /// into a host app that answers `/health` itself; [`serve`](RouterConfig::serve) always
    /// serves them.
    pub fn health_routes(mut self, serve: bool) -> Self {
        self.operations.health = serve;
        self
    }
}

/// `/health` and `/ready` when asked for, and the Prometheus endpoint when configured (none
/// needs a key).
pub(super) fn routes(operations: &Operations) -> Router<ToggleAdmin> {
    let router = if operations.health {
        Router::new()
            .route("/health", get(health))
            .route("/ready", get(ready))
    } else {
        Router::new()
    };
    match &operations.prometheus {
        Some(handle) => {
            let handle = handle.clone();
            router.route(
                PROMETHEUS_PATH,
                get(move || {
                    let text = handle.render();
                    async move { ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text) }
                }),
            )
        }
        None => router,
    }
}

/// Count and time every request by route pattern and status.
pub(super) fn measure(router: Router) -> Router {
    router.layer(middleware::from_fn(record))
}

async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    // Only the standard methods by name: a client inventing methods must not grow the
    // metrics without bound (the path is the route's pattern, or `unmatched`, for the same
    // reason).
    let method = match *request.method() {
        Method::GET
        | Method::POST
        | Method::PUT
        | Method::PATCH
        | Method::DELETE
        | Method::HEAD
        | Method::OPTIONS => request.method().as_str().to_owned(),
        _ => "other".to_owned(),
    };
    let path = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |p| p.as_str().to_owned());
    let response = next.run(request).await;
    let labels = [
        ("method", method),
        ("path", path),
        ("status", response.status().as_u16().to_string()),
    ];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    response
}

/// Unleash's health answer: the process is up and serving.
async fn health() -> Response {
    axum::Json(json!({"health": "GOOD"})).into_response()
}

/// Ready when the store can decide a commit. The probe commits a change set whose one
/// precondition cannot hold (a record at a revision no commit reaches), so every store
/// answers [`StoreError::Conflict`] without writing anything: the revision does not move,
/// no journal record is written, no cached read is invalidated. The probe still takes the
/// commit path: a FileStore that stopped after a failed journal write refuses it with that
/// failure, a PostgresStore runs the commit's transaction (locks and the precondition check,
/// then a rollback) and fails when PostgreSQL is unreachable; these answer 503
/// `{"health": "BAD"}` (the cause goes to the log, not to the unauthenticated caller).
///
/// Before the probe it asks the store for a condition it already knows of
/// ([`Store::readiness`](crate::store::Store::readiness)): a FileStore whose last batch was
/// refused for want of space answers 503 until a batch is written again. What neither can
/// see is a disk that would refuse the next write before any write has tried. Committing
/// on every probe would have seen it sooner, at the cost of a journal record and a new
/// revision per probe (a probe every few seconds is thousands of records a day).
async fn ready(State(admin): State<ToggleAdmin>) -> Response {
    let mut probe = ChangeSet::new();
    probe.expect_revision(
        Key::new(Collection::Sequences, "readiness-probe"),
        Revision(u64::MAX),
    );
    // A condition the store already knows of (a full disk) first: the probe itself changes
    // nothing, so it never needs room.
    let answer = match admin.store().readiness().await {
        Ok(()) => admin.store().commit(probe).await,
        Err(error) => Err(error),
    };
    match answer {
        // A conflict is the answer expected; a store that committed the empty change set
        // (whose preconditions it did not check) could commit too.
        Err(StoreError::Conflict(_)) | Ok(_) => {
            axum::Json(json!({"health": "GOOD"})).into_response()
        }
        Err(error) => {
            tracing::warn!(%error, "readiness probe: the store cannot commit");
            metrics::counter!("toggle_admin_store_errors_total", "store" => "probe").increment(1);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({"health": "BAD"})),
            )
                .into_response()
        }
    }
}
