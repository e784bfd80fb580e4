//! The Edge protocol, so that an Unleash Edge can run in front of this service:
//! `POST /edge/validate` (which of Edge's tokens are valid, with their type and projects; no
//! key needed, as in Unleash) and `POST /api/client/metrics/bulk` (Edge's batched
//! applications and metrics, with a client key). Edge reads flags through the client API.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::client::sdk_body;
use super::error::{HttpResult, Json};
use super::extract::{AnyKey, JsonValue};
use crate::ToggleAdmin;
use crate::error::Error;
use crate::model::{BulkMetrics, EdgeTokens};

/// The most tokens one `POST /edge/validate` may ask about.
const MAX_VALIDATE_TOKENS: usize = 1000;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(validate))
        .routes(routes!(bulk_metrics))
}

#[derive(serde::Deserialize)]
struct TokenList {
    tokens: Vec<String>,
}

/// The valid tokens among `{tokens: [...]}`: `{tokens: [{token, type, projects}]}` (client
/// and frontend keys; admin keys and unknown, revoked or expired ones are left out).
#[utoipa::path(
    post,
    path = "/edge/validate",
    tag = "edge",
    request_body(content = Object, description = "`{tokens: [secret, ...]}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{tokens: [{token, type, projects}]}`: the valid ones.", content_type = "application/json"),
        super::openapi::BodyErrors
    )
)]
async fn validate(
    State(admin): State<ToggleAdmin>,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<EdgeTokens>> {
    let list: TokenList = sdk_body(body)?;
    if list.tokens.len() > MAX_VALIDATE_TOKENS {
        return Err(Error::invalid_at(
            "/tokens",
            format!("at most {MAX_VALIDATE_TOKENS} tokens at a time"),
        )
        .into());
    }
    Ok(Json::ok(EdgeTokens {
        tokens: admin.validate_edge_tokens(&list.tokens).await?,
    }))
}

/// Unleash Edge's batch (Unleash's `bulkMetricsSchema`): `{applications, metrics}`, 202, no
/// body. See [`ToggleAdmin::record_bulk_metrics`].
#[utoipa::path(
    post,
    path = "/api/client/metrics/bulk",
    tag = "edge",
    request_body(content = Object, description = "`{applications: [...], metrics: [{featureName, appName, environment, timestamp, yes, no, variants}]}`.", content_type = "application/json"),
    responses(
        (status = 202, description = "Accepted; no body."),
        super::openapi::BodyErrors
    )
)]
async fn bulk_metrics(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let batch: BulkMetrics = sdk_body(body)?;
    admin.record_bulk_metrics(&caller, &batch).await?;
    Ok(StatusCode::ACCEPTED)
}
