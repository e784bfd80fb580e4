//! A feature's lifecycle over HTTP: its stages, completing it and taking that back, and the
//! count of features per stage.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params};
use crate::ToggleAdmin;
use crate::model::{LifecycleCompletion, LifecycleCount, LifecycleEntry};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(read_lifecycle))
        .routes(routes!(complete))
        .routes(routes!(uncomplete))
        .routes(routes!(count))
}

/// The stages the feature went through, in order, each with `enteredStageAt`.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The feature's stages.", body = Vec<LifecycleEntry>),
        super::openapi::Errors
    )
)]
async fn read_lifecycle(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Vec<LifecycleEntry>>> {
    Ok(Json::ok(
        admin.feature_lifecycle(&caller, &project, &feature).await?,
    ))
}

/// 200 with no body, as Unleash 6.10.1.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    request_body(content = LifecycleCompletion, description = "Kept or discarded.", content_type = "application/json"),
    responses(
        (status = 200, description = "Completed; no body."),
        super::openapi::BodyErrors
    )
)]
async fn complete(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_feature_update(&caller, &project).await?;
    let completion: LifecycleCompletion = body.object().await?;
    admin
        .complete_feature(permit, &project, &feature, &completion)
        .await?;
    Ok(StatusCode::OK)
}

/// 200 with no body, as Unleash 6.10.1.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "No longer completed; no body."),
        super::openapi::Errors
    )
)]
async fn uncomplete(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .uncomplete_feature(&caller, &project, &feature)
        .await?;
    Ok(StatusCode::OK)
}

/// How many features are in each stage now.
#[utoipa::path(
    get,
    path = "/api/admin/lifecycle/count",
    tag = "feature-config",
    responses(
        (status = 200, description = "Features per stage.", body = LifecycleCount),
        super::openapi::Errors
    )
)]
async fn count(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<LifecycleCount>> {
    Ok(Json::ok(admin.lifecycle_count(&caller).await?))
}
