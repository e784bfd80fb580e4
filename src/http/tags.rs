//! Tags over HTTP: the tags that exist, a feature's tags, and tag changes of one feature or
//! many features of a project.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{
    BulkTagChanges, ColoredTag, Permission, Tag, TagChanges, TagList, TagWithVersion,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_tags, add_tag, update_tags))
        .routes(routes!(remove_tag))
        .routes(routes!(all_tags, create_tag))
        .routes(routes!(tags_of_type))
        .routes(routes!(read_tag, delete_tag))
        .routes(routes!(update_project_tags))
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
    Ok(Json::ok(colored(&admin, &caller, tags).await?))
}

/// `tags` with their types' colours, as Unleash lists a feature's tags.
async fn colored(
    admin: &ToggleAdmin,
    caller: &crate::auth::Caller,
    tags: Vec<Tag>,
) -> crate::Result<Tags> {
    let types = admin.tag_types(caller).await?;
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
    Ok(Tags { version: 1, tags })
}

/// Add and remove tags of a feature in one change: 200 with the feature's tags after it,
/// as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/features/{featureName}/tags",
    tag = "feature-config",
    params(super::openapi::FeatureNamePath),
    request_body(content = TagChanges, description = "The tags to add and to remove.", content_type = "application/json"),
    responses(
        (status = 200, description = "The feature's tags after the change.", body = Tags),
        super::openapi::BodyErrors
    )
)]
async fn update_tags(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
    body: LaterBody,
) -> HttpResult<Json<Tags>> {
    let project = admin.feature_project(&caller, &feature).await?;
    let permit = admin.permit_feature_update(&caller, &project).await?;
    let changes: TagChanges = body.object().await?;
    let tags = admin
        .update_feature_tags(permit, &project, &feature, &changes)
        .await?;
    Ok(Json::ok(colored(&admin, &caller, tags).await?))
}

/// The same tag changes for many features of a project: 200 with no body, as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/tags",
    tag = "feature-config",
    params(super::openapi::ProjectPath),
    request_body(content = BulkTagChanges, description = "The features, and the tags to add to and remove from each.", content_type = "application/json"),
    responses(
        (status = 200, description = "Changed; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_project_tags(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin.permit_feature_update(&caller, &project).await?;
    let changes: BulkTagChanges = body.object().await?;
    admin
        .update_project_tags(permit, &project, &changes)
        .await?;
    Ok(StatusCode::OK)
}

/// Every tag that exists: `{version: 1, tags}`.
#[utoipa::path(
    get,
    path = "/api/admin/tags",
    tag = "feature-config",
    responses(
        (status = 200, description = "Every tag, by type and value.", body = TagList),
        super::openapi::Errors
    )
)]
async fn all_tags(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<TagList>> {
    Ok(Json::ok(TagList {
        version: 1,
        tags: admin.tags(&caller).await?,
    }))
}

/// 201 `{version: 1, tag}`, as Unleash; a tag of an unknown type is a 400 naming it.
#[utoipa::path(
    post,
    path = "/api/admin/tags",
    tag = "feature-config",
    request_body(content = Tag, description = "The tag to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The tag created.", body = TagWithVersion),
        super::openapi::BodyErrors
    )
)]
async fn create_tag(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    body: LaterBody,
) -> HttpResult<Json<TagWithVersion>> {
    let permit = admin
        .permit(&caller, &[Need::root(Permission::UpdateFeature)])
        .await?;
    let tag: Tag = body.object().await?;
    let tag = admin.create_tag(permit, &tag).await?;
    Ok(Json::created(TagWithVersion { version: 1, tag }))
}

/// The tags of one type: `{version: 1, tags}` (none for an unknown type, as Unleash).
#[utoipa::path(
    get,
    path = "/api/admin/tags/{type}",
    tag = "feature-config",
    params(super::openapi::TagTypePath),
    responses(
        (status = 200, description = "The type's tags, by value.", body = TagList),
        super::openapi::Errors
    )
)]
async fn tags_of_type(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(tag_type): Params<String>,
) -> HttpResult<Json<TagList>> {
    Ok(Json::ok(TagList {
        version: 1,
        tags: admin.tags_of_type(&caller, &tag_type).await?,
    }))
}

/// One tag: `{version: 1, tag}`; 404 when there is none.
#[utoipa::path(
    get,
    path = "/api/admin/tags/{type}/{value}",
    tag = "feature-config",
    params(super::openapi::TagValuePath),
    responses(
        (status = 200, description = "The tag.", body = TagWithVersion),
        super::openapi::Errors
    )
)]
async fn read_tag(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((tag_type, value)): Params<(String, String)>,
) -> HttpResult<Json<TagWithVersion>> {
    Ok(Json::ok(TagWithVersion {
        version: 1,
        tag: admin.tag(&caller, &tag_type, &value).await?,
    }))
}

/// Delete a tag, taking it off every feature: 200 with no body, whether or not it existed,
/// as Unleash.
#[utoipa::path(
    delete,
    path = "/api/admin/tags/{type}/{value}",
    tag = "feature-config",
    params(super::openapi::TagValuePath),
    responses(
        (status = 200, description = "Deleted; no body."),
        super::openapi::Errors
    )
)]
async fn delete_tag(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((tag_type, value)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    admin.delete_tag(&caller, &tag_type, &value).await?;
    Ok(StatusCode::OK)
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
