//! The admin API over HTTP (feature `http`): [`router`] turns a [`ToggleAdmin`] into an axum
//! [`Router`] that speaks the HTTP contract of the specification at Unleash's paths.
//!
//! The router owns the paths under `/api/` and sets no fallback of its own, so it merges
//! into any axum app next to the app's own routes and fallback:
//!
//! ```no_run
//! use axum::Router;
//! use axum::http::StatusCode;
//! use axum::routing::get;
//! use toggle_admin::{FileStore, ToggleAdmin};
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let admin = ToggleAdmin::new(FileStore::open("toggle-admin-data")?);
//!     // On the first start only: an admin key (its secret is shown once; keep it).
//!     if !admin.is_bootstrapped().await? {
//!         let key = admin.bootstrap_admin_key("ops").await?;
//!         println!("admin API key: {}", key.secret);
//!     }
//!     let app = Router::new()
//!         .route("/health", get(|| async { "ok" }))              // your routes
//!         .fallback(|| async { (StatusCode::NOT_FOUND, "nothing here") }) // your fallback
//!         .merge(toggle_admin::http::router(admin));              // /api/… is the admin API
//!     let listener = tokio::net::TcpListener::bind("127.0.0.1:4242").await?;
//!     axum::serve(listener, app)
//!         .with_graceful_shutdown(async {
//!             let _ = tokio::signal::ctrl_c().await;
//!         })
//!         .await?;
//!     Ok(())
//! }
//! ```
//!
//! (The same program as the README's "Add it to your service", compiled as a doctest.)
//!
//! # Every request
//!
//! Checked in this order (authentication → permission → body shape → existence →
//! validation); the first failure answers, and a failing request changes nothing:
//!
//! 1. The `Authorization` header carries the API key, as is (`Authorization: <key>`; a
//!    `Bearer ` prefix is also accepted). Missing, unknown or revoked → 401
//!    `AuthenticationRequired`. A client key on an admin route → 403 `NoAccessError`
//!    (`invalid token: expected a different token type for this endpoint`); so does a
//!    frontend key anywhere but the frontend API, and any other key on the frontend API.
//! 2. The permission, where the path alone decides it (the variants PATCH and PUT, the
//!    application registration, project access: a caller without it gets 403
//!    `NoAccessError` whatever the body). Where it depends on the body (import), it is
//!    checked with the operation, after the body's shape.
//! 3. A route that takes a body accepts only `Content-Type: application/json` (parameters such
//!    as `; charset=utf-8` are fine; the variants PATCH also takes
//!    `application/json-patch+json`) → otherwise 415 `ContentTypeError`.
//! 4. A body over the configured limit ([`RouterConfig::body_limit`], 16 MiB by default) →
//!    413 `PayloadTooLarge`.
//! 5. Malformed JSON, or JSON of the wrong shape (an object where an array belongs, a string
//!    where a number belongs, an unknown field where none is allowed) → 400 `ValidationError`
//!    whose `details` name the line and column, or the JSON pointer of the offending value.
//! 6. The operation itself: existence (404), validation (400), name clashes (409), as
//!    documented on [`ToggleAdmin`].
//!
//! An unknown path under `/api/` answers 404 `NotFoundError` (paths elsewhere are the host
//! app's; a standalone server may use [`not_found`] as its fallback), a known path with
//! another method 405 `MethodNotAllowedError`. Every error body is `{id, name, message, details?}` with a fresh
//! UUID `id` ([`ErrorBody`](crate::ErrorBody)); a 500 says only that the store failed, and its
//! cause goes to the log (`tracing::error!`). No client input causes a 500.
//!
//! # Routes
//!
//! | method | path | body | success |
//! |---|---|---|---|
//! | PATCH | `/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants` | JSON Patch (array) | 200 `{version, variants}` |
//! | GET, PUT | `…/environments/{environment}/variants` | PUT: variant array | 200 `{version, variants}` |
//! | POST | `/api/admin/projects` | project | 201 project |
//! | GET | `/api/admin/projects/{projectId}` | | 200 project |
//! | GET | `/api/admin/projects` | `?archived=` | 200 `{version, projects}`, every project with its counts |
//! | GET | `/api/admin/projects/{projectId}/health-report` | | 200 `{…project, features, health, staleCount, potentiallyStaleCount, activeCount}` |
//! | GET | `/api/admin/projects/{projectId}/status` | | 200 `{activityCountByDate, resources, health, lifecycleSummary, staleFlags}` |
//! | GET | `/api/admin/ui-config` | | 200 the server's configuration (`version` 6.10.1, `unleashUrl`, `maintenanceMode`, …) |
//! | DELETE | `/api/admin/projects/{projectId}/environments/{environment}` | | 200, no body |
//! | POST | `…/environments/{environment}/default-strategy` | a `flexibleRollout` strategy | 200 strategy |
//! | GET | `/api/admin/environments/{name}`, `/api/admin/environments/project/{projectId}` | | 200 environment / `{version, environments}` |
//! | POST | `/api/admin/environments/{name}/on`, `…/off` | | 204 |
//! | PUT | `/api/admin/environments/sort-order` | `{name: sortOrder}` | 200, no body |
//! | POST | `/api/admin/projects/{projectId}/environments` | `{environment}` | 200, no body |
//! | GET, POST | `/api/admin/environments` | POST: `{name, type}` | 200 `{version, environments}` / 201 environment |
//! | POST | `/api/admin/projects/{projectId}/features` | `{name, type?, description?, impressionData?}` | 201 feature |
//! | GET | `/api/admin/projects/{projectId}/features/{featureName}` | | 200 feature |
//! | DELETE | `/api/admin/projects/{projectId}/features/{featureName}` | | 202, no body (archived) |
//! | GET | `/api/admin/archive/features/{projectId}` | | 200 `{version, features}`, the archived features |
//! | GET, POST | `/api/admin/api-tokens` | POST: `{tokenName, type: "admin"}`, or `{tokenName, type: "client" \| "backend", projects?, environment}` | 200 `{tokens}` / 201 token with `secret` |
//! | DELETE | `/api/admin/api-tokens/{token}` | | 200, no body (by id or by secret) |
//! | GET, PUT | `/api/admin/api-tokens/{token}` | PUT: `{expiresAt}` | 200 `{tokens}` with that name / 200, no body |
//! | GET, POST | `/api/admin/projects/{projectId}/api-tokens` | POST: `{tokenName, type: "client" \| "frontend", environment?, expiresAt?}` | 200 `{tokens}` / 201 token with `secret` |
//! | DELETE | `/api/admin/projects/{projectId}/api-tokens/{token}` | | 200, no body |
//! | GET | `/api/admin/user`, `/api/admin/user/profile` | | 200 the caller / its root role and projects |
//! | GET | `/api/admin/user/roles` | `?projectId=` | 200 `{version, roles}`: the caller's root role, then its project roles |
//! | GET, POST | `/api/admin/user/tokens` | POST: `{description, expiresAt}` | 200 `{pats}` / 201 with `secret` |
//! | DELETE | `/api/admin/user/tokens/{id}` | | 200, no body |
//! | POST | `/api/admin/user-admin/{id}/tokens` | `{description}` | 201 token with `secret` |
//! | DELETE | `/api/admin/user-admin/{id}/tokens/{tokenId}` | | 200, no body |
//! | GET | `/api/admin/events` | `?project=&feature=&limit=` | 200 `{version, events, totalEvents}`, newest first |
//! | GET | `/api/admin/events/{featureName}` | | 200 `{version, toggleName, events, totalEvents}` |
//! | POST | `/api/admin/events/search` | `{type?, project?, feature?, query?, limit?, offset?}` | 200 `{version, events, totalEvents}` |
//! | GET | `/api/admin/search/events` | `?query=&feature=&project=&type=&createdBy=&from=&to=&offset=&limit=` | 200 `{events, total}` |
//! | GET | `/api/admin/event-creators` | | 200 `[{id, name}]` |
//! | POST | `/api/admin/features-batch/import` | `{project, environment, data}`; `?mode=replace` or `create-missing` | 200, no body |
//! | POST | `/api/admin/features-batch/validate` | the same | 200 `{errors, warnings, permissions}` of `{message, affectedItems}` (nothing written) |
//! | POST | `/api/admin/features-batch/plan` | the same; `?mode=replace` or `create-missing` | 200 `{project, environment, mode, features: [{name, action, reason?, changes: [{path, from?, to?}]}], contextFields, tagTypes, warnings}` (nothing written) |
//! | POST | `/api/admin/features-batch/export` | `{environment, features?, tag?, project?, downloadFile?}` | 200 the `data` an import takes |
//! | GET, POST | `…/features/{featureName}/environments/{environment}/strategies` | POST: strategy | 200 list / 200 strategy |
//! | GET, PUT, PATCH, DELETE | `…/environments/{environment}/strategies/{strategyId}` | PUT: the fields to change; PATCH: JSON Patch | 200 strategy / 200 strategy / 200 strategy / 200, no body |
//! | POST | `…/environments/{environment}/strategies/set-sort-order` | `[{id, sortOrder}]` | 200, no body |
//! | POST | `…/environments/{environment}/on`, `…/off` | | 200, no body |
//! | GET, POST | `/api/admin/projects/{projectId}/features/{featureName}/dependencies` | POST: `{feature, enabled?, variants?}` | 200 list / 200, no body |
//! | DELETE | `…/dependencies/{parent}` | | 200, no body |
//! | GET, POST | `/api/admin/features/{featureName}/tags` | POST: `{value, type}` | 200 `{version, tags}` / 201 tag |
//! | DELETE | `/api/admin/features/{featureName}/tags/{type}/{value}` | | 200, no body |
//! | GET, POST | `/api/admin/tag-types` | POST: `{name, description?, icon?}` | 200 `{version, tagTypes}` / 201 tag type |
//! | GET | `/api/admin/tag-types/{name}` | | 200 `{version, tagType}` |
//! | GET, POST | `/api/admin/context` | POST: context field | 200 list / 201 context field |
//! | GET | `/api/admin/context/{name}` | | 200 context field |
//! | GET, POST | `/api/admin/segments` | POST: `{name, description?, project?, constraints}` | 200 `{segments}` / 201 segment |
//! | GET | `/api/admin/segments/{id}` | | 200 segment |
//! | GET, POST | `/api/admin/strategies` | POST: strategy definition | 200 `{version, strategies}` / 201 definition |
//! | GET | `/api/admin/strategies/{name}` | | 200 definition |
//! | DELETE | `/api/admin/metrics/applications/{appName}` | | 200, no body (also when there was none) |
//! | POST | `/api/admin/metrics/applications/{appName}` | `{description?, url?, color?, icon?, instances?}` | 202, no body |
//! | GET | `/api/admin/metrics/applications/{appName}` | | 200 application |
//! | GET | `/api/admin/metrics/applications` | `?query=` | 200 `{total, applications}` |
//! | PUT | `/api/admin/projects/{projectId}/access` | `{roles: [{id, users?, groups?}]}` | 200, no body |
//! | GET | `/api/admin/projects/{projectId}/access` | | 200 `{roles: [{id, users, groups}]}` |
//! | GET, POST | `/api/admin/user-admin` | POST: `{username?, email?, name?, rootRole?}` | 200 `{users}` / 201 user |
//! | GET, PUT, DELETE | `/api/admin/user-admin/{id}` | PUT: `{name?, email?, rootRole?}` | 200 user / 200 user / 200, no body |
//! | GET | `/api/admin/user-admin/search` | `?q=` | 200 `[user]` |
//! | GET | `/api/admin/user-admin/{id}/permissions` | `?project=&environment=` | 200 the user's access overview |
//! | GET, POST | `/api/admin/groups` | POST: `{name, description?, users: [{user: {id}}]}` | 200 `{groups}` / 201 group |
//! | GET | `/api/admin/groups/{id}` | | 200 group |
//! | GET, POST | `/api/admin/roles` | POST: `{name, description?, permissions: [{name, environment?}]}` | 200 `{roles}` / 201 role |
//! | GET | `/api/admin/roles/{id}` | | 200 role |
//! | GET | `/api/admin/client-metrics/features/{name}` | | 200 `{version, maturity, featureName, lastHourUsage, seenApplications}` |
//! | GET | `/api/admin/client-metrics/features/{name}/raw` | | 200 `{version, maturity, data}` |
//! | GET | `/api/admin/metrics/applications/{appName}/overview` | | 200 `{projects, featureCount, environments, issues}` |
//! | GET | `/api/admin/metrics/instances/{appName}/environment/{environment}` | | 200 `{instances}` |
//! | GET | `/api/admin/projects/{projectId}/applications` | `?query=&offset=&limit=&sortOrder=` | 200 `{total, applications}` |
//! | GET | `/api/client/features/{featureName}` (any key; client keys only here) | | 200 the feature; 404 outside the key's scope |
//! | GET | `/api/client/features` (any key; client keys only here) | `?project=&namePrefix=&tag=type:value` | 200 `{version: 2, features, segments?, query}` with `ETag`; 304 on `If-None-Match` |
//! | GET | `/api/client/delta` (any key) | `?project=&namePrefix=&tag=`; `If-None-Match: "<eventId>"` | 200 `{events}` (a `hydration`, or the events since) with `ETag: "<eventId>"`; 304 when none |
//! | GET | `/api/client/streaming` (any key) | the same filters; `Last-Event-ID` | 200 `text/event-stream`: `unleash-connected`, then `unleash-updated`; 429 over the stream limits |
//! | POST | `/api/client/register` | `{appName, instanceId, sdkVersion, strategies, started, interval}` | 202, no body |
//! | POST | `/api/client/metrics` | `{appName, instanceId, bucket: {start, stop, toggles}}` | 202, no body |
//! | POST | `/api/client/metrics/bulk` (client keys; Unleash Edge) | `{applications, metrics}` | 202, no body |
//! | POST | `/edge/validate` (no key needed; Unleash Edge) | `{tokens: [secret]}` | 200 `{tokens: [{token, type, projects}]}`, the valid ones |
//! | GET, POST | `/api/frontend` (frontend keys only; CORS) | GET: context in the query; POST: `{context}` | 200 `{toggles: [{name, enabled, impressionData, variant}]}`, the enabled flags |
//! | GET, POST | `/api/frontend/all` (frontend keys only; CORS) | the same | 200 `{toggles}`, every flag |
//! | POST | `/api/frontend/client/metrics`, `/api/frontend/client/register` (frontend keys only; CORS) | as the client API's | 200, no body |
//! | POST | `/ofrep/v1/evaluate/flags/{key}` (frontend and client keys; CORS) | `{context}` | 200 `{key, value, reason, variant, metadata}`; OFREP's errors (`{key, errorCode, errorDetails}`) |
//! | POST | `/ofrep/v1/evaluate/flags` (frontend and client keys; CORS) | `{context}`; `If-None-Match` | 200 `{flags, eventStreams}` with `ETag`; 304 |
//! | GET | `/ofrep/v1/events?token=` (the bulk answer's credential; CORS) | | 200 `text/event-stream`: `refetchEvaluation` at each change |
//! | GET | `/api/admin/openapi.json` (feature `openapi`; no key needed) | | 200 the OpenAPI 3.1 document ([`openapi()`]) |
//! | GET | `/health` (no key needed) | | 200 `{"health": "GOOD"}` |
//! | GET | `/ready` (no key needed) | | 200 `{"health": "GOOD"}` when the store commits, else 503 `{"health": "BAD"}` |
//! | GET | `/internal-backstage/prometheus` (with [`RouterConfig::prometheus`]; no key needed) | | 200 Prometheus text |

mod access;
mod applications;
mod catalog;
mod client;
mod constraints;
mod context;
mod delta;
mod dependencies;
mod edge;
mod environments;
mod error;
mod events;
mod export;
mod extract;
mod feature_archive;
mod feature_environments;
mod feature_lifecycle;
mod feature_links;
mod feature_search;
mod feature_types;
mod features;
mod frontend;
mod import;
mod keys;
mod limits;
mod maintenance;
mod ofrep;
mod openapi;
mod operations;
mod playground;
mod profile;
mod project_environments;
mod project_health;
mod project_keys;
mod project_status;
mod projects;
mod segments;
mod streaming;
mod strict;
mod tags;
mod trace;
mod ui_config;
mod users;
mod variants;

use std::any::Any;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::response::Response;
use axum::routing::any;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;
use utoipa_axum::router::OpenApiRouter;

use crate::ToggleAdmin;
use crate::error::Error;

pub use error::HttpError;
pub use frontend::MAX_FRONTEND_QUERY;
pub use limits::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_COMPRESSION_MIN_SIZE, DEFAULT_HEADER_READ_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_SHUTDOWN_DEADLINE,
};
pub use ofrep::OFREP_EVENTS_PATH;
pub use operations::PROMETHEUS_PATH;

/// The default limit on request bodies: 16 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// How [`RouterConfig::router`] builds the router. `RouterConfig::default()` is what
/// [`router`] uses.
///
/// Time limits and compression: [`request_timeout`](Self::request_timeout),
/// [`header_read_timeout`](Self::header_read_timeout),
/// [`body_read_timeout`](Self::body_read_timeout),
/// [`shutdown_deadline`](Self::shutdown_deadline),
/// [`compression_min_size`](Self::compression_min_size); serving with them:
/// [`serve`](Self::serve); metrics: [`prometheus`](Self::prometheus).
#[derive(Debug, Clone)]
pub struct RouterConfig {
    body_limit: usize,
    limits: limits::Limits,
    operations: operations::Operations,
    frontend_origins: Vec<String>,
    /// The service's public URL, if configured (see [`RouterConfig::public_url`]).
    public_url: Option<String>,
    /// The host's routes served beside the admin API (see [`RouterConfig::merge`]).
    extra: Option<Router>,
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            body_limit: DEFAULT_BODY_LIMIT,
            limits: limits::Limits::default(),
            operations: operations::Operations::default(),
            frontend_origins: vec!["*".to_owned()],
            public_url: None,
            extra: None,
        }
    }
}

impl RouterConfig {
    /// The defaults: bodies up to [`DEFAULT_BODY_LIMIT`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuse request bodies over `bytes` with 413 `PayloadTooLarge`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The origins browsers may call the frontend API (`/api/frontend*`) from, as CORS
    /// allows them (Unleash's `UNLEASH_FRONTEND_API_ORIGINS`): `*` (the default, as in
    /// Unleash) for any, else exact origins such as `https://app.example.com`. Only the
    /// frontend API answers CORS; the admin and client APIs are not for browsers of other
    /// origins.
    pub fn frontend_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.frontend_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// The service's public URL, as clients reach it (e.g. `https://flags.example.com`, or
    /// `https://example.com/flags` behind a proxy that serves it under a path; Unleash's
    /// `UNLEASH_URL`): `GET /api/admin/ui-config` answers it as `unleashUrl`, and its path as
    /// `baseUriPath`. A trailing `/` is dropped. Without it, `unleashUrl` is the address each
    /// request was sent to (its `X-Forwarded-Proto` and `X-Forwarded-Host`, else its `Host`)
    /// and `baseUriPath` is empty. The router serves its paths at the root either way.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        let url: String = url.into();
        let url = url.trim().trim_end_matches('/');
        self.public_url = (!url.is_empty()).then(|| url.to_owned());
        self
    }

    /// Serve `routes` beside the admin API, under the same limits, timeouts, metrics and
    /// tracing: for [`serve`](Self::serve), which builds its app itself (e.g. the admin page,
    /// `toggle_admin::ui::router`). Their paths must not be under `/api/`.
    pub fn merge(mut self, routes: Router) -> Self {
        self.extra = Some(match self.extra.take() {
            Some(extra) => extra.merge(routes),
            None => routes,
        });
        self
    }

    /// The configured body limit, in bytes.
    pub fn limit(&self) -> usize {
        self.body_limit
    }

    /// The admin API over `admin`, with this configuration.
    ///
    /// The router owns the paths under `/api/`: an unknown path there answers 404
    /// `NotFoundError`, a known path with another method 405 `MethodNotAllowedError` (with an
    /// `Allow` header). It sets no fallback of its own, so it merges into any axum app
    /// (`Router::merge`) that has its own routes and fallback; the app's other paths are the
    /// app's. See the [module](self) docs for an example.
    pub fn router(self, admin: ToggleAdmin) -> Router {
        let (routes, _document) =
            api(&self.frontend_origins, self.public_url.as_deref()).split_for_parts();
        let routes = routes
            .route("/api", any(not_found))
            .route("/api/{*rest}", any(not_found))
            .merge(operations::routes(&self.operations))
            .method_not_allowed_fallback(method_not_allowed);
        // Served on its own (`serve`), every other path gets the same JSON 404, measured
        // like the rest; merged into a host app, those paths are the host's.
        let routes = if self.operations.standalone {
            routes.fallback(not_found)
        } else {
            routes
        };
        #[cfg(feature = "openapi")]
        let routes = routes.layer(axum::Extension(openapi::Document(
            serde_json::to_string(&_document).ok().map(Into::into),
        )));
        let router = routes
            .layer(DefaultBodyLimit::max(self.body_limit))
            .with_state(admin);
        let router = match self.extra {
            Some(extra) => router.merge(extra.layer(DefaultBodyLimit::max(self.body_limit))),
            None => router,
        };
        let router = router.layer(CatchPanicLayer::custom(panic_response));
        let router = limits::apply(router, &self.limits);
        operations::measure(router)
            .layer(TraceLayer::new_for_http().make_span_with(trace::request_span))
    }
}

/// Every route with its documentation: each handler's `utoipa::path` annotation declares its
/// method and path once, for both the router and the OpenAPI document.
fn api(frontend_origins: &[String], public_url: Option<&str>) -> OpenApiRouter<ToggleAdmin> {
    [
        variants::routes(),
        projects::routes(),
        project_health::routes(),
        project_status::routes(),
        environments::routes(),
        project_environments::routes(),
        features::routes(),
        feature_archive::routes(),
        feature_search::routes(),
        keys::routes(),
        project_keys::routes(),
        events::routes(),
        access::routes(),
        users::routes(),
        profile::routes(),
        applications::routes(),
        import::routes(),
        export::routes(),
        catalog::routes(),
        context::routes(),
        segments::routes(),
        feature_environments::routes(),
        dependencies::routes(),
        tags::routes(),
        constraints::routes(),
        feature_types::routes(),
        feature_links::routes(),
        feature_lifecycle::routes(),
        client::routes(),
        delta::routes(),
        streaming::routes(),
        frontend::routes(frontend_origins),
        ofrep::routes(frontend_origins),
        edge::routes(),
        playground::routes(),
        maintenance::routes(),
        ui_config::routes(public_url, frontend_origins),
        #[cfg(feature = "openapi")]
        openapi::routes(),
    ]
    .into_iter()
    .fold(
        OpenApiRouter::with_openapi(openapi::frame()),
        OpenApiRouter::merge,
    )
}

/// The OpenAPI 3.1 document of the admin API (feature `openapi`): every route of
/// [`router`], its request body, every response status with its body, and the
/// `Authorization` API-key security scheme. The router serves it, without a key, at
/// `GET /api/admin/openapi.json`; embedders may merge it into their own document.
#[cfg(feature = "openapi")]
#[cfg_attr(docsrs, doc(cfg(feature = "openapi")))]
pub fn openapi() -> utoipa::openapi::OpenApi {
    api(&["*".to_owned()], None).into_openapi()
}

/// The admin API over `admin` with the default configuration (see the [module](self) docs
/// for the routes and the checks every request goes through).
pub fn router(admin: ToggleAdmin) -> Router {
    RouterConfig::default().router(admin)
}

/// The JSON 404 the router answers for unknown paths under `/api/`: `NotFoundError`, naming
/// the path. A standalone server may use it as its app's fallback
/// (`Router::fallback(toggle_admin::http::not_found)`), as the `server` example does.
pub async fn not_found(uri: Uri) -> HttpError {
    Error::not_found(format!(
        "The path you were looking for ({}) is not available.",
        uri.path()
    ))
    .into()
}

async fn method_not_allowed(method: Method, uri: Uri) -> HttpError {
    HttpError::MethodNotAllowed {
        message: format!("The method {method} is not allowed on {}.", uri.path()),
    }
}

/// A handler that panicked is a bug, not the client's fault: 500, logged like any other.
fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic without a message");
    error::error_response(&Error::internal(
        format!("a request handler panicked: {what}"),
        None,
    ))
}
