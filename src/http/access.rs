//! Project access over HTTP: the fourth operation of the specification.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params};
use crate::ToggleAdmin;

use crate::model::ProjectAccessConfiguration;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(read_access, set_access))
}

/// `PUT /api/admin/projects/{projectId}/access`: replace the project's whole assignment of
/// users and groups to roles. 200 with no body.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/access",
    tag = "access",
    params(super::openapi::ProjectPath),
    request_body(content = ProjectAccessConfiguration, description = "The project's whole new assignment.", content_type = "application/json"),
    responses(
        (status = 200, description = "Replaced; no body."),
        super::openapi::BodyErrors
    )
)]
async fn set_access(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_access_change(&caller, &project).await?;
    let config: ProjectAccessConfiguration = body.object().await?;
    admin.set_project_access(permit, &project, &config).await?;
    Ok(StatusCode::OK)
}

/// The project's assignment, in the shape `PUT` takes.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/access",
    tag = "access",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project's assignment of users and groups to roles.", body = ProjectAccessConfiguration),
        super::openapi::Errors
    )
)]
async fn read_access(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectAccessConfiguration>> {
    Ok(Json::ok(admin.project_access(&caller, &project).await?))
}
