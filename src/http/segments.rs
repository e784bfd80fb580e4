//! Segments over HTTP.

use axum::extract::State;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{NewSegment, Segment};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_segments, create_segment))
        .routes(routes!(read_segment))
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
