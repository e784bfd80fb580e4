//! Environments over HTTP: create and list them, and enable one in a project.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::Environment;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_environments, create_environment))
        .routes(routes!(add_project_environment))
}

/// `GET /api/admin/environments`, as Unleash answers it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Environments {
    version: u32,
    environments: Vec<Environment>,
}

#[utoipa::path(
    get,
    path = "/api/admin/environments",
    tag = "projects",
    responses(
        (status = 200, description = "Every environment.", body = Environments),
        super::openapi::Errors
    )
)]
async fn list_environments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Environments>> {
    Ok(Json::ok(Environments {
        version: 1,
        environments: admin.environments(&caller).await?,
    }))
}

#[utoipa::path(
    post,
    path = "/api/admin/environments",
    tag = "projects",
    request_body(content = Environment, description = "The environment to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The environment created.", body = Environment),
        super::openapi::BodyErrors
    )
)]
async fn create_environment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(environment): JsonBody<Environment>,
) -> HttpResult<Json<Environment>> {
    Ok(Json::created(
        admin.create_environment(&caller, &environment).await?,
    ))
}

/// The body of `POST /api/admin/projects/{projectId}/environments` (Unleash's
/// `projectEnvironmentSchema`; the change-request and default-strategy members are accepted
/// and ignored).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProjectEnvironment {
    environment: String,
    #[serde(default)]
    #[allow(dead_code)]
    change_requests_enabled: Option<bool>,
    #[serde(default)]
    #[allow(dead_code)]
    #[schema(value_type = Option<Object>)]
    default_strategy: Option<Value>,
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/environments",
    tag = "projects",
    params(super::openapi::ProjectPath),
    request_body(content = ProjectEnvironment, description = "The environment to enable in the project.", content_type = "application/json"),
    responses(
        (status = 200, description = "Enabled; no body."),
        super::openapi::BodyErrors
    )
)]
async fn add_project_environment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<ProjectEnvironment>,
) -> HttpResult<StatusCode> {
    admin
        .add_project_environment(&caller, &project, &body.environment)
        .await?;
    Ok(StatusCode::OK)
}
