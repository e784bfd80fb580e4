//! The server's configuration over HTTP: `GET /api/admin/ui-config` (see
//! [`ToggleAdmin::ui_config`]).

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, request_origin};
use crate::ToggleAdmin;
use crate::model::AdminUiConfig;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What the router was told about where it is served ([`super::RouterConfig`]).
#[derive(Debug, Clone)]
struct Published {
    /// The configured public URL, if any.
    public_url: Option<Arc<str>>,
    /// The frontend API's allowed origins.
    frontend_origins: Arc<[String]>,
}

pub(crate) fn routes(
    public_url: Option<&str>,
    frontend_origins: &[String],
) -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(ui_config))
        .layer(Extension(Published {
            public_url: public_url.map(Arc::from),
            frontend_origins: Arc::from(frontend_origins),
        }))
}

/// The server's configuration, as Unleash's admin UI reads it: `version` is the Unleash
/// version this API is compatible with (6.10.1), `slogan` names this server and its own
/// version; `unleashUrl` is the configured public URL, else the address the request was sent
/// to.
#[utoipa::path(
    get,
    path = "/api/admin/ui-config",
    tag = "admin-ui",
    responses(
        (status = 200, description = "The configuration (Unleash's `uiConfigSchema`).", body = AdminUiConfig),
        super::openapi::Errors
    )
)]
async fn ui_config(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Extension(published): Extension<Published>,
    headers: HeaderMap,
    uri: Uri,
) -> HttpResult<Json<AdminUiConfig>> {
    let url = match &published.public_url {
        Some(url) => url.to_string(),
        None => request_origin(&headers, &uri).unwrap_or_default(),
    };
    Ok(Json::ok(
        admin
            .ui_config(&caller, &url, &published.frontend_origins)
            .await?,
    ))
}
