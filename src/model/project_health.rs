//! How healthy a project's flags are: `GET /api/admin/projects/{projectId}/health-report`
//! (Unleash's `healthReportSchema`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Feature, FeatureNaming, ProjectEnvironment};

/// A project's health report (Unleash's `healthReportSchema`, deprecated there but read by
/// scripts that look for stale flags).
///
/// Of the project's flags that are not archived, `staleCount` are marked stale,
/// `activeCount` are not, and `potentiallyStaleCount` are not marked stale but older than
/// their feature type's lifetime (`GET /api/admin/feature-types`; a type without a lifetime
/// never makes a flag potentially stale). `health` is Unleash's rating: 100 less the share
/// of stale flags and the share of potentially stale flags, in whole percent (rounded as
/// Unleash rounds, half up); 100 for a project without flags. So 1 stale and 1 potentially
/// stale flag of 4 make a health of 50.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectHealthReport {
    /// Always 1.
    pub version: u32,
    /// The project's display name.
    pub name: String,
    /// Its description; `null` when none.
    pub description: Option<String>,
    /// Always `open`: every key with the permissions may change the project.
    pub mode: String,
    /// Always `default`.
    pub default_stickiness: String,
    /// The most flags it may hold; `null` when unlimited.
    pub feature_limit: Option<u32>,
    /// The naming pattern new flag names must follow, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_naming: Option<FeatureNaming>,
    /// How many users hold a role in it, directly or through a group.
    pub members: u64,
    /// Its health rating, 0–100 (see the type's docs), computed when read.
    pub health: u32,
    /// Its environments, each with its default strategy when one is set.
    pub environments: Vec<ProjectEnvironment>,
    /// Its flags that are not archived, by name, as `GET
    /// /api/admin/projects/{projectId}/features` shows them, but each environment with its
    /// switch and counts only (no strategies or variants), as Unleash's overview lists them.
    pub features: Vec<Feature>,
    /// When it was created, if known.
    #[serde(
        default,
        with = "super::timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub created_at: Option<DateTime<Utc>>,
    /// Always false (favourites are a person's, and keys have none).
    pub favorite: bool,
    /// How many flags are not marked stale but older than their type's lifetime.
    pub potentially_stale_count: u64,
    /// How many flags are not marked stale (potentially stale ones included).
    pub active_count: u64,
    /// How many flags are marked stale.
    pub stale_count: u64,
}
