//! A feature in one environment over HTTP: its strategies, and turning it on and off.

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, JsonValue, LaterBody, Params, decode_value};
use crate::ToggleAdmin;
use crate::model::{FeatureStrategy, StrategySortOrder};
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
