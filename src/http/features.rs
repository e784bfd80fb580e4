//! Features over HTTP: create, read and archive a project's feature, and list the project's
//! archived features.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{ArchivedFeatures, Feature, NewFeature};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(archived_features))
        .routes(routes!(create_feature))
        .routes(routes!(read_feature, archive_feature))
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
