//! Client metrics as Unleash lists them: a feature's evaluations per application,
//! environment and hour.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One feature's evaluations by one application in one environment during one hour, in
/// Unleash's `featureEnvironmentMetricsSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentMetrics {
    /// The feature.
    pub feature_name: String,
    /// The application that evaluated it.
    pub app_name: String,
    /// The environment of the key the application reported with.
    pub environment: String,
    /// The start of the hour.
    pub timestamp: DateTime<Utc>,
    /// Evaluations to enabled.
    pub yes: u64,
    /// Evaluations to disabled.
    pub no: u64,
    /// How often each variant was chosen.
    pub variants: BTreeMap<String, u64>,
}

/// Unleash's `featureUsageSchema`: a feature's last hour of usage and the applications that
/// reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureUsage {
    /// Always 1.
    pub version: u32,
    /// Always `stable`.
    pub maturity: String,
    /// The feature.
    pub feature_name: String,
    /// The counts of the last hour, per application and environment.
    pub last_hour_usage: Vec<FeatureEnvironmentMetrics>,
    /// Every application that reported the feature in the last 48 hours, by name.
    pub seen_applications: Vec<String>,
}

/// Unleash's `featureMetricsSchema`: a feature's raw metrics
/// (`GET /api/admin/client-metrics/features/{name}/raw`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureMetrics {
    /// Always 1.
    pub version: u32,
    /// Always `stable`.
    pub maturity: String,
    /// The counts per application, environment and hour of the last 48 hours, oldest hour
    /// first.
    pub data: Vec<FeatureEnvironmentMetrics>,
}
