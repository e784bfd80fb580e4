//! A feature's tags over HTTP.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::ToggleAdmin;
use crate::model::{ColoredTag, Tag};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_tags, add_tag))
        .routes(routes!(remove_tag))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Tags {
    version: u32,
    tags: Vec<ColoredTag>,
}

#[utoipa::path(
    get,
    path = "/api/admin/features/{featureName}/tags",
    tag = "feature-config",
    params(super::openapi::FeatureNamePath),
    responses(
        (status = 200, description = "The feature's tags.", body = Tags),
        super::openapi::Errors
    )
)]
async fn list_tags(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
) -> HttpResult<Json<Tags>> {
    let project = admin.feature_project(&caller, &feature).await?;
    let tags = admin.feature_tags(&caller, &project, &feature).await?;
    let types = admin.tag_types(&caller).await?;
    let tags = tags
        .into_iter()
        .map(|tag| ColoredTag {
            color: types
                .iter()
                .find(|t| t.name == tag.tag_type)
                .and_then(|t| t.color.clone().flatten()),
            value: tag.value,
            tag_type: tag.tag_type,
        })
        .collect();
    Ok(Json::ok(Tags { version: 1, tags }))
}

/// 201 with the tag, as Unleash.
#[utoipa::path(
    post,
    path = "/api/admin/features/{featureName}/tags",
    tag = "feature-config",
    params(super::openapi::FeatureNamePath),
    request_body(content = Tag, description = "The tag to add.", content_type = "application/json"),
    responses(
        (status = 201, description = "The tag added.", body = Tag),
        super::openapi::BodyErrors
    )
)]
async fn add_tag(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
    JsonBody(tag): JsonBody<Tag>,
) -> HttpResult<Json<Tag>> {
    let project = admin.feature_project(&caller, &feature).await?;
    admin
        .add_feature_tag(&caller, &project, &feature, &tag)
        .await?;
    Ok(Json::created(tag))
}

#[utoipa::path(
    delete,
    path = "/api/admin/features/{featureName}/tags/{type}/{value}",
    tag = "feature-config",
    params(super::openapi::TagPath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn remove_tag(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((feature, tag_type, value)): Params<(String, String, String)>,
) -> HttpResult<StatusCode> {
    let project = admin.feature_project(&caller, &feature).await?;
    let tag = Tag { value, tag_type };
    admin
        .remove_feature_tag(&caller, &project, &feature, &tag)
        .await?;
    Ok(StatusCode::OK)
}
