//! Projects over HTTP: create and read. Their features are in `features.rs`, the
//! environments they have in `environments.rs`.

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{NewProject, Project, ProjectOverview};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(create_project))
        .routes(routes!(read_project))
}

#[utoipa::path(
    post,
    path = "/api/admin/projects",
    tag = "projects",
    request_body(content = Project, description = "The project to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The project created.", body = Project),
        super::openapi::BodyErrors
    )
)]
async fn create_project(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(project): JsonBody<NewProject>,
) -> HttpResult<Json<Project>> {
    Ok(Json::created(
        admin.create_project(&caller, &project).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project, as Unleash's project overview (`environments: [{environment}]`).", body = ProjectOverview),
        super::openapi::Errors
    )
)]
async fn read_project(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectOverview>> {
    Ok(Json::ok(admin.project(&caller, &project).await?.into()))
}
