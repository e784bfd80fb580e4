//! Searching features across projects over HTTP.

use axum::extract::State;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, QueryParams};
use crate::ToggleAdmin;
use crate::model::{FeatureSearch, FeatureSearchQuery};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(search_features))
}

/// Search features: 200 `{features, total}` (Unleash's `searchFeaturesSchema`); a malformed
/// filter, sort or page parameter is a 400 naming it.
#[utoipa::path(
    get,
    path = "/api/admin/search/features",
    tag = "features",
    params(FeatureSearchQuery),
    responses(
        (status = 200, description = "A page of the matching features, with how many match.", body = FeatureSearch),
        super::openapi::Errors
    )
)]
async fn search_features(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(query): QueryParams<FeatureSearchQuery>,
) -> HttpResult<Json<FeatureSearch>> {
    Ok(Json::ok(admin.search_features(&caller, &query).await?))
}
