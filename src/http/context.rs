//! Context fields over HTTP.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{ContextField, ContextFieldUpdate, LegalValue, NameCheck, StrategyUse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_context, create_context))
        .routes(routes!(read_context, update_context, delete_context))
        .routes(routes!(validate_context))
        .routes(routes!(put_legal_value))
        .routes(routes!(delete_legal_value))
        .routes(routes!(context_strategies))
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

/// 200 without a body, as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/context/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    request_body(content = ContextFieldUpdate, description = "The settings to change.", content_type = "application/json"),
    responses(
        (status = 200, description = "Updated; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
    JsonBody(update): JsonBody<ContextFieldUpdate>,
) -> HttpResult<StatusCode> {
    admin.update_context_field(&caller, &name, &update).await?;
    Ok(StatusCode::OK)
}

/// 200; 409 `ConflictError` while a strategy's constraint or a segment uses it.
#[utoipa::path(
    delete,
    path = "/api/admin/context/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.delete_context_field(&caller, &name).await?;
    Ok(StatusCode::OK)
}

/// 200 when the name is free, 409 `NameExistsError` when taken.
#[utoipa::path(
    post,
    path = "/api/admin/context/validate",
    tag = "catalog",
    request_body(content = NameCheck, description = "The name to check.", content_type = "application/json"),
    responses(
        (status = 200, description = "The name is free; no body."),
        super::openapi::BodyErrors
    )
)]
async fn validate_context(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<NameCheck>,
) -> HttpResult<StatusCode> {
    admin
        .validate_context_field_name(&caller, &body.name)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/context/{name}/legal-values",
    tag = "catalog",
    params(super::openapi::NamePath),
    request_body(content = LegalValue, description = "The legal value to add, or whose description to change.", content_type = "application/json"),
    responses(
        (status = 200, description = "Set; no body."),
        super::openapi::BodyErrors
    )
)]
async fn put_legal_value(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
    JsonBody(legal): JsonBody<LegalValue>,
) -> HttpResult<StatusCode> {
    admin.put_legal_value(&caller, &name, &legal).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete,
    path = "/api/admin/context/{name}/legal-values/{value}",
    tag = "catalog",
    params(super::openapi::LegalValuePath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn delete_legal_value(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((name, value)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin.delete_legal_value(&caller, &name, &value).await?;
    Ok(StatusCode::OK)
}

/// Unleash's `contextFieldStrategiesSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct ContextStrategies {
    strategies: Vec<StrategyUse>,
}

#[utoipa::path(
    get,
    path = "/api/admin/context/{name}/strategies",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The strategies with a constraint on the field.", body = ContextStrategies),
        super::openapi::Errors
    )
)]
async fn context_strategies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<ContextStrategies>> {
    Ok(Json::ok(ContextStrategies {
        strategies: admin.context_field_strategies(&caller, &name).await?,
    }))
}
