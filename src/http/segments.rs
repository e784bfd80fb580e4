//! Segments over HTTP.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{NameCheck, NewSegment, Segment, StrategySegments, StrategyUse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_segments, create_segment))
        .routes(routes!(read_segment, update_segment, delete_segment))
        .routes(routes!(segment_strategies))
        .routes(routes!(validate_segment))
        .routes(routes!(set_strategy_segments))
        .routes(routes!(strategy_segments))
}

/// The segments a flag strategy uses: `{segments}` (none for an unknown strategy, as
/// Unleash).
#[utoipa::path(
    get,
    path = "/api/admin/segments/strategies/{strategyId}",
    tag = "catalog",
    params(super::openapi::StrategyIdPath),
    responses(
        (status = 200, description = "The strategy's segments.", body = Segments),
        super::openapi::Errors
    )
)]
async fn strategy_segments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(strategy_id): Params<String>,
) -> HttpResult<Json<Segments>> {
    Ok(Json::ok(Segments {
        segments: admin.strategy_segments(&caller, &strategy_id).await?,
    }))
}

#[utoipa::path(
    post,
    path = "/api/admin/segments",
    tag = "catalog",
    request_body(content = NewSegment, description = "The segment to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The segment created.", body = Segment),
        super::openapi::BodyErrors
    )
)]
async fn create_segment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(segment): JsonBody<NewSegment>,
) -> HttpResult<Json<Segment>> {
    Ok(Json::created(
        admin.create_segment(&caller, &segment).await?,
    ))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Segments {
    segments: Vec<Segment>,
}

#[utoipa::path(
    get,
    path = "/api/admin/segments",
    tag = "catalog",
    responses(
        (status = 200, description = "Every segment.", body = Segments),
        super::openapi::Errors
    )
)]
async fn list_segments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Segments>> {
    Ok(Json::ok(Segments {
        segments: admin.segments(&caller).await?,
    }))
}

#[utoipa::path(
    get,
    path = "/api/admin/segments/{id}",
    tag = "catalog",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The segment.", body = Segment),
        super::openapi::Errors
    )
)]
async fn read_segment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<Segment>> {
    Ok(Json::ok(admin.segment(&caller, id).await?))
}

/// 204, as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/segments/{id}",
    tag = "catalog",
    params(super::openapi::IdPath),
    request_body(content = NewSegment, description = "The segment's new name, description, project and constraints.", content_type = "application/json"),
    responses(
        (status = 204, description = "Updated; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_segment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
    JsonBody(segment): JsonBody<NewSegment>,
) -> HttpResult<StatusCode> {
    admin.update_segment(&caller, id, &segment).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// 204; 409 `ConflictError` while a strategy uses it, naming each in `details` (Unleash
/// 6.10.1's 409 has no body).
#[utoipa::path(
    delete,
    path = "/api/admin/segments/{id}",
    tag = "catalog",
    params(super::openapi::IdPath),
    responses(
        (status = 204, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_segment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<StatusCode> {
    admin.delete_segment(&caller, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Unleash's `segmentStrategiesSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SegmentStrategies {
    strategies: Vec<StrategyUse>,
    /// Always empty: there are no change requests here.
    change_request_strategies: Vec<StrategyUse>,
}

#[utoipa::path(
    get,
    path = "/api/admin/segments/{id}/strategies",
    tag = "catalog",
    params(super::openapi::IdPath),
    responses(
        (status = 200, description = "The strategies using the segment.", body = SegmentStrategies),
        super::openapi::Errors
    )
)]
async fn segment_strategies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<i64>,
) -> HttpResult<Json<SegmentStrategies>> {
    Ok(Json::ok(SegmentStrategies {
        strategies: admin.segment_strategies(&caller, id).await?,
        change_request_strategies: Vec::new(),
    }))
}

/// 204 when the name is free, 409 `NameExistsError` when taken.
#[utoipa::path(
    post,
    path = "/api/admin/segments/validate",
    tag = "catalog",
    request_body(content = NameCheck, description = "The name to check.", content_type = "application/json"),
    responses(
        (status = 204, description = "The name is free; no body."),
        super::openapi::BodyErrors
    )
)]
async fn validate_segment(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<NameCheck>,
) -> HttpResult<StatusCode> {
    admin.validate_segment_name(&caller, &body.name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// 201 with the body, as Unleash.
#[utoipa::path(
    post,
    path = "/api/admin/segments/strategies",
    tag = "catalog",
    request_body(content = StrategySegments, description = "The strategy and the segments it uses from now on.", content_type = "application/json"),
    responses(
        (status = 201, description = "Set.", body = StrategySegments),
        super::openapi::BodyErrors
    )
)]
async fn set_strategy_segments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<StrategySegments>,
) -> HttpResult<Json<StrategySegments>> {
    admin.set_strategy_segments(&caller, &body).await?;
    Ok(Json::created(body))
}
