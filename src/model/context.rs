//! Context fields: the names a strategy's constraints test, with their legal values.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A context field: only `name` is required.
///
/// Server rules on creation: name URL-friendly, 1–100 characters; description at most 250;
/// legal values 1–100 characters and unique by value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContextField {
    /// The name of the context field.
    pub name: String,
    /// Description; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// Whether the field can be used for stickiness calculation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickiness: Option<bool>,
    /// Sort position; also the tiebreaker for alphabetical sorting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    /// Creation time; nullable.
    #[serde(
        default,
        with = "super::nullable_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<Option<DateTime<Utc>>>,
    /// Usage count in features; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub used_in_features: Option<Option<i64>>,
    /// Usage count in projects; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub used_in_projects: Option<Option<i64>>,
    /// The allowed values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_values: Option<Vec<LegalValue>>,
    /// Keys this version does not know (e.g. `project`, which Unleash 6.10.1 rejects), kept so
    /// that round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// An allowed value of a context field: `value` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct LegalValue {
    /// The value, 1–100 characters.
    pub value: String,
    /// What the value means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A context field's new settings: `PUT /api/admin/context/{name}` (Unleash's
/// `updateContextFieldSchema`). What is absent stays as it was; `legalValues`, when given,
/// replaces the list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextFieldUpdate {
    /// The field's name, which cannot change: when given it must be the path's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description, at most 250 characters; `null` clears it.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// Whether the field can be used for stickiness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickiness: Option<bool>,
    /// Sort position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    /// The allowed values, replacing the current ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legal_values: Option<Vec<LegalValue>>,
}
