//! A project's environments over HTTP: every environment as the project sees it, removing
//! one from the project, and the default strategy its features get there.

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{FeatureStrategy, Permission, ProjectEnvironmentList};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(remove))
        .routes(routes!(set_default_strategy))
}

/// `{projectId}/environments/{environment}`.
#[derive(utoipa::IntoParams)]
#[into_params(names("projectId", "environment"), parameter_in = Path)]
#[allow(dead_code)]
struct ProjectEnvironmentPath(String, String);

#[utoipa::path(
    get,
    path = "/api/admin/environments/project/{projectId}",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "Every environment, `visible` where the project has it.", body = ProjectEnvironmentList),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectEnvironmentList>> {
    Ok(Json::ok(
        admin.project_environments(&caller, &project).await?,
    ))
}

/// Remove an environment from a project, with its features' configuration there.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/environments/{environment}",
    tag = "projects",
    params(ProjectEnvironmentPath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn remove(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, environment)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .remove_project_environment(&caller, &project, &environment)
        .await?;
    Ok(StatusCode::OK)
}

/// The strategy the project's features get in the environment when enabled with none (a
/// `flexibleRollout`, checked as feature strategies are).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/environments/{environment}/default-strategy",
    tag = "projects",
    params(ProjectEnvironmentPath),
    request_body(content = FeatureStrategy, description = "The default strategy.", content_type = "application/json"),
    responses(
        (status = 200, description = "The strategy stored.", body = FeatureStrategy),
        super::openapi::BodyErrors
    )
)]
async fn set_default_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, environment)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<Json<FeatureStrategy>> {
    let permit = admin
        .permit(
            &caller,
            &[Need::project(Permission::UpdateProject, &project)],
        )
        .await?;
    let strategy = Value::Object(body.object::<serde_json::Map<String, Value>>().await?);
    Ok(Json::ok(
        admin
            .set_default_strategy(permit, &project, &environment, &strategy)
            .await?,
    ))
}
