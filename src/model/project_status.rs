//! A project at a glance: `GET /api/admin/projects/{projectId}/status` (Unleash's
//! `projectStatusSchema`): its recent activity, what it holds, its health and where its flags
//! are in their lifecycle.

use serde::{Deserialize, Serialize};

/// Unleash's `projectStatusSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectStatus {
    /// How many events the project recorded each day of the last year, on the days it
    /// recorded any, oldest first.
    pub activity_count_by_date: Vec<ActivityCount>,
    /// What the project holds.
    pub resources: ProjectResources,
    /// Its health rating now.
    pub health: ProjectHealthNow,
    /// Where its flags are in their lifecycle.
    pub lifecycle_summary: LifecycleSummary,
    /// Its flags that need cleaning up.
    pub stale_flags: StaleFlags,
}

/// The events of one day (`{date, count}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ActivityCount {
    /// The day, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// How many events the project recorded that day.
    pub count: u64,
}

/// What a project holds (`resources`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectResources {
    /// The client and frontend keys naming the project (keys for every project not
    /// counted, as in Unleash).
    pub api_tokens: u64,
    /// The users holding a role in it, directly or through a group.
    pub members: u64,
    /// The segments that belong to it.
    pub segments: u64,
}

/// A project's health now (`health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProjectHealthNow {
    /// Its health rating, 0–100, as its health report computes it
    /// ([`ProjectHealthReport`](super::ProjectHealthReport)).
    pub current: u32,
}

/// How many flags are stale or potentially stale (`staleFlags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StaleFlags {
    /// The flags (not archived) marked stale or older than their feature type's lifetime.
    pub total: u64,
}

/// Where a project's flags are in their lifecycle (`lifecycleSummary`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LifecycleSummary {
    /// Flags in `initial`.
    pub initial: StageSummary,
    /// Flags in `pre-live`.
    pub pre_live: StageSummary,
    /// Flags in `live`.
    pub live: StageSummary,
    /// Flags in `completed`.
    pub completed: StageSummary,
    /// Archived flags.
    pub archived: ArchivedSummary,
}

/// One lifecycle stage of a project's flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StageSummary {
    /// How many days the project's flags (archived ones included) that left the stage spent
    /// in it, on average, in whole days; `null` when none left it.
    pub average_days: Option<f64>,
    /// How many of its flags that are not archived are in the stage now.
    pub current_flags: u64,
}

/// A project's archived flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchivedSummary {
    /// How many of its flags are archived.
    pub current_flags: u64,
    /// How many of those were archived in the last 30 days.
    pub last30_days: u64,
}
