//! Time limits and compression: tower and tower-http layers on the router, hyper settings on
//! the connections [`RouterConfig::serve`] accepts.

use std::future::Future;
use std::io;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower::{BoxError, ServiceBuilder};
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};
use tower_http::timeout::RequestBodyDeadlineLayer;

use super::RouterConfig;
use crate::{ErrorBody, ToggleAdmin};

/// The default whole-request timeout: 60 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The default time a client has to send a request's headers: 10 s.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a client has to send a request's whole body: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default time requests in flight get to finish at shutdown: 30 s.
pub const DEFAULT_SHUTDOWN_DEADLINE: Duration = Duration::from_secs(30);
/// The default size from which answers are gzipped (when the client accepts gzip): 1 KiB.
pub const DEFAULT_COMPRESSION_MIN_SIZE: u64 = 1024;

/// The limits of a [`RouterConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    request_timeout: Duration,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    shutdown_deadline: Duration,
    compression_min_size: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            shutdown_deadline: DEFAULT_SHUTDOWN_DEADLINE,
            compression_min_size: Some(DEFAULT_COMPRESSION_MIN_SIZE),
        }
    }
}

/// Time limits, compression and serving.
impl RouterConfig {
    /// Answer 503 `ServiceUnavailable` to a request not answered within `timeout` (default
    /// [`DEFAULT_REQUEST_TIMEOUT`]). A write cut off this way may still have been committed:
    /// re-read before retrying.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.limits.request_timeout = timeout;
        self
    }

    /// Close a connection whose client takes longer than `timeout` to send a request's
    /// headers (default [`DEFAULT_HEADER_READ_TIMEOUT`]): slow clients cannot hold
    /// connections open. Applies to [`serve`](Self::serve), which owns the connections.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_read_timeout = timeout;
        self
    }

    /// Fail reading a request body not received in full within `timeout` (default
    /// [`DEFAULT_BODY_READ_TIMEOUT`]).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.body_read_timeout = timeout;
        self
    }

    /// At shutdown, how long [`serve`](Self::serve) lets requests in flight finish before
    /// closing their connections (default [`DEFAULT_SHUTDOWN_DEADLINE`]).
    pub fn shutdown_deadline(mut self, deadline: Duration) -> Self {
        self.limits.shutdown_deadline = deadline;
        self
    }

    /// Gzip answers of at least `bytes` bytes for clients that send `Accept-Encoding: gzip`
    /// (default [`DEFAULT_COMPRESSION_MIN_SIZE`]); `None` turns compression off.
    pub fn compression_min_size(mut self, bytes: Option<u64>) -> Self {
        self.limits.compression_min_size = bytes;
        self
    }

    /// Serve the admin API over `admin` on `listener` (HTTP/1.1) until `shutdown` completes,
    /// then stop accepting, give the requests in flight up to the
    /// [shutdown deadline](Self::shutdown_deadline) and close what is left. Connections get
    /// the [header-read timeout](Self::header_read_timeout).
    ///
    /// Fails only if the listener cannot accept at all; a failed connection is logged.
    pub async fn serve(
        self,
        admin: ToggleAdmin,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> io::Result<()> {
        let limits = self.limits;
        // Served on its own, the admin API answers health probes, and every other path with
        // the same JSON 404 (embedded with `router`, those paths are the host app's).
        let mut config = self.health_routes(true);
        config.operations.standalone = true;
        let admin_streams = admin.clone();
        let app = config.router(admin);
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout);
        let graceful = GracefulShutdown::new();
        let mut connections = JoinSet::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            while connections.try_join_next().is_some() {}
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) if is_per_connection(&error) => {
                        tracing::debug!(%error, "accepting a connection failed");
                        continue;
                    }
                    Err(error) => {
                        // Out of file descriptors and the like: wait rather than spin.
                        tracing::error!(%error, "cannot accept connections");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            // The peer's address, for the frontend API's default `remoteAddress`.
            let service = TowerToHyperService::new(tower_http::add_extension::AddExtension::new(
                app.clone(),
                axum::extract::ConnectInfo(peer),
            ));
            let connection =
                graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
            connections.spawn(async move {
                if let Err(error) = connection.await {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
            });
        }
        drop(listener);
        // Open streams would hold the shutdown up to its deadline: end them now.
        admin_streams.end_streams();
        let open = connections.len();
        if tokio::time::timeout(limits.shutdown_deadline, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                open,
                deadline = ?limits.shutdown_deadline,
                "shutdown deadline passed: closing the connections still open"
            );
        }
        connections.shutdown().await;
        Ok(())
    }
}

/// An accept error that concerns one connection only (the peer gave up before we took it).
fn is_per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

/// The router with its time limits and compression.
pub(super) fn apply(router: Router, limits: &Limits) -> Router {
    let limits = *limits;
    let router = router
        .layer(RequestBodyDeadlineLayer::new(limits.body_read_timeout))
        .layer(
            ServiceBuilder::new()
                .layer(HandleErrorLayer::new(move |error: BoxError| async move {
                    timed_out(&error, limits.request_timeout)
                }))
                .layer(tower::timeout::TimeoutLayer::new(limits.request_timeout)),
        );
    match limits.compression_min_size {
        Some(bytes) => router.layer(
            CompressionLayer::new()
                .gzip(true)
                // Server-sent events are never compressed: gzip would hold them back.
                .compress_when(SizeAbove::new(bytes).and(NotForContentType::SSE)),
        ),
        None => router,
    }
}

/// The answer to a request cut off by the whole-request timeout: 503 with the usual error
/// body (`ServiceUnavailable`).
fn timed_out(error: &BoxError, limit: Duration) -> Response {
    let message = if error.is::<tower::timeout::error::Elapsed>() {
        format!(
            "The request was not answered within {} s and was cut off; a write may still have \
             been committed: re-read before retrying.",
            limit.as_secs_f64()
        )
    } else {
        format!("The request failed: {error}")
    };
    tracing::warn!(%message, "request cut off");
    let body = ErrorBody {
        id: uuid::Uuid::new_v4(),
        name: "ServiceUnavailable".to_owned(),
        message,
        details: Vec::new(),
    };
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}
