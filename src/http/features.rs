//! Features over HTTP: list a project's features; create, read, replace, patch, clone and
//! archive one; read one of its environments; check a name.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params};
use crate::ToggleAdmin;
use crate::model::{
    Feature, FeatureClone, FeatureEnvironment, FeatureName, FeatureUpdate, NewFeature,
    ProjectFeatures,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(create_feature, project_features))
        .routes(routes!(
            read_feature,
            update_feature,
            patch_feature,
            archive_feature
        ))
        .routes(routes!(clone_feature))
        .routes(routes!(validate_name))
        .routes(routes!(read_feature_environment))
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

/// A project's features that are not archived: 200 `{version: 2, features}` (Unleash's
/// `projectFeaturesSchema`), by name, each with its environments.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features",
    tag = "projects",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project's features.", body = ProjectFeatures),
        super::openapi::Errors
    )
)]
async fn project_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ProjectFeatures>> {
    Ok(Json::ok(admin.project_features(&caller, &project).await?))
}

/// Replace a feature's settings: 200 the feature.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "projects",
    params(super::openapi::FeaturePath),
    request_body(content = FeatureUpdate, description = "The feature's new settings; what is left out is reset.", content_type = "application/json"),
    responses(
        (status = 200, description = "The feature updated.", body = Feature),
        super::openapi::BodyErrors
    )
)]
async fn update_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    JsonBody(update): JsonBody<FeatureUpdate>,
) -> HttpResult<Json<Feature>> {
    Ok(Json::ok(
        admin
            .update_feature(&caller, &project, &feature, &update)
            .await?,
    ))
}

/// Patch a feature's settings (`/description`, `/type`, `/stale`, `/impressionData`,
/// `/archived`): 200 the feature.
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "projects",
    params(super::openapi::FeaturePath),
    request_body(description = "A JSON Patch (RFC 6902) of the feature's settings.", content((Vec<crate::model::PatchOperation> = "application/json"), (Vec<crate::model::PatchOperation> = "application/json-patch+json"))),
    responses(
        (status = 200, description = "The feature patched.", body = Feature),
        super::openapi::BodyErrors
    )
)]
async fn patch_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<Json<Feature>> {
    let body = body.patch().await?;
    let patch = crate::variants::decode_patch(&body)?;
    Ok(Json::ok(
        admin
            .patch_feature(&caller, &project, &feature, &patch)
            .await?,
    ))
}

/// Clone a feature in its project: 201 the new feature.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/clone",
    tag = "projects",
    params(super::openapi::FeaturePath),
    request_body(content = FeatureClone, description = "The new feature's name.", content_type = "application/json"),
    responses(
        (status = 201, description = "The new feature.", body = Feature),
        super::openapi::BodyErrors
    )
)]
async fn clone_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    JsonBody(clone): JsonBody<FeatureClone>,
) -> HttpResult<Json<Feature>> {
    Ok(Json::created(
        admin
            .clone_feature(&caller, &project, &feature, &clone)
            .await?,
    ))
}

/// Whether a feature could be created under a name: 200 with no body when it is free and
/// valid, 409 `NameExistsError` when taken, 400 when invalid.
#[utoipa::path(
    post,
    path = "/api/admin/features/validate",
    tag = "features",
    request_body(content = FeatureName, description = "The name to check.", content_type = "application/json"),
    responses(
        (status = 200, description = "The name is free and valid; no body."),
        super::openapi::BodyErrors
    )
)]
async fn validate_name(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(name): JsonBody<FeatureName>,
) -> HttpResult<StatusCode> {
    admin.validate_feature_name(&caller, &name).await?;
    Ok(StatusCode::OK)
}

/// One environment of a feature: 200 (Unleash's `featureEnvironmentSchema`).
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}",
    tag = "projects",
    params(super::openapi::FeatureEnvPath),
    responses(
        (status = 200, description = "The feature in that environment.", body = FeatureEnvironment),
        super::openapi::Errors
    )
)]
async fn read_feature_environment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): Params<(String, String, String)>,
) -> HttpResult<Json<FeatureEnvironment>> {
    Ok(Json::ok(
        admin
            .feature_environment(&caller, &project, &feature, &environment)
            .await?,
    ))
}
