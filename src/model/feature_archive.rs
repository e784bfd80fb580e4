//! The bodies of the operations on many features at once: archive, revive, delete, stale,
//! enable or disable in an environment.

use serde::{Deserialize, Serialize};

/// Features of one project to act on (`{features: [...]}`, Unleash's
/// `batchFeaturesSchema` and `bulkToggleFeaturesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureNames {
    /// The features' names.
    pub features: Vec<String>,
}

/// Mark features stale or not: `POST /api/admin/projects/{p}/stale` (Unleash's
/// `batchStaleSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeaturesStale {
    /// The features' names.
    pub features: Vec<String>,
    /// Stale or not.
    pub stale: bool,
}

/// What archiving some features would do (Unleash's `validateArchiveFeaturesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ArchiveCheck {
    /// Features of the batch that other features, not in the batch, depend on: those would
    /// be left with an archived parent.
    pub parents_with_child_features: Vec<String>,
    /// Whether a feature of the batch depends on another, so that dependencies are removed.
    pub has_deleted_dependencies: bool,
}
