//! Projects, environments and features: the set-up the four operations stand on.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{ArchivedFeatures, NewFeature, NewProject};
use crate::model::{Environment, Feature, Project};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(create_project))
        .routes(routes!(read_project))
        .routes(routes!(archived_features))
        .routes(routes!(list_environments, create_environment))
        .routes(routes!(add_project_environment))
        .routes(routes!(create_feature))
        .routes(routes!(read_feature, archive_feature))
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
        (status = 200, description = "The project.", body = Project),
        super::openapi::Errors
    )
)]
async fn read_project(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<Project>> {
    Ok(Json::ok(admin.project(&caller, &project).await?))
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

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features",
    tag = "projects",
    params(super::openapi::ProjectPath),
    request_body(content = crate::model::NewFeature, description = "The feature to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The feature created.", body = Feature),
        super::openapi::BodyErrors
    )
)]
async fn create_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(feature): JsonBody<NewFeature>,
) -> HttpResult<Json<Feature>> {
    Ok(Json::created(
        admin.create_feature(&caller, &project, &feature).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "projects",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The feature.", body = Feature),
        super::openapi::Errors
    )
)]
async fn read_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Feature>> {
    Ok(Json::ok(admin.feature(&caller, &project, &feature).await?))
}

/// Archive, as Unleash: 202 with no body.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "projects",
    params(super::openapi::FeaturePath),
    responses(
        (status = 202, description = "Archived; no body."),
        super::openapi::Errors
    )
)]
async fn archive_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin.archive_feature(&caller, &project, &feature).await?;
    Ok(StatusCode::ACCEPTED)
}

/// The project's archived features: 200 `{version: 2, features}`, as Unleash.
#[utoipa::path(
    get,
    path = "/api/admin/archive/features/{projectId}",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project's archived features.", body = ArchivedFeatures),
        super::openapi::Errors
    )
)]
async fn archived_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ArchivedFeatures>> {
    Ok(Json::ok(admin.archived_features(&caller, &project).await?))
}
