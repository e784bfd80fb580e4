//! A feature's links over HTTP: add, change, remove (they show in the feature's `links`).

use axum::extract::State;
use axum::http::StatusCode;

use super::error::HttpResult;
use super::extract::{Authenticated, LaterBody, Params};
use crate::ToggleAdmin;
use crate::model::NewFeatureLink;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(add_link))
        .routes(routes!(update_link, delete_link))
}

/// 204, as Unleash; a missing flag is a 404 (Unleash 6.10.1: 500), an address that is not
/// `http(s)` a 400.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/link",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    request_body(content = NewFeatureLink, description = "The link's address and title.", content_type = "application/json"),
    responses(
        (status = 204, description = "Added; no body."),
        super::openapi::BodyErrors
    )
)]
async fn add_link(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_feature_update(&caller, &project).await?;
    let link: NewFeatureLink = body.object().await?;
    admin
        .add_feature_link(permit, &project, &feature, &link)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// 204, as Unleash; 404 for a link the feature does not have.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}",
    tag = "feature-config",
    params(super::openapi::LinkPath),
    request_body(content = NewFeatureLink, description = "The link's new address and title.", content_type = "application/json"),
    responses(
        (status = 204, description = "Changed; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_link(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, id)): Params<(String, String, String)>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_feature_update(&caller, &project).await?;
    let link: NewFeatureLink = body.object().await?;
    admin
        .update_feature_link(permit, &project, &feature, &id, &link)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// 204, as Unleash; 404 for a link the feature does not have.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/link/{linkId}",
    tag = "feature-config",
    params(super::openapi::LinkPath),
    responses(
        (status = 204, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn delete_link(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, id)): Params<(String, String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .delete_feature_link(&caller, &project, &feature, &id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
