//! The playground over HTTP: `POST /api/admin/playground` and
//! `POST /api/admin/playground/advanced` (see [`ToggleAdmin::playground`]).

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody};
use crate::ToggleAdmin;
use crate::model::{
    AdvancedPlaygroundRequest, AdvancedPlaygroundResponse, PlaygroundRequest, PlaygroundResponse,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(playground))
        .routes(routes!(advanced_playground))
}

/// Every flag of the projects in the environment, evaluated for the context, with each
/// strategy's, constraint's and segment's result.
#[utoipa::path(
    post,
    path = "/api/admin/playground",
    tag = "playground",
    request_body(content = PlaygroundRequest, description = "`{environment, projects?: \"*\" | [ids], context: {appName, userId?, sessionId?, remoteAddress?, currentTime?, properties?}}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "The input and every flag evaluated.", body = PlaygroundResponse),
        super::openapi::BodyErrors
    )
)]
async fn playground(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(request): JsonBody<PlaygroundRequest>,
) -> HttpResult<Json<PlaygroundResponse>> {
    Ok(Json::ok(admin.playground(&caller, &request).await?))
}

/// The playground in several environments, for every combination of the context's
/// comma-separated values.
#[utoipa::path(
    post,
    path = "/api/admin/playground/advanced",
    tag = "playground",
    request_body(content = AdvancedPlaygroundRequest, description = "`{environments: [..], projects?, context}`; a context value may list several values, comma-separated.", content_type = "application/json"),
    responses(
        (status = 200, description = "The input and every flag evaluated per environment and context.", body = AdvancedPlaygroundResponse),
        super::openapi::BodyErrors
    )
)]
async fn advanced_playground(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(request): JsonBody<AdvancedPlaygroundRequest>,
) -> HttpResult<Json<AdvancedPlaygroundResponse>> {
    Ok(Json::ok(
        admin.advanced_playground(&caller, &request).await?,
    ))
}
