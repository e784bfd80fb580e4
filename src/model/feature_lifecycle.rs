//! A feature's lifecycle: the stages it went through, from creation to archive.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A lifecycle stage, in the order a feature goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum LifecycleStage {
    /// Created, not yet on anywhere.
    Initial,
    /// On in an environment that is not of type `production`.
    PreLive,
    /// On in an environment of type `production`.
    Live,
    /// Marked completed: its work is done, kept or discarded.
    Completed,
    /// Archived.
    Archived,
}

impl LifecycleStage {
    /// Every stage, in order.
    pub const ALL: [LifecycleStage; 5] = [
        LifecycleStage::Initial,
        LifecycleStage::PreLive,
        LifecycleStage::Live,
        LifecycleStage::Completed,
        LifecycleStage::Archived,
    ];
}

/// What became of a completed feature: Unleash's `kept` or `discarded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CompletionStatus {
    /// The feature stays: its code path is kept.
    Kept,
    /// The feature goes: its code path is removed.
    Discarded,
}

/// A stage a feature entered, and when: an item of Unleash's `featureLifecycleSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LifecycleEntry {
    /// The stage.
    pub stage: LifecycleStage,
    /// For `completed`: `kept` or `discarded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<CompletionStatus>,
    /// When the feature entered the stage.
    #[serde(serialize_with = "super::millis_timestamp::serialize")]
    pub entered_stage_at: DateTime<Utc>,
}

/// Marking a feature completed: Unleash's `featureLifecycleCompletedSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LifecycleCompletion {
    /// `kept` or `discarded`.
    pub status: CompletionStatus,
    /// What it was kept as (a variant's name, say); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_value: Option<String>,
}

/// How many features are in each stage now: Unleash's `featureLifecycleCountSchema`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LifecycleCount {
    /// In `initial`.
    pub initial: u64,
    /// In `pre-live`.
    pub pre_live: u64,
    /// In `live`.
    pub live: u64,
    /// In `completed`.
    pub completed: u64,
    /// In `archived`.
    pub archived: u64,
}
