//! A project's features as a list a person pages through (what
//! [`ToggleAdmin::feature_list`](crate::ToggleAdmin::feature_list) answers): searched by name
//! or description, one page at a time, each feature with whether it is on in each of the
//! project's environments.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The most features one page may hold; a larger `limit` is lowered to it.
pub const MAX_FEATURE_PAGE: usize = 500;

/// Which of a project's features
/// [`ToggleAdmin::feature_list`](crate::ToggleAdmin::feature_list) answers with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureListQuery {
    /// Only features whose name or description contains this text, compared without regard to
    /// case; all of them when `None` or blank.
    pub search: Option<String>,
    /// How many matching features to skip (by name).
    pub offset: usize,
    /// How many to answer with at most (at most [`MAX_FEATURE_PAGE`]).
    pub limit: usize,
}

/// One page of a project's features.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureList {
    /// The project's environments, in the project's order: the columns of `features`'
    /// `enabled`.
    pub environments: Vec<String>,
    /// How many features match in all (the page holds at most `limit` of them).
    pub total: usize,
    /// The page, by name.
    pub features: Vec<FeatureSummary>,
}

/// A feature as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureSummary {
    /// Its name.
    pub name: String,
    /// Its type (`release`, `experiment`, …).
    pub feature_type: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Whether it is on, per environment of [`FeatureList::environments`], in that order.
    pub enabled: Vec<bool>,
}
