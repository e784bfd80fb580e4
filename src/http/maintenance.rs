//! Maintenance mode over HTTP: `GET`/`POST /api/admin/maintenance` (see
//! [`ToggleAdmin::set_maintenance`]).

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{MaintenanceMode, Permission};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(read_maintenance, set_maintenance))
}

/// Whether the service is in maintenance mode.
#[utoipa::path(
    get,
    path = "/api/admin/maintenance",
    tag = "maintenance",
    responses(
        (status = 200, description = "`{enabled}`.", body = MaintenanceMode),
        super::openapi::Errors
    )
)]
async fn read_maintenance(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<MaintenanceMode>> {
    Ok(Json::ok(admin.maintenance(&caller).await?))
}

/// Turn maintenance mode on or off (root admins only): while it is on, every change through
/// the admin API and the admin page is refused with 503 `MaintenanceModeError`.
#[utoipa::path(
    post,
    path = "/api/admin/maintenance",
    tag = "maintenance",
    request_body(content = MaintenanceMode, description = "`{enabled: bool}`.", content_type = "application/json"),
    responses(
        (status = 204, description = "Set; no body."),
        super::openapi::BodyErrors
    )
)]
async fn set_maintenance(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    // Decided before the body is read.
    let permit = admin
        .permit(&caller, &[Need::root(Permission::Admin)])
        .await?;
    let mode: MaintenanceMode = body.object().await?;
    admin.set_maintenance(permit, &mode).await?;
    Ok(StatusCode::NO_CONTENT)
}
