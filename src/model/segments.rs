//! Segments: named, reusable constraint sets that strategies attach by id.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Constraint;

/// A segment: a named set of constraints that strategies attach by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// The segment's id, handed out in creation order starting at 1.
    pub id: i64,
    /// Its name; exports refer to segments by name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The project it belongs to; `None` for a global segment usable in every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The constraints, all of which must hold.
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    /// When it was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
    /// Who created it, as the events name them (absent for segments created before this was
    /// kept, and for imported ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// A segment to create: `POST /api/admin/segments`. `name` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewSegment {
    /// 1–100 characters.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The project it belongs to; `None` for a global segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The constraints.
    #[serde(default)]
    pub constraints: Vec<Constraint>,
}

/// A flag's strategy that uses a segment or a context field, as Unleash lists it
/// (`GET /api/admin/segments/{id}/strategies`, `GET /api/admin/context/{name}/strategies`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StrategyUse {
    /// The strategy's id.
    pub id: String,
    /// The flag's project.
    pub project_id: String,
    /// The flag.
    pub feature_name: String,
    /// The strategy's name (`flexibleRollout`, …).
    pub strategy_name: String,
    /// The environment the strategy is in.
    pub environment: String,
}

/// Segments to attach to a strategy: `POST /api/admin/segments/strategies`. The strategy's
/// segments become exactly `segment_ids`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StrategySegments {
    /// The flag's project.
    pub project_id: String,
    /// The strategy's id.
    pub strategy_id: String,
    /// The environment the strategy is in.
    pub environment_id: String,
    /// The segments the strategy uses from now on.
    pub segment_ids: Vec<i64>,
}
