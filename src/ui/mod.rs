//! The admin page (feature `ui`): server-rendered HTML for the people who run the service,
//! over the same [`ToggleAdmin`] as the admin API, mounted with one line:
//!
//! ```no_run
//! # async fn run(admin: toggle_admin::ToggleAdmin) {
//! let app = axum::Router::new()
//!     .merge(toggle_admin::ui::router(admin.clone()));   // the page, at /admin
//! # let _ = app;
//! # }
//! ```
//!
//! (next to `toggle_admin::http::router(admin)` with feature `http`; the page calls the facade
//! directly, never the HTTP API).
//!
//! * **Sign-in** with an API key or a user key. The key is checked once
//!   ([`ToggleAdmin::authenticate`]) and only the resulting [`Caller`] is kept, in a
//!   server-side session table (bounded, expiring); the browser holds a random session id in
//!   an `HttpOnly; SameSite=Strict` cookie (`Secure` over TLS, see [`SecureCookie`]). The key
//!   is never in a URL, a page or script-readable storage. Every permission is the facade's:
//!   a revoked key stops working at its next click, and a refusal is shown with the 403's
//!   reason.
//! * **Forgery**: every form that changes something carries the session's CSRF token, checked
//!   on POST (and a POST whose `Origin` is another site is refused).
//! * **Escaping and CSP**: every value is escaped by the templates (`maud`); every response
//!   carries a strict `Content-Security-Policy` (no inline script or style, nothing from
//!   another origin), `X-Content-Type-Options: nosniff` and `Referrer-Policy: same-origin`
//!   (no URL of the page goes to another site; with `no-referrer`, browsers send `Origin:
//!   null` on the page's own forms); pages are `Cache-Control: no-store`.
//! * **Static files** (one stylesheet, one script) are compiled into the binary and served
//!   with an ETag and a year-long `immutable` cache; their URLs carry the ETag.
//! * Plain forms that work without JavaScript; the script only adds live weight shares and
//!   an "add a row" button on the variants page.

mod access;
mod applications;
mod assets;
mod constraints;
mod context;
mod csrf;
mod events;
mod feature;
mod feature_archive;
mod feature_edits;
mod feature_environments;
mod feature_search;
mod features;
mod fields;
mod import;
mod keys;
mod layout;
mod plan;
mod playground;
mod problems;
mod projects;
mod rollout;
mod segments;
mod session;
mod sign_in;
mod strategy_form;
mod strategy_moves;
mod strategy_variants;
mod variants;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};

use crate::ToggleAdmin;
#[cfg(doc)]
use crate::auth::Caller;

pub use session::SecureCookie;

/// Where [`router`] mounts the page.
pub const DEFAULT_BASE_PATH: &str = "/admin";
/// How long a session lasts without being used, by default: one hour.
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(60 * 60);
/// How many sessions are kept at most, by default; signing in past it ends the session
/// closest to expiry.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// The `Content-Security-Policy` of every response.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// How [`UiConfig::router`] builds the page's router; `UiConfig::default()` is what
/// [`router`] uses.
#[derive(Debug, Clone)]
pub struct UiConfig {
    base: String,
    secure_cookie: SecureCookie,
    session_idle: Duration,
    max_sessions: usize,
}

impl Default for UiConfig {
    fn default() -> Self {
        Self {
            base: DEFAULT_BASE_PATH.to_owned(),
            secure_cookie: SecureCookie::Auto,
            session_idle: DEFAULT_SESSION_IDLE,
            max_sessions: DEFAULT_MAX_SESSIONS,
        }
    }
}

impl UiConfig {
    /// The defaults: at [`DEFAULT_BASE_PATH`], `Secure` cookies over TLS.
    pub fn new() -> Self {
        Self::default()
    }

    /// Mount the page at `path` (e.g. `/ops/flags`): a leading `/` is added and a trailing
    /// one removed; `/` alone (or empty) means [`DEFAULT_BASE_PATH`]: the page needs a path of
    /// its own.
    pub fn base_path(mut self, path: &str) -> Self {
        let trimmed = path.trim_matches('/');
        self.base = if trimmed.is_empty() {
            DEFAULT_BASE_PATH.to_owned()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// The path the page is mounted at.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// When the session cookie gets the `Secure` attribute (see [`SecureCookie`]).
    pub fn secure_cookie(mut self, secure: SecureCookie) -> Self {
        self.secure_cookie = secure;
        self
    }

    /// End a session after it was not used for `idle` (every page it loads restarts the
    /// clock).
    pub fn session_idle(mut self, idle: Duration) -> Self {
        self.session_idle = idle;
        self
    }

    /// Keep at most `count` sessions (at least one).
    pub fn max_sessions(mut self, count: usize) -> Self {
        self.max_sessions = count.max(1);
        self
    }

    /// The page over `admin`: a router with only paths under the base path and no fallback,
    /// so it merges into any axum app.
    pub fn router(self, admin: ToggleAdmin) -> Router {
        let base = self.base.clone();
        let ui = Ui {
            admin,
            sessions: Arc::new(session::Sessions::new(self.session_idle, self.max_sessions)),
            config: Arc::new(self),
        };
        let pages = Router::new()
            .route("/", get(projects::home))
            .route(
                "/sign-in",
                get(sign_in::sign_in_page).post(sign_in::sign_in),
            )
            .route("/sign-out", post(sign_in::sign_out))
            .route("/static/{file}", get(assets::serve))
            .route("/projects/{project}", get(features::features))
            .route(
                "/projects/{project}/new-feature",
                get(feature_edits::new_page).post(feature_edits::create),
            )
            .route(
                "/projects/{project}/features/{feature}",
                get(feature::page),
            )
            .route(
                "/projects/{project}/features/{feature}/settings",
                get(feature_edits::settings_page).post(feature_edits::save_settings),
            )
            .route(
                "/projects/{project}/features/{feature}/stale",
                post(feature_edits::set_stale),
            )
            .route(
                "/projects/{project}/features/{feature}/archive",
                get(feature_archive::confirm).post(feature_archive::archive),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/strategies/new",
                get(feature_environments::new_page).post(feature_environments::add),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/strategies/{id}",
                get(feature_environments::edit_page).post(feature_environments::save),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/strategies/{id}/remove",
                get(strategy_moves::confirm_remove).post(strategy_moves::remove),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/strategies/{id}/move",
                post(strategy_moves::move_strategy),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/copy",
                post(strategy_moves::copy),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/enabled",
                post(features::set_enabled),
            )
            .route(
                "/projects/{project}/features/{feature}/environments/{environment}/variants",
                get(variants::page).post(variants::save),
            )
            .route(
                "/projects/{project}/access",
                get(access::page).post(access::save),
            )
            .route("/search", get(feature_search::page))
            .route("/archive", get(feature_archive::page))
            .route("/archive/{feature}/revive", post(feature_archive::revive))
            .route(
                "/archive/{feature}/delete",
                get(feature_archive::confirm_delete).post(feature_archive::delete),
            )
            .route("/segments", get(segments::list))
            .route(
                "/segments/new",
                get(segments::new_page).post(segments::create),
            )
            .route(
                "/segments/{id}",
                get(segments::edit_page).post(segments::update),
            )
            .route("/context", get(context::list))
            .route("/context/new", get(context::new_page).post(context::create))
            .route(
                "/context/{name}",
                get(context::edit_page).post(context::update),
            )
            .route("/playground", get(playground::page))
            .route("/import", get(import::page).post(import::submit))
            .route("/export", get(import::export_page))
            .route("/export/download", get(import::download))
            .route("/applications", get(applications::page))
            .route(
                "/applications/{name}/delete",
                get(applications::confirm).post(applications::delete),
            )
            .route("/keys", get(keys::page).post(keys::create))
            .route("/keys/{id}/revoke", post(keys::revoke))
            .route("/events", get(events::page))
            .layer(middleware::from_fn(security_headers))
            .with_state(ui);
        Router::new().nest(&base, pages)
    }
}

/// The admin page over `admin` at [`DEFAULT_BASE_PATH`] (see [`UiConfig`]).
pub fn router(admin: ToggleAdmin) -> Router {
    UiConfig::default().router(admin)
}

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct Ui {
    admin: ToggleAdmin,
    sessions: Arc<session::Sessions>,
    config: Arc<UiConfig>,
}

impl Ui {
    /// The URL of `path` (which starts with `/`) under the base path.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.config.base)
    }
}

/// The headers every response of the page carries: the CSP and its companions; pages (not
/// the static files, which set their own) are never stored by caches.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
