//! A feature's parent dependencies over HTTP: list, add, remove one or all; the features
//! and variants a child may depend on; whether a project has any.

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
        .routes(routes!(
            list_dependencies,
            add_dependency,
            delete_dependencies
        ))
        .routes(routes!(remove_dependency))
        .routes(routes!(possible_parents))
        .routes(routes!(parent_variants))
        .routes(routes!(project_has_dependencies))
}

/// Remove every parent: 200 with no body, as Unleash.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn delete_dependencies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .delete_feature_dependencies(&caller, &project, &feature)
        .await?;
    Ok(StatusCode::OK)
}

/// The names of the features the feature may depend on.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/parents",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The possible parents, by name.", body = Vec<String>),
        super::openapi::Errors
    )
)]
async fn possible_parents(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Vec<String>>> {
    Ok(Json::ok(
        admin.possible_parents(&caller, &project, &feature).await?,
    ))
}

/// The names of the feature's variants (of every environment and strategy), for a child to
/// require.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/parent-variants",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The variant names, sorted.", body = Vec<String>),
        super::openapi::Errors
    )
)]
async fn parent_variants(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Vec<String>>> {
    Ok(Json::ok(
        admin.parent_variants(&caller, &project, &feature).await?,
    ))
}

/// `true` when a feature of the project has a parent, else `false`.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/dependencies",
    tag = "feature-config",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "Whether the project has dependencies.", body = bool, content_type = "application/json"),
        super::openapi::Errors
    )
)]
async fn project_has_dependencies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<bool>> {
    Ok(Json::ok(
        admin.project_has_dependencies(&caller, &project).await?,
    ))
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
