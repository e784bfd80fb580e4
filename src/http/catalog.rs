//! The catalogue over HTTP: tag types and strategy definitions.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{StrategyDefinition, TagType, TagTypeUpdate};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_tag_types, create_tag_type))
        .routes(routes!(read_tag_type, update_tag_type, delete_tag_type))
        .routes(routes!(validate_tag_type))
        .routes(routes!(list_strategies, create_strategy))
        .routes(routes!(read_strategy, delete_strategy))
        .routes(routes!(deprecate_strategy))
        .routes(routes!(reactivate_strategy))
}

#[utoipa::path(
    post,
    path = "/api/admin/tag-types",
    tag = "catalog",
    request_body(content = TagType, description = "The tag type to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The tag type created.", body = TagType),
        super::openapi::BodyErrors
    )
)]
async fn create_tag_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(tag_type): JsonBody<TagType>,
) -> HttpResult<Json<TagType>> {
    Ok(Json::created(
        admin.create_tag_type(&caller, &tag_type).await?,
    ))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct TagTypes {
    version: u32,
    tag_types: Vec<TagType>,
}

#[utoipa::path(
    get,
    path = "/api/admin/tag-types",
    tag = "catalog",
    responses(
        (status = 200, description = "Every tag type.", body = TagTypes),
        super::openapi::Errors
    )
)]
async fn list_tag_types(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<TagTypes>> {
    Ok(Json::ok(TagTypes {
        version: 1,
        tag_types: admin.tag_types(&caller).await?,
    }))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct OneTagType {
    version: u32,
    tag_type: TagType,
}

/// Unleash's `tagTypeSchema` wrapper: `{version: 1, tagType}`.
#[utoipa::path(
    get,
    path = "/api/admin/tag-types/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The tag type.", body = OneTagType),
        super::openapi::Errors
    )
)]
async fn read_tag_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<OneTagType>> {
    Ok(Json::ok(OneTagType {
        version: 1,
        tag_type: admin.tag_type(&caller, &name).await?,
    }))
}

#[utoipa::path(
    post,
    path = "/api/admin/strategies",
    tag = "catalog",
    request_body(content = StrategyDefinition, description = "The strategy definition to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The definition created.", body = StrategyDefinition),
        super::openapi::BodyErrors
    )
)]
async fn create_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(definition): JsonBody<StrategyDefinition>,
) -> HttpResult<Json<StrategyDefinition>> {
    Ok(Json::created(
        admin
            .create_strategy_definition(&caller, &definition)
            .await?,
    ))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Strategies {
    version: u32,
    strategies: Vec<StrategyDefinition>,
}

#[utoipa::path(
    get,
    path = "/api/admin/strategies",
    tag = "catalog",
    responses(
        (status = 200, description = "Every strategy definition.", body = Strategies),
        super::openapi::Errors
    )
)]
async fn list_strategies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Strategies>> {
    Ok(Json::ok(Strategies {
        version: 1,
        strategies: admin.strategy_definitions(&caller).await?,
    }))
}

#[utoipa::path(
    get,
    path = "/api/admin/strategies/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "The strategy definition.", body = StrategyDefinition),
        super::openapi::Errors
    )
)]
async fn read_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<StrategyDefinition>> {
    Ok(Json::ok(admin.strategy_definition(&caller, &name).await?))
}

/// 200; a built-in 400 (Unleash: 500); one in use 409 `ConflictError` naming the flags.
#[utoipa::path(
    delete,
    path = "/api/admin/strategies/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.delete_strategy_definition(&caller, &name).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/strategies/{name}/deprecate",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "Deprecated; no body."),
        super::openapi::Errors
    )
)]
async fn deprecate_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.set_strategy_deprecated(&caller, &name, true).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/strategies/{name}/reactivate",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "Active again; no body."),
        super::openapi::Errors
    )
)]
async fn reactivate_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.set_strategy_deprecated(&caller, &name, false).await?;
    Ok(StatusCode::OK)
}

/// 200 without a body, as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/tag-types/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    request_body(content = TagTypeUpdate, description = "The tag type's new description, icon and colour (a `name` is ignored).", content_type = "application/json"),
    responses(
        (status = 200, description = "Updated; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_tag_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
    JsonBody(tag_type): JsonBody<TagTypeUpdate>,
) -> HttpResult<StatusCode> {
    admin.update_tag_type(&caller, &name, &tag_type).await?;
    Ok(StatusCode::OK)
}

/// 200; 409 `ConflictError` while a flag has a tag of the type.
#[utoipa::path(
    delete,
    path = "/api/admin/tag-types/{name}",
    tag = "catalog",
    params(super::openapi::NamePath),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_tag_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<StatusCode> {
    admin.delete_tag_type(&caller, &name).await?;
    Ok(StatusCode::OK)
}

/// 200 `{valid: true, tagType}` when it could be created, as Unleash; 409 when taken.
#[utoipa::path(
    post,
    path = "/api/admin/tag-types/validate",
    tag = "catalog",
    request_body(content = TagType, description = "The tag type to check.", content_type = "application/json"),
    responses(
        (status = 200, description = "Valid.", body = ValidTagType),
        super::openapi::BodyErrors
    )
)]
async fn validate_tag_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(tag_type): JsonBody<TagType>,
) -> HttpResult<Json<ValidTagType>> {
    admin.validate_tag_type(&caller, &tag_type).await?;
    Ok(Json::ok(ValidTagType {
        valid: true,
        tag_type,
    }))
}

/// Unleash's `validateTagTypeSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ValidTagType {
    valid: bool,
    tag_type: TagType,
}
