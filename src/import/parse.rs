//! Reading the raw import body: its shape, each member's items typed one by one (so one bad
//! item does not hide the others), unknown keys as warnings.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::Issues;
use crate::model::{
    ContextField, Feature, FeatureDependencies, FeatureTag, SegmentRef, TagType, Variant,
};

/// The members of `data` this version reads.
const DATA_MEMBERS: [&str; 8] = [
    "features",
    "featureStrategies",
    "featureEnvironments",
    "contextFields",
    "featureTags",
    "segments",
    "tagTypes",
    "dependencies",
];

/// The keys of a feature environment entry.
const FEATURE_ENVIRONMENT_KEYS: [&str; 12] = [
    "name",
    "featureName",
    "environment",
    "type",
    "enabled",
    "sortOrder",
    "variantCount",
    "strategies",
    "variants",
    "lastSeenAt",
    "hasStrategies",
    "hasEnabledStrategies",
];

/// One item of a member of `data`, with where it is.
#[derive(Debug, Clone)]
pub(crate) struct Item<T> {
    /// Its path, e.g. `data.features[3]`.
    pub path: String,
    /// The item.
    pub value: T,
}

/// A `featureEnvironments` entry as the import reads it.
#[derive(Debug, Clone)]
pub(crate) struct EnvironmentEntry {
    /// `featureName`, falling back to `name`.
    pub feature: String,
    /// The enabled state to set.
    pub enabled: bool,
    /// The variants, validated and weighted; `None` when absent or empty (left untouched).
    pub variants: Option<Vec<Variant>>,
}

/// The import body, read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Payload {
    pub project: String,
    pub environment: String,
    pub features: Vec<Item<Feature>>,
    /// Strategies stay raw: checking them needs the snapshot (segments, context fields).
    pub strategies: Vec<Item<Value>>,
    pub feature_environments: Vec<Item<EnvironmentEntry>>,
    pub context_fields: Vec<Item<ContextField>>,
    pub feature_tags: Vec<Item<FeatureTag>>,
    pub segments: Vec<Item<SegmentRef>>,
    pub tag_types: Vec<Item<TagType>>,
    pub dependencies: Vec<Item<FeatureDependencies>>,
}

/// Read `body`; problems and warnings go to `issues`. Whatever could be read is returned,
/// so that every problem can be found in one pass.
pub(crate) fn parse(body: &Value, issues: &mut Issues) -> Payload {
    let mut payload = Payload::default();
    let Value::Object(fields) = body else {
        issues.error(
            "",
            "the import body must be an object {project, environment, data}",
        );
        return payload;
    };
    // The body itself is Unleash's `importTogglesSchema`, which allows no other member (only
    // the members inside `data` may come from newer versions, and are ignored).
    for key in fields
        .keys()
        .filter(|k| !["project", "environment", "data"].contains(&k.as_str()))
    {
        issues.error(
            format!("body.{key}"),
            format!("unknown member `{key}`: the body is {{project, environment, data}}"),
        );
    }
    for (key, target) in [
        ("project", &mut payload.project),
        ("environment", &mut payload.environment),
    ] {
        match fields.get(key) {
            Some(Value::String(s)) if !s.is_empty() => *target = s.clone(),
            _ => issues.error(key, format!("{key} is required: the target {key}'s name")),
        }
    }
    let Some(Value::Object(data)) = fields.get("data") else {
        issues.error(
            "data",
            "data is required: an object, the result of an export",
        );
        return payload;
    };
    issues.unknown_keys(data, "data", &DATA_MEMBERS);

    payload.features = typed_items(data, "features", true, "feature", issues);
    for feature in &payload.features {
        warn_extra(&feature.value.extra, &feature.path, issues);
        if feature
            .value
            .variants
            .as_ref()
            .is_some_and(|v| !v.is_empty())
        {
            issues.warn(
                format!("{}.variants", feature.path),
                "deprecated feature-level variants are not imported; featureEnvironments carry the variants",
            );
        }
    }
    payload.strategies = items(data, "featureStrategies", true, issues)
        .into_iter()
        .map(|(path, value)| Item {
            path,
            value: value.clone(),
        })
        .collect();
    payload.feature_environments = items(data, "featureEnvironments", false, issues)
        .into_iter()
        .filter_map(|(path, value)| {
            environment_entry(value, &path, issues).map(|value| Item { path, value })
        })
        .collect();
    payload.context_fields = typed_items(data, "contextFields", false, "context field", issues);
    for field in &payload.context_fields {
        warn_extra(&field.value.extra, &field.path, issues);
    }
    payload.feature_tags = typed_items(data, "featureTags", false, "feature tag", issues);
    for tag in &payload.feature_tags {
        warn_extra(&tag.value.extra, &tag.path, issues);
    }
    let listed = data.get("segments").and_then(Value::as_array);
    for (i, value) in listed.into_iter().flatten().enumerate() {
        if let Value::Object(fields) = value {
            issues.unknown_keys(fields, &format!("data.segments[{i}]"), &["id", "name"]);
        }
    }
    payload.segments = typed_items(data, "segments", false, "segment reference", issues);
    payload.tag_types = typed_items(data, "tagTypes", true, "tag type", issues);
    for tag_type in &payload.tag_types {
        warn_extra(&tag_type.value.extra, &tag_type.path, issues);
    }
    payload.dependencies = typed_items(data, "dependencies", false, "dependency entry", issues);
    payload
}

/// The items of `data.<member>` with their paths; a missing required member or a non-array
/// is recorded.
fn items<'a>(
    data: &'a Map<String, Value>,
    member: &str,
    required: bool,
    issues: &mut Issues,
) -> Vec<(String, &'a Value)> {
    let list: &[Value] = match data.get(member) {
        Some(Value::Array(list)) => list,
        None | Some(Value::Null) if !required => &[],
        None => {
            issues.error(
                format!("data.{member}"),
                format!("{member} is required (it may be empty)"),
            );
            &[]
        }
        Some(_) => {
            issues.error(
                format!("data.{member}"),
                format!("{member} must be an array"),
            );
            &[]
        }
    };
    list.iter()
        .enumerate()
        .map(|(i, value)| (format!("data.{member}[{i}]"), value))
        .collect()
}

/// The items of `data.<member>`, each typed; an item that does not fit is recorded and left
/// out.
fn typed_items<T: DeserializeOwned>(
    data: &Map<String, Value>,
    member: &str,
    required: bool,
    what: &str,
    issues: &mut Issues,
) -> Vec<Item<T>> {
    items(data, member, required, issues)
        .into_iter()
        .filter_map(|(path, value)| match T::deserialize(value) {
            Ok(value) => Some(Item { path, value }),
            Err(e) => {
                issues.error(path, format!("not a valid {what}: {e}"));
                None
            }
        })
        .collect()
}

/// Warn about the keys a model type kept as unknown.
fn warn_extra(extra: &Map<String, Value>, path: &str, issues: &mut Issues) {
    issues.unknown_keys(extra, path, &[]);
}

/// One `featureEnvironments` entry.
fn environment_entry(raw: &Value, path: &str, issues: &mut Issues) -> Option<EnvironmentEntry> {
    let Value::Object(fields) = raw else {
        issues.error(path, "a feature environment entry must be an object");
        return None;
    };
    issues.unknown_keys(fields, path, &FEATURE_ENVIRONMENT_KEYS);
    let name = |key: &str| match fields.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let feature = name("featureName").or_else(|| name("name"));
    if feature.is_none() {
        issues.error(
            format!("{path}.featureName"),
            "featureName (or name) is required: the feature the entry configures",
        );
    }
    let enabled = match fields.get("enabled") {
        Some(Value::Bool(b)) => Some(*b),
        _ => {
            issues.error(format!("{path}.enabled"), "enabled is required: a boolean");
            None
        }
    };
    let variants = match fields.get("variants") {
        None | Some(Value::Null) => Some(None),
        Some(Value::Array(list)) if list.is_empty() => Some(None),
        Some(raw) => match crate::variants::normalise_variants(raw) {
            Ok(variants) => Some(Some(variants)),
            Err(e) => {
                for detail in e.details() {
                    issues.error(
                        format!(
                            "{path}.variants{}",
                            detail.path.as_deref().unwrap_or_default()
                        ),
                        detail.message.clone(),
                    );
                }
                None
            }
        },
    };
    Some(EnvironmentEntry {
        feature: feature?,
        enabled: enabled?,
        variants: variants?,
    })
}
