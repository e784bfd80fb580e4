//! The bodies of a feature's edits: replace (`PUT`), clone, name validation, and the
//! project's feature list in Unleash's `projectFeaturesSchema`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Feature;

/// A feature's new settings: `PUT /api/admin/projects/{p}/features/{f}` (Unleash's
/// `updateFeatureSchema`). It replaces: a field left out is reset to its default
/// (`type` `release`, no description, not stale, no impression data).
///
/// `name` and `project`, when given, must be the feature's own; `environments` and `variants`
/// are accepted only as `null` or empty (the Terraform provider sends them) and change nothing;
/// `archived` may only be `false` (archive with `DELETE`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureUpdate {
    /// The feature's name, if given: must be the feature's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The project, if given: must be the feature's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The toggle type; `release` when absent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub feature_type: Option<String>,
    /// The description; none when absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it is stale; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Only `false` is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// Whether clients emit impression events for it; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impression_data: Option<bool>,
    /// Accepted as `null` or `[]` only; environments are changed through their own routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Vec<Object>>))]
    pub environments: Option<Value>,
    /// Accepted as `null` or `[]` only; variants are changed per environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Vec<Object>>))]
    pub variants: Option<Value>,
    /// Ignored, as Unleash ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>))]
    pub created_at: Option<Value>,
}

/// Clone a feature: `POST /api/admin/projects/{p}/features/{f}/clone` (Unleash's
/// `featureCloneSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureClone {
    /// The new feature's name.
    pub name: String,
    /// Whether `flexibleRollout` strategies' `groupId` becomes the new name (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_group_id: Option<bool>,
}

/// A name to check: `POST /api/admin/features/validate`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureName {
    /// The name.
    pub name: String,
    /// The project it would be created in (its naming pattern applies).
    #[serde(default, rename = "projectId", skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A project's features (`GET /api/admin/projects/{p}/features`, Unleash's
/// `projectFeaturesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectFeatures {
    /// The schema version, always 2.
    pub version: u32,
    /// The project's features that are not archived, by name, each with its environments.
    pub features: Vec<Feature>,
}
