//! The archive over HTTP: archive, revive and delete many features of a project, check an
//! archive, list the archive, revive or delete one archived feature; mark many features stale
//! and enable or disable many in an environment. Every batch is atomic: one bad feature and
//! nothing changes, the 400 naming each bad one with its index.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{ArchiveCheck, ArchivedFeatures, FeatureNames, FeaturesStale};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(all_archived_features))
        .routes(routes!(archived_features))
        .routes(routes!(archive_features))
        .routes(routes!(validate_archive))
        .routes(routes!(revive_feature))
        .routes(routes!(revive_features))
        .routes(routes!(delete_feature))
        .routes(routes!(delete_features))
        .routes(routes!(set_stale))
        .routes(routes!(bulk_on))
        .routes(routes!(bulk_off))
}

/// Every archived feature: 200 `{version: 2, features}`.
#[utoipa::path(
    get,
    path = "/api/admin/archive/features",
    tag = "archive",
    responses(
        (status = 200, description = "Every archived feature.", body = ArchivedFeatures),
        super::openapi::Errors
    )
)]
async fn all_archived_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<ArchivedFeatures>> {
    Ok(Json::ok(admin.all_archived_features(&caller).await?))
}

/// The project's archived features: 200 `{version: 2, features}`, as Unleash.
#[utoipa::path(
    get,
    path = "/api/admin/archive/features/{projectId}",
    tag = "archive",
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

/// Archive many features: 202, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/archive",
    tag = "archive",
    params(super::openapi::ProjectPath),
    request_body(content = FeatureNames, description = "The features to archive.", content_type = "application/json"),
    responses(
        (status = 202, description = "Archived; no body."),
        super::openapi::BodyErrors
    )
)]
async fn archive_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<StatusCode> {
    admin
        .archive_features(&caller, &project, &body.features)
        .await?;
    Ok(StatusCode::ACCEPTED)
}

/// What archiving these features would do: 200 `{parentsWithChildFeatures,
/// hasDeletedDependencies}`; nothing written.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/archive/validate",
    tag = "archive",
    params(super::openapi::ProjectPath),
    request_body(content = FeatureNames, description = "The features to archive.", content_type = "application/json"),
    responses(
        (status = 200, description = "What the archive would do.", body = ArchiveCheck),
        super::openapi::BodyErrors
    )
)]
async fn validate_archive(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<Json<ArchiveCheck>> {
    Ok(Json::ok(
        admin
            .validate_archive(&caller, &project, &body.features)
            .await?,
    ))
}

/// Revive an archived feature, off in every environment: 200, no body.
#[utoipa::path(
    post,
    path = "/api/admin/archive/revive/{featureName}",
    tag = "archive",
    params(("featureName" = String, Path, description = "The feature.")),
    responses(
        (status = 200, description = "Revived; no body."),
        super::openapi::Errors
    )
)]
async fn revive_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
) -> HttpResult<StatusCode> {
    admin.revive_feature(&caller, &feature).await?;
    Ok(StatusCode::OK)
}

/// Revive many archived features: 200, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/revive",
    tag = "archive",
    params(super::openapi::ProjectPath),
    request_body(content = FeatureNames, description = "The features to revive.", content_type = "application/json"),
    responses(
        (status = 200, description = "Revived; no body."),
        super::openapi::BodyErrors
    )
)]
async fn revive_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<StatusCode> {
    admin
        .revive_features(&caller, &project, &body.features)
        .await?;
    Ok(StatusCode::OK)
}

/// Delete an archived feature for good: 200, no body.
#[utoipa::path(
    delete,
    path = "/api/admin/archive/{featureName}",
    tag = "archive",
    params(("featureName" = String, Path, description = "The feature.")),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
) -> HttpResult<StatusCode> {
    admin.delete_feature(&caller, &feature).await?;
    Ok(StatusCode::OK)
}

/// Delete many archived features for good: 200, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/delete",
    tag = "archive",
    params(super::openapi::ProjectPath),
    request_body(content = FeatureNames, description = "The features to delete.", content_type = "application/json"),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::BodyErrors
    )
)]
async fn delete_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<StatusCode> {
    admin
        .delete_features(&caller, &project, &body.features)
        .await?;
    Ok(StatusCode::OK)
}

/// Mark many features stale or not: 202, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/stale",
    tag = "projects",
    params(super::openapi::ProjectPath),
    request_body(content = FeaturesStale, description = "The features and whether they are stale.", content_type = "application/json"),
    responses(
        (status = 202, description = "Done; no body."),
        super::openapi::BodyErrors
    )
)]
async fn set_stale(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    JsonBody(body): JsonBody<FeaturesStale>,
) -> HttpResult<StatusCode> {
    admin
        .set_features_stale(&caller, &project, &body.features, body.stale)
        .await?;
    Ok(StatusCode::ACCEPTED)
}

/// `{projectId}/bulk_features/environments/{environment}`.
#[derive(utoipa::IntoParams)]
#[into_params(names("projectId", "environment"), parameter_in = Path)]
#[allow(dead_code)]
struct BulkPath(String, String);

/// Enable many features in an environment: 200, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on",
    tag = "feature-config",
    params(BulkPath),
    request_body(content = FeatureNames, description = "The features to enable.", content_type = "application/json"),
    responses(
        (status = 200, description = "Enabled; no body."),
        super::openapi::BodyErrors
    )
)]
async fn bulk_on(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, environment)): Params<(String, String)>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<StatusCode> {
    admin
        .set_features_enabled(&caller, &project, &environment, &body.features, true)
        .await?;
    Ok(StatusCode::OK)
}

/// Disable many features in an environment: 200, no body.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off",
    tag = "feature-config",
    params(BulkPath),
    request_body(content = FeatureNames, description = "The features to disable.", content_type = "application/json"),
    responses(
        (status = 200, description = "Disabled; no body."),
        super::openapi::BodyErrors
    )
)]
async fn bulk_off(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, environment)): Params<(String, String)>,
    JsonBody(body): JsonBody<FeatureNames>,
) -> HttpResult<StatusCode> {
    admin
        .set_features_enabled(&caller, &project, &environment, &body.features, false)
        .await?;
    Ok(StatusCode::OK)
}
