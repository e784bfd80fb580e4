//! Context fields over HTTP.

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::ContextField;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_context, create_context))
        .routes(routes!(read_context))
}

#[utoipa::path(
    post,
    path = "/api/admin/context",
    tag = "catalog",
    request_body(content = ContextField, description = "The context field to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The context field created.", body = ContextField),
        super::openapi::BodyErrors
    )
)]
async fn create_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(field): JsonBody<ContextField>,
) -> HttpResult<Json<ContextField>> {
    Ok(Json::created(
        admin.create_context_field(&caller, &field).await?,
    ))
}

/// A plain array, as Unleash answers it.
#[utoipa::path(
    get,
    path = "/api/admin/context",
    tag = "catalog",
    responses(
        (status = 200, description = "Every context field.", body = Vec<ContextField>),
        super::openapi::Errors
    )
)]
async fn list_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Vec<ContextField>>> {
    Ok(Json::ok(admin.context_fields(&caller).await?))
}

#[utoipa::path(
    get,
    path = "/api/admin/context/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The context field.", body = ContextField),
        super::openapi::Errors
    )
)]
async fn read_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<ContextField>> {
    Ok(Json::ok(admin.context_field(&caller, &name).await?))
}
