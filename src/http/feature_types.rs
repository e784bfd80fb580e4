//! Feature types over HTTP: the list, and a type's lifetime.

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::model::{FeatureType, FeatureTypeLifetime, FeatureTypes, Permission};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list_feature_types))
        .routes(routes!(set_lifetime))
}

/// `{version: 1, types}`, in Unleash's order.
#[utoipa::path(
    get,
    path = "/api/admin/feature-types",
    tag = "catalog",
    responses(
        (status = 200, description = "Every feature type.", body = FeatureTypes),
        super::openapi::Errors
    )
)]
async fn list_feature_types(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<FeatureTypes>> {
    Ok(Json::ok(FeatureTypes {
        version: 1,
        types: admin.feature_types(&caller).await?,
    }))
}

/// 200 with the type, as Unleash.
#[utoipa::path(
    put,
    path = "/api/admin/feature-types/{id}/lifetime",
    tag = "catalog",
    params(super::openapi::FeatureTypePath),
    request_body(content = FeatureTypeLifetime, description = "The lifetime in days; 0 or null for never.", content_type = "application/json"),
    responses(
        (status = 200, description = "The feature type with its new lifetime.", body = FeatureType),
        super::openapi::BodyErrors
    )
)]
async fn set_lifetime(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(id): Params<String>,
    body: LaterBody,
) -> HttpResult<Json<FeatureType>> {
    let permit = admin
        .permit(&caller, &[Need::root(Permission::Admin)])
        .await?;
    let lifetime: FeatureTypeLifetime = body.object().await?;
    Ok(Json::ok(
        admin
            .set_feature_type_lifetime(permit, &id, &lifetime)
            .await?,
    ))
}
