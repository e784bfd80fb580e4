//! Searching features across projects (`GET /api/admin/search/features`, Unleash's
//! `searchFeaturesSchema`).

use serde::{Deserialize, Serialize};

use super::Feature;

/// The most features one search page may hold; a larger `limit` is lowered to it.
pub const MAX_SEARCH_PAGE: usize = 1000;

/// A search's query parameters, as Unleash names them. Filters take Unleash's operator
/// form: `project=IS:p` or `IS_ANY_OF:p,q`; `type=IS:release` or `IS_ANY_OF:…`;
/// `state=IS:stale` or `IS:active`; `tag=INCLUDE:type:value` or `INCLUDE_ANY_OF:…`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "http", into_params(parameter_in = Query))]
pub struct FeatureSearchQuery {
    /// Text the feature's name, description or a tag value contains (case-insensitive).
    #[serde(default)]
    pub query: Option<String>,
    /// `IS:<project>` or `IS_ANY_OF:<p>,<q>`.
    #[serde(default)]
    pub project: Option<String>,
    /// `INCLUDE:<type>:<value>` or `INCLUDE_ANY_OF:<type>:<value>,…`.
    #[serde(default)]
    pub tag: Option<String>,
    /// `IS:<type>` or `IS_ANY_OF:<type>,…`.
    #[serde(default, rename = "type")]
    pub feature_type: Option<String>,
    /// `IS:stale` or `IS:active`.
    #[serde(default)]
    pub state: Option<String>,
    /// `name` (default), `createdAt`, `type` or `project`.
    #[serde(default)]
    pub sort_by: Option<String>,
    /// `asc` (default) or `desc`.
    #[serde(default)]
    pub sort_order: Option<String>,
    /// How many matches to skip (0 by default), a decimal integer.
    #[serde(default)]
    pub offset: Option<String>,
    /// How many to answer with at most (50 by default, at most [`MAX_SEARCH_PAGE`]).
    #[serde(default)]
    pub limit: Option<String>,
}

/// A page of search results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureSearch {
    /// The page, each feature with its environments and tags.
    pub features: Vec<Feature>,
    /// How many features match in all.
    pub total: usize,
}
