//! Feature types: Unleash's five built-in kinds of flag, with the lifetime after which a flag
//! of the kind is potentially stale.

use serde::{Deserialize, Serialize};

/// A feature type: Unleash's `featureTypeSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureType {
    /// The type's id, as a feature's `type` names it (`release`, `kill-switch`).
    pub id: String,
    /// Its display name.
    pub name: String,
    /// What flags of this type are for.
    pub description: String,
    /// Days after which a flag of this type is potentially stale; `null`: never.
    pub lifetime_days: Option<u32>,
}

/// Every feature type: Unleash's `featureTypesSchema`, `{version: 1, types}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureTypes {
    /// The schema version, always 1.
    pub version: u32,
    /// The types, in Unleash's order.
    pub types: Vec<FeatureType>,
}

/// A feature type's new lifetime: Unleash's `updateFeatureTypeLifetimeSchema`.
/// `lifetimeDays` is required; `0` and `null` both mean "never stale".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureTypeLifetime {
    /// Days, `0..=2147483647`, or `null`. Absent (the outer `None`) is refused.
    #[serde(default, deserialize_with = "super::double_option")]
    #[cfg_attr(feature = "http", schema(value_type = Option<i64>))]
    pub lifetime_days: Option<Option<i64>>,
}
