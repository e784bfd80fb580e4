//! A feature's configuration beyond variants: strategies per environment, on/off,
//! dependencies, tags.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use serde_json::{Map, Value};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, JsonValue, LaterBody, Params, decode_value};
use crate::ToggleAdmin;
use crate::model::{FeatureStrategy, ParentDependency, StrategySortOrder, Tag};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_strategies, add_strategy))
        .routes(routes!(
            get_strategy,
            update_strategy,
            patch_strategy,
            remove_strategy
        ))
        .routes(routes!(set_strategy_sort_order))
        .routes(routes!(enable))
        .routes(routes!(disable))
        .routes(routes!(list_dependencies, add_dependency))
        .routes(routes!(remove_dependency))
        .routes(routes!(list_tags, add_tag))
        .routes(routes!(remove_tag))
}

type EnvPath = Params<(String, String, String)>;

/// A strategy as Unleash's strategy routes answer it: without `featureName`, which the path
/// names already.
fn public(mut strategy: FeatureStrategy) -> FeatureStrategy {
    strategy.feature_name = None;
    strategy
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "feature-config",
    params(super::openapi::FeatureEnvPath),
    responses(
        (status = 200, description = "The feature's strategies in the environment.", body = Vec<FeatureStrategy>),
        super::openapi::Errors
    )
)]
async fn list_strategies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): EnvPath,
) -> HttpResult<Json<Vec<FeatureStrategy>>> {
    let strategies = admin
        .strategies(&caller, &project, &feature, &environment)
        .await?;
    Ok(Json::ok(strategies.into_iter().map(public).collect()))
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "feature-config",
    params(super::openapi::FeatureEnvPath),
    request_body(content = FeatureStrategy, description = "The strategy to add.", content_type = "application/json"),
    responses(
        (status = 200, description = "The strategy added, with its id.", body = FeatureStrategy),
        super::openapi::BodyErrors
    )
)]
async fn add_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): EnvPath,
    JsonBody(strategy): JsonBody<Map<String, Value>>,
) -> HttpResult<Json<FeatureStrategy>> {
    let added = admin
        .add_strategy_json(
            &caller,
            &project,
            &feature,
            &environment,
            &Value::Object(strategy),
        )
        .await?;
    Ok(Json::ok(public(added)))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "feature-config",
    params(super::openapi::StrategyPath),
    responses(
        (status = 200, description = "The strategy.", body = FeatureStrategy),
        super::openapi::Errors
    )
)]
async fn get_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment, id)): Params<(String, String, String, String)>,
) -> HttpResult<Json<FeatureStrategy>> {
    let strategy = admin
        .strategy(&caller, &project, &feature, &environment, &id)
        .await?;
    Ok(Json::ok(public(strategy)))
}

/// 200 with no body, as Unleash; ids that are not there are ignored.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order",
    tag = "feature-config",
    params(super::openapi::FeatureEnvPath),
    request_body(content = Vec<StrategySortOrder>, description = "Strategies with their new sort order.", content_type = "application/json"),
    responses(
        (status = 200, description = "Reordered; no body."),
        super::openapi::BodyErrors
    )
)]
async fn set_strategy_sort_order(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): EnvPath,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let orders: Vec<StrategySortOrder> = decode_value(body)?;
    admin
        .set_strategy_sort_order(&caller, &project, &feature, &environment, &orders)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "feature-config",
    params(super::openapi::StrategyPath),
    request_body(content = FeatureStrategy, description = "The fields to change: absent `name`, `title`, `disabled`, `parameters`, `segments` are kept, absent `constraints` and `variants` emptied, `sortOrder` ignored.", content_type = "application/json"),
    responses(
        (status = 200, description = "The strategy updated.", body = FeatureStrategy),
        super::openapi::BodyErrors
    )
)]
async fn update_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment, id)): Params<(String, String, String, String)>,
    JsonBody(update): JsonBody<Map<String, Value>>,
) -> HttpResult<Json<FeatureStrategy>> {
    let updated = admin
        .update_strategy_json(
            &caller,
            &project,
            &feature,
            &environment,
            &id,
            &Value::Object(update),
        )
        .await?;
    Ok(Json::ok(public(updated)))
}

/// A JSON Patch of the strategy as `GET` answers it, applied strictly (the rules of the
/// variants PATCH) and then saved as a PUT of the result, as Unleash does.
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "feature-config",
    params(super::openapi::StrategyPath),
    request_body(description = "A JSON Patch (RFC 6902) of the strategy.", content((Vec<crate::model::PatchOperation> = "application/json"), (Vec<crate::model::PatchOperation> = "application/json-patch+json"))),
    responses(
        (status = 200, description = "The strategy updated.", body = FeatureStrategy),
        super::openapi::BodyErrors
    )
)]
async fn patch_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment, id)): Params<(String, String, String, String)>,
    body: LaterBody,
) -> HttpResult<Json<FeatureStrategy>> {
    let body = body.patch().await?;
    let patch = crate::variants::decode_patch(&body)?;
    let current = admin
        .strategy(&caller, &project, &feature, &environment, &id)
        .await?;
    let document = serde_json::to_value(public(current)).map_err(|e| {
        crate::Error::internal("a stored strategy cannot be encoded", Some(Box::new(e)))
    })?;
    let patched = crate::variants::apply_patch_to(document, &patch)?;
    let updated = admin
        .update_strategy_json(&caller, &project, &feature, &environment, &id, &patched)
        .await?;
    Ok(Json::ok(public(updated)))
}

#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "feature-config",
    params(super::openapi::StrategyPath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn remove_strategy(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment, id)): Params<(String, String, String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .remove_strategy(&caller, &project, &feature, &environment, &id)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
    tag = "feature-config",
    params(super::openapi::FeatureEnvPath),
    responses(
        (status = 200, description = "Enabled; no body."),
        super::openapi::Errors
    )
)]
async fn enable(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): EnvPath,
) -> HttpResult<StatusCode> {
    admin
        .set_feature_enabled(&caller, &project, &feature, &environment, true)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
    tag = "feature-config",
    params(super::openapi::FeatureEnvPath),
    responses(
        (status = 200, description = "Disabled; no body."),
        super::openapi::Errors
    )
)]
async fn disable(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): EnvPath,
) -> HttpResult<StatusCode> {
    admin
        .set_feature_enabled(&caller, &project, &feature, &environment, false)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The feature's parents.", body = Vec<ParentDependency>),
        super::openapi::Errors
    )
)]
async fn list_dependencies(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<Vec<ParentDependency>>> {
    Ok(Json::ok(
        admin
            .feature_dependencies(&caller, &project, &feature)
            .await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "feature-config",
    params(super::openapi::FeaturePath),
    request_body(content = ParentDependency, description = "The parent to add.", content_type = "application/json"),
    responses(
        (status = 200, description = "Added; no body."),
        super::openapi::BodyErrors
    )
)]
async fn add_dependency(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    JsonBody(dependency): JsonBody<ParentDependency>,
) -> HttpResult<StatusCode> {
    admin
        .add_feature_dependency(&caller, &project, &feature, &dependency)
        .await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies/{parent}",
    tag = "feature-config",
    params(super::openapi::DependencyPath),
    responses(
        (status = 200, description = "Removed; no body."),
        super::openapi::Errors
    )
)]
async fn remove_dependency(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, parent)): Params<(String, String, String)>,
) -> HttpResult<StatusCode> {
    admin
        .remove_feature_dependency(&caller, &project, &feature, &parent)
        .await?;
    Ok(StatusCode::OK)
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Tags {
    version: u32,
    tags: Vec<ColoredTag>,
}

/// A feature's tag as Unleash lists it: with its tag type's colour (`null` when the type
/// has none).
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct ColoredTag {
    value: String,
    #[serde(rename = "type")]
    tag_type: String,
    color: Option<String>,
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
