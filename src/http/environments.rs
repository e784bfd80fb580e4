//! Environments over HTTP: create, list and read them, turn them on and off, order them;
//! and enable one in a project (the rest of a project's environments is in
//! `project_environments.rs`).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{Environment, EnvironmentDetail, Permission};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_environments, create_environment))
        .routes(routes!(read_environment))
        .routes(routes!(environment_on))
        .routes(routes!(environment_off))
        .routes(routes!(sort_order))
        .routes(routes!(add_project_environment))
}

#[utoipa::path(
    get,
    path = "/api/admin/environments/{name}",
    tag = "projects",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The environment, with its counts.", body = EnvironmentDetail),
        super::openapi::Errors
    )
)]
async fn read_environment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<EnvironmentDetail>> {
    Ok(Json::ok(admin.environment(&caller, &name).await?))
}

/// Turn an environment on again.
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/on",
    tag = "projects",
    params(super::openapi::NamePath),
    responses(
        (status = 204, description = "On; no body."),
        super::openapi::Errors
    )
)]
async fn environment_on(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.set_environment_enabled(&caller, &name, true).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Turn an environment off (Unleash's "deprecate"): only marked so, see
/// [`ToggleAdmin::set_environment_enabled`].
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/off",
    tag = "projects",
    params(super::openapi::NamePath),
    responses(
        (status = 204, description = "Off; no body."),
        super::openapi::Errors
    )
)]
async fn environment_off(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.set_environment_enabled(&caller, &name, false).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Set the sort order of environments, `{"<name>": <sortOrder>}` (Unleash's
/// `sortOrderSchema`); every name must exist.
#[utoipa::path(
    put,
    path = "/api/admin/environments/sort-order",
    tag = "projects",
    request_body(content = BTreeMap<String, i64>, description = "Environment name → sort order.", content_type = "application/json"),
    responses(
        (status = 200, description = "Ordered; no body."),
        super::openapi::BodyErrors
    )
)]
async fn sort_order(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin
        .permit(&caller, &[Need::root(Permission::Admin)])
        .await?;
    let order: BTreeMap<String, i64> = body.object().await?;
    admin.set_environment_sort_order(permit, &order).await?;
    Ok(StatusCode::OK)
}

/// `GET /api/admin/environments`, as Unleash answers it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Environments {
    version: u32,
    environments: Vec<EnvironmentDetail>,
}

#[utoipa::path(
    get,
    path = "/api/admin/environments",
    tag = "projects",
    responses(
        (status = 200, description = "Every environment, with its counts.", body = Environments),
        super::openapi::Errors
    )
)]
async fn list_environments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Environments>> {
    Ok(Json::ok(Environments {
        version: 1,
        environments: admin.environment_details(&caller).await?,
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
