//! Feature links: web addresses attached to a flag (its issue, its dashboard).

use serde::{Deserialize, Serialize};

/// A link of a feature, as its `links` list shows it: `{id, url, title}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureLink {
    /// The link's id, given when it was added.
    pub id: String,
    /// The address, `http` or `https`.
    pub url: String,
    /// What it is; `null` when none was given.
    pub title: Option<String>,
}

/// A link to add, or a link's new address and title: Unleash's `featureLinkSchema`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct NewFeatureLink {
    /// The address. Required: `http://…` or `https://…`; without a scheme `https://` is
    /// assumed, as Unleash does.
    pub url: String,
    /// What it is; optional and nullable.
    #[serde(default)]
    pub title: Option<String>,
}
