//! A project at a glance, over HTTP: `GET /api/admin/projects/{projectId}/status` (see
//! [`ToggleAdmin::project_status`]).

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, Params};
use crate::ToggleAdmin;
use crate::model::ProjectStatus;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(project_status))
}

/// The project at a glance: its events per day over the last year, its keys, members and
/// segments, its health, its stale and potentially stale flags, and where its flags are in
/// their lifecycle, computed now.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/status",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The status (Unleash's `projectStatusSchema`).", body = ProjectStatus),
        super::openapi::Errors
    )
)]
async fn project_status(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectStatus>> {
    Ok(Json::ok(admin.project_status(&caller, &project).await?))
}
