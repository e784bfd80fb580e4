//! A feature's parent dependencies over HTTP.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::ParentDependency;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_dependencies, add_dependency))
        .routes(routes!(remove_dependency))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The feature's parents.", body = Vec<ParentDependency>),
        super::openapi::Errors
    )
)]
async fn list_dependencies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Vec<ParentDependency>>> {
    Ok(Json::ok(
        admin
            .feature_dependencies(&caller, &project, &feature)
            .await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    request_body(content = ParentDependency, description = "The parent to add.", content_type = "application/json"),
    responses(
        (status = 200, description = "Added; no body."),
        super::openapi::BodyErrors
    )
)]
async fn add_dependency(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    JsonBody(dependency): JsonBody<ParentDependency>,
) -> HttpResult<StatusCode> {
    admin
        .add_feature_dependency(&caller, &project, &feature, &dependency)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}",
    tag = "feature-config",
    params(super::openapi::DependencyPath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn remove_dependency(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, parent)): Params<(String, String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .remove_feature_dependency(&caller, &project, &feature, &parent)
        .await?;
    Ok(StatusCode::OK)
}
