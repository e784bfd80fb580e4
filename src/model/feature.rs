//! Features, their per-environment configuration and parent dependencies.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{FeatureStrategy, Tag, Variant};

/// A feature toggle as exported (element of `data.features`): only `name` is
/// required.
///
/// Deprecated fields are accepted and returned: `lastSeenAt` (replaced by the
/// feature environment's), `variants` (replaced by environment-level variants) and
/// `strategies` (legacy; element shape not shown, so kept as raw JSON). `children` and
/// `dependencies` are experimental.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    /// Unique feature name.
    pub name: String,
    /// Toggle type, e.g. `experiment`, `kill-switch`, `release`, `operational`, `permission`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub feature_type: Option<String>,
    /// Detailed description; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub description: Option<Option<String>>,
    /// True if archived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// The project the feature belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// True if enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// True if stale, based on age and feature type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// True if favorited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favorite: Option<bool>,
    /// True if impression data collection is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impression_data: Option<bool>,
    /// Creation time; nullable.
    #[serde(
        default,
        with = "super::nullable_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<Option<DateTime<Utc>>>,
    /// Archival time; nullable.
    #[serde(
        default,
        with = "super::nullable_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub archived_at: Option<Option<DateTime<Utc>>>,
    /// Deprecated: the feature environment's `lastSeenAt` replaces it. Nullable.
    #[serde(
        default,
        with = "super::nullable_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_seen_at: Option<Option<DateTime<Utc>>>,
    /// Environments where the feature can be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environments: Option<Vec<FeatureEnvironment>>,
    /// Deprecated feature-level variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<Variant>>,
    /// Deprecated legacy strategies; their element shape is not shown, so they are raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<Value>>,
    /// Tags on the feature; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub tags: Option<Option<Vec<Tag>>>,
    /// Names of child features. Experimental.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<String>>,
    /// Parent dependencies. Experimental.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<ParentDependency>>,
    /// Keys this version does not know (e.g. `createdBy`, `lifecycle` from newer Unleash),
    /// kept so that round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl Feature {
    /// A feature named `name`, every other field absent: build the rest with the `with_…`
    /// methods instead of spelling the nullable fields' `Option<Option<…>>` (outer `None`:
    /// absent; `Some(None)`: JSON `null`).
    ///
    /// ```
    /// use toggle_admin::model::Feature;
    /// let feature = Feature::new("checkout").with_type("release").with_description("The new checkout");
    /// assert_eq!(feature.description, Some(Some("The new checkout".to_owned())));
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// With the toggle type (`release`, `experiment`, …).
    pub fn with_type(mut self, feature_type: impl Into<String>) -> Self {
        self.feature_type = Some(feature_type.into());
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(Some(description.into()));
        self
    }

    /// In `project`.
    pub fn with_project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Created at `at`.
    pub fn with_created_at(mut self, at: DateTime<Utc>) -> Self {
        self.created_at = Some(Some(at));
        self
    }

    /// With these tags.
    pub fn with_tags(mut self, tags: Vec<Tag>) -> Self {
        self.tags = Some(Some(tags));
        self
    }
}

/// The configuration of a feature in one environment: `name` and `enabled` are
/// required.
///
/// On import `name` is read as the feature's name (Unleash's exports put the feature name
/// there), `environment` as the environment's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironment {
    /// The name: the environment's by the schema, the feature's in exports.
    pub name: String,
    /// The feature's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_name: Option<String>,
    /// The environment's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The type of the environment.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub environment_type: Option<String>,
    /// Whether the feature is enabled in this environment.
    pub enabled: bool,
    /// Sort order in the list of feature environments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    /// The number of variants defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant_count: Option<u32>,
    /// Activation strategies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategies: Option<Vec<FeatureStrategy>>,
    /// Environment-level variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<Variant>>,
    /// When metrics were last collected for this feature environment; nullable.
    #[serde(
        default,
        with = "super::nullable_timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_seen_at: Option<Option<DateTime<Utc>>>,
    /// Whether any strategy is defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_strategies: Option<bool>,
    /// Whether any enabled strategy is defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_enabled_strategies: Option<bool>,
    /// Keys this version does not know (e.g. `changeRequestIds`, `releasePlans`), kept so that
    /// round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// A parent a feature depends on (experimental): `feature`
/// is required.
///
/// `enabled` (default true) and `variants` (default empty) stay `None` when absent so that
/// documents round-trip exactly; see [`is_enabled`](ParentDependency::is_enabled) and
/// [`variant_names`](ParentDependency::variant_names).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ParentDependency {
    /// The parent feature's name.
    pub feature: String,
    /// Whether the parent must be enabled; when false, `variants` are ignored. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The variants the parent must resolve to; valid only when the parent must be enabled.
    /// Empty checks only the enabled status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<String>>,
}

impl ParentDependency {
    /// `enabled`, true when absent.
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }

    /// `variants`, empty when absent.
    pub fn variant_names(&self) -> &[String] {
        self.variants.as_deref().unwrap_or(&[])
    }
}

/// A feature to create in a project: `POST /api/admin/projects/{p}/features`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct NewFeature {
    /// 1–100 URL-friendly characters, unique across all projects.
    pub name: String,
    /// The toggle type; `release` when absent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub feature_type: Option<String>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether clients emit impression events for it; false when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impression_data: Option<bool>,
    /// Whether it starts stale; false when absent (Unleash takes it on creation too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// The project, if given: must be the one of the path. The Terraform provider sends
    /// its whole feature body, these fields and the ones below included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Only `false` is accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived: Option<bool>,
    /// Accepted as `null` or `[]` only; environments are set through their own routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Vec<Object>>))]
    pub environments: Option<serde_json::Value>,
    /// Accepted as `null` or `[]` only; variants are set per environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Vec<Object>>))]
    pub variants: Option<serde_json::Value>,
}

/// A project's archived features, as Unleash lists them
/// (`GET /api/admin/archive/features/{projectId}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ArchivedFeatures {
    /// The schema version, always 2.
    pub version: u32,
    /// The archived features, by name.
    pub features: Vec<Feature>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_type_defaults_to_simple() {
        let tag: Tag = serde_json::from_str(r#"{"value":"x"}"#).unwrap();
        assert_eq!(tag.tag_type, "simple");
    }

    #[test]
    fn nullable_fields_keep_null() {
        let json = serde_json::json!({
            "name": "f",
            "description": null,
            "createdAt": null,
            "archivedAt": "2024-01-01T00:00:00.000Z",
            "tags": null
        });
        let feature: Feature = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(feature.description, Some(None));
        assert_eq!(feature.created_at, Some(None));
        assert_eq!(feature.tags, Some(None));
        assert_eq!(feature.last_seen_at, None);
        assert_eq!(serde_json::to_value(&feature).unwrap(), json);
    }

    #[test]
    fn timestamps_written_like_unleash() {
        let json = serde_json::json!({
            "name": "f",
            "enabled": true,
            "lastSeenAt": "2024-05-01T10:00:00+02:00"
        });
        let env: FeatureEnvironment = serde_json::from_value(json).unwrap();
        let out = serde_json::to_value(&env).unwrap();
        assert_eq!(out["lastSeenAt"], "2024-05-01T08:00:00.000Z");
    }

    #[test]
    fn parent_dependency_defaults() {
        let dep: ParentDependency = serde_json::from_str(r#"{"feature":"p"}"#).unwrap();
        assert!(dep.is_enabled());
        assert!(dep.variant_names().is_empty());
    }
}

/// The data of a `feature-created` event: the new feature as Unleash records it (its
/// name, description, type, project, stale flag, creation time, impression data and
/// archived flag; `lastSeenAt` is `null`, as it is for a feature just made).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreatedFeatureData<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    #[serde(rename = "type")]
    pub feature_type: &'a str,
    pub project: &'a str,
    pub stale: bool,
    #[serde(with = "super::millis_timestamp")]
    pub created_at: DateTime<Utc>,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub impression_data: bool,
    pub archived: bool,
}

/// Who created or changed a feature, as Unleash shows it in a feature's `createdBy` and
/// `collaborators.users`: a user, or, for an admin key, Unleash's admin token user
/// (id -42).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureUser {
    /// The user's id; -42 for an admin key.
    pub id: i64,
    /// The user's name (or username, or email).
    pub name: String,
    /// A Gravatar image for the user, as Unleash computes it.
    pub image_url: String,
}

impl FeatureUser {
    /// The user Unleash names for changes made with an admin key.
    pub fn admin_token_user() -> Self {
        Self::new(
            super::ADMIN_TOKEN_USER_ID,
            "Unleash Admin Token User",
            "unleash admin token user",
        )
    }

    /// A user named `name`, whose Gravatar is computed from `seed` (the email, the
    /// username, or the name), as Unleash does (see [`gravatar_url`](super::gravatar_url)).
    pub fn new(id: i64, name: &str, seed: &str) -> Self {
        Self {
            id,
            name: name.to_owned(),
            image_url: super::gravatar_url(seed),
        }
    }
}
