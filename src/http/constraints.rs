//! Checking a constraint on its own over HTTP.

use axum::extract::State;
use axum::http::StatusCode;

use super::error::HttpResult;
use super::extract::{Authenticated, LaterBody};
use crate::ToggleAdmin;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(validate_constraint))
}

/// 204 when the constraint is valid; 400 naming each problem, as Unleash.
#[utoipa::path(
    post,
    path = "/api/admin/constraints/validate",
    tag = "catalog",
    request_body(content = crate::model::Constraint, description = "The constraint to check.", content_type = "application/json"),
    responses(
        (status = 204, description = "Valid; no body."),
        super::openapi::BodyErrors
    )
)]
async fn validate_constraint(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let constraint: serde_json::Value = body.object().await?;
    admin.validate_constraint(&caller, &constraint).await?;
    Ok(StatusCode::NO_CONTENT)
}
