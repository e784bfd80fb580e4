//! `…/features/{featureName}/environments/{environment}/variants`: PATCH (the first operation
//! of the specification), PUT and GET; `…/features/{featureName}/variants-batch`, the same
//! variants for several environments; and `…/features/{featureName}/variants`, Unleash
//! 6.10.1's feature-level GET, PATCH and PUT over every environment of the feature.

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, KeySecret, LaterBody, Params};
use crate::ToggleAdmin;
use crate::model::{FeatureVariants, VariantsOnEnvironments};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// `{projectId}`, `{featureName}`, `{environment}`.
type VariantsPath = Params<(String, String, String)>;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(read, patch, replace))
        .routes(routes!(replace_on_environments))
        .routes(routes!(read_feature, patch_feature, replace_feature))
}

/// 200 `{"version":1,"variants":[…]}`: the list of the first of the project's environments.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/variants",
    tag = "variants",
    params(super::openapi::FeaturePath),
    responses(
        (status = 200, description = "The feature's variants: those of the first of its project's environments in sort order.", body = FeatureVariants),
        super::openapi::Errors
    )
)]
async fn read_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
) -> HttpResult<Json<FeatureVariants>> {
    Ok(Json::ok(
        admin.feature_variants(&caller, &project, &feature).await?,
    ))
}

/// 200 `{"version":1,"variants":[…]}`: the patch applied to every environment's own list, in
/// one commit; the answer is the first environment's result.
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/variants",
    tag = "variants",
    params(super::openapi::FeaturePath),
    request_body(description = "A JSON Patch (RFC 6902), applied to the variant array of each of the feature's environments.", content((Vec<crate::model::PatchOperation> = "application/json"), (Vec<crate::model::PatchOperation> = "application/json-patch+json"))),
    responses(
        (status = 200, description = "The variants of the first environment after the patch.", body = FeatureVariants),
        super::openapi::BodyErrors
    )
)]
async fn patch_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<Json<FeatureVariants>> {
    let permit = admin.permit_feature_variants(&caller, &project).await?;
    let patch = crate::variants::decode_patch(&body.patch().await?)?;
    Ok(Json::ok(
        admin
            .patch_feature_variants(permit, &project, &feature, &patch)
            .await?,
    ))
}

/// 200 `{"version":1,"variants":[…]}`: the list as written to every environment.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/variants",
    tag = "variants",
    params(super::openapi::FeaturePath),
    request_body(content = Vec<crate::model::Variant>, description = "The new variants of every environment of the feature.", content_type = "application/json"),
    responses(
        (status = 200, description = "The variants written.", body = FeatureVariants),
        super::openapi::BodyErrors
    )
)]
async fn replace_feature(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<Json<FeatureVariants>> {
    let permit = admin.permit_feature_variants(&caller, &project).await?;
    let body = body.value().await?;
    Ok(Json::ok(
        admin
            .set_feature_variants_json(permit, &project, &feature, &body)
            .await?,
    ))
}

/// 200 `{"version":1,"variants":[…]}`: the variants as written to every environment named.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/variants-batch",
    tag = "variants",
    params(super::openapi::FeaturePath),
    request_body(content = VariantsOnEnvironments, description = "The variants, and the environments to give them.", content_type = "application/json"),
    responses(
        (status = 200, description = "The variants written.", body = FeatureVariants),
        super::openapi::BodyErrors
    )
)]
async fn replace_on_environments(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature)): Params<(String, String)>,
    body: LaterBody,
) -> HttpResult<Json<FeatureVariants>> {
    let permit = admin.permit_variants_batch(&caller, &project).await?;
    let body: VariantsOnEnvironments = body.object().await?;
    Ok(Json::ok(
        admin
            .set_variants_on_environments(permit, &project, &feature, &body)
            .await?,
    ))
}

/// 200 `{"version":1,"variants":[…]}`; the body is decoded strictly by
/// [`decode_patch`](crate::variants::decode_patch).
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "variants",
    params(super::openapi::FeatureEnvPath),
    request_body(description = "A JSON Patch (RFC 6902) of the environment's variant array.", content((Vec<crate::model::PatchOperation> = "application/json"), (Vec<crate::model::PatchOperation> = "application/json-patch+json"))),
    responses(
        (status = 200, description = "The environment's variants after the patch.", body = FeatureVariants),
        super::openapi::BodyErrors
    )
)]
async fn patch(
    State(admin): State<ToggleAdmin>,
    KeySecret(secret): KeySecret,
    Params((project, feature, environment)): VariantsPath,
    body: LaterBody,
) -> HttpResult<Json<FeatureVariants>> {
    // Permission before the body's shape, as Unleash checks; the decision then serves the
    // change's first attempt.
    let permit = admin
        .permit_variants_change(secret.as_deref(), &project, &environment)
        .await?;
    let body = body.patch().await?;
    let patch = crate::variants::decode_patch(&body)?;
    let result = admin
        .patch_variants(permit, &project, &feature, &environment, &patch)
        .await?;
    Ok(Json::ok(result))
}

#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "variants",
    params(super::openapi::FeatureEnvPath),
    request_body(content = Vec<crate::model::Variant>, description = "The new variants.", content_type = "application/json"),
    responses(
        (status = 200, description = "The environment's variants after the change.", body = FeatureVariants),
        super::openapi::BodyErrors
    )
)]
async fn replace(
    State(admin): State<ToggleAdmin>,
    KeySecret(secret): KeySecret,
    Params((project, feature, environment)): VariantsPath,
    body: LaterBody,
) -> HttpResult<Json<FeatureVariants>> {
    let permit = admin
        .permit_variants_change(secret.as_deref(), &project, &environment)
        .await?;
    let body = body.value().await?;
    let result = admin
        .set_variants_json(permit, &project, &feature, &environment, &body)
        .await?;
    Ok(Json::ok(result))
}

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "variants",
    params(super::openapi::FeatureEnvPath),
    responses(
        (status = 200, description = "The environment's variants.", body = FeatureVariants),
        super::openapi::Errors
    )
)]
async fn read(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, feature, environment)): VariantsPath,
) -> HttpResult<Json<FeatureVariants>> {
    let result = admin
        .variants(&caller, &project, &feature, &environment)
        .await?;
    Ok(Json::ok(result))
}
