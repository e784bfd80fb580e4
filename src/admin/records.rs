//! How the facade files its data in a store: the record shapes, their keys, their codecs, the
//! shared 404s, and the one step that reads a feature environment with its 404 order.
//!
//! Records are JSON values; these types are their schema. Everything here is private to the
//! crate, so the stored shape can evolve behind the public API.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{FeatureStrategy, Variant};
use crate::store::{Collection, Json, Key, StoreError, Versioned};

/// The separator inside composite ids. A unit separator cannot occur in a URL-friendly name,
/// so `feature\u{1f}environment` is unambiguous and all of a feature's environments share the
/// prefix `feature\u{1f}`.
pub(crate) const SEP: char = '\u{1f}';

pub(crate) fn project_key(id: &str) -> Key {
    Key::new(Collection::Projects, id)
}

pub(crate) fn environment_key(name: &str) -> Key {
    Key::new(Collection::Environments, name)
}

pub(crate) fn feature_key(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

pub(crate) fn feature_environment_key(feature: &str, environment: &str) -> Key {
    Key::new(
        Collection::FeatureEnvironments,
        format!("{feature}{SEP}{environment}"),
    )
}

/// An API key's record: filed under the hash of its secret, never the secret itself.
pub(crate) fn api_key_key(secret_hash: &str) -> Key {
    Key::new(Collection::ApiKeys, secret_hash)
}

pub(crate) fn project_not_found(project: &str) -> Error {
    Error::not_found(format!("There's no project with id \"{project}\"."))
}

pub(crate) fn environment_not_found(environment: &str) -> Error {
    Error::not_found(format!("There's no environment named \"{environment}\"."))
}

pub(crate) fn feature_not_found(feature: &str, project: &str) -> Error {
    Error::not_found(format!(
        "There's no feature named \"{feature}\" in project \"{project}\"."
    ))
}

/// The 400 of a change to the feature environments of an archived feature.
pub(crate) fn feature_archived(feature: &str) -> Error {
    Error::invalid_at(
        "featureName",
        format!("The feature \"{feature}\" is archived; archived features cannot be changed."),
    )
}

/// The keys of the records a feature environment's operations read, in the order of its
/// 404s: the project, the feature, the environment, and the feature environment itself.
pub(crate) fn feature_environment_keys(
    project: &str,
    feature: &str,
    environment: &str,
) -> [Key; 4] {
    [
        project_key(project),
        feature_key(feature),
        environment_key(environment),
        feature_environment_key(feature, environment),
    ]
}

/// The part of a stored project a feature environment's 404s read.
#[derive(Deserialize)]
struct ProjectEnvironments<'a> {
    #[serde(borrow, default)]
    environments: Vec<Cow<'a, str>>,
}

/// The part of a stored feature a feature environment's 404s read.
#[derive(Deserialize)]
struct FeatureHead<'a> {
    #[serde(borrow)]
    project: Cow<'a, str>,
    #[serde(default)]
    archived: bool,
}

/// The 404s of a feature environment, in one fixed order: project, feature (in that
/// project), environment, environment enabled for the project. `records` are those read at
/// [`feature_environment_keys`]. Returns whether the feature is archived.
pub(crate) fn feature_environment_found(
    project: &str,
    feature: &str,
    environment: &str,
    keys: &[Key; 4],
    records: &[Option<Versioned>; 4],
) -> Result<bool> {
    let [project_record, feature_record, environment_record, _] = records;
    let Some(project_record) = project_record else {
        return Err(project_not_found(project));
    };
    let project_value: ProjectEnvironments<'_> = decode_ref(&keys[0], &project_record.value)?;
    let feature_value: Option<FeatureHead<'_>> = feature_record
        .as_ref()
        .map(|r| decode_ref(&keys[1], &r.value))
        .transpose()?;
    let archived = match feature_value {
        Some(f) if f.project == project => f.archived,
        _ => return Err(feature_not_found(feature, project)),
    };
    if environment_record.is_none() {
        return Err(environment_not_found(environment));
    }
    if !project_value.environments.iter().any(|e| e == environment) {
        return Err(Error::not_found(format!(
            "The environment \"{environment}\" is not enabled for project \"{project}\"."
        )));
    }
    Ok(archived)
}

/// A feature as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureRecord {
    pub name: String,
    pub project: String,
    #[serde(rename = "type")]
    pub feature_type: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub impression_data: bool,
    #[serde(default)]
    pub stale: bool,
    #[serde(default)]
    pub archived: bool,
    #[serde(default)]
    pub archived_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// Who created it (absent in records written before 0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<crate::model::FeatureUser>,
    /// Who created or imported it, most recent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collaborators: Vec<crate::model::FeatureUser>,
}

impl FeatureRecord {
    /// The data of the `feature-created` event that makes this feature.
    pub(crate) fn created_data(&self) -> crate::model::CreatedFeatureData<'_> {
        crate::model::CreatedFeatureData {
            name: &self.name,
            description: self.description.as_deref(),
            feature_type: &self.feature_type,
            project: &self.project,
            stale: self.stale,
            created_at: self.created_at,
            last_seen_at: None,
            impression_data: self.impression_data,
            archived: self.archived,
        }
    }

    /// Record `user` as the most recent collaborator.
    pub(crate) fn touched_by(&mut self, user: &crate::model::FeatureUser) {
        self.collaborators.retain(|u| u.id != user.id);
        self.collaborators.insert(0, user.clone());
    }
}

/// A feature's configuration in one environment, as stored. A feature whose project has the
/// environment but that has no record yet is disabled there with no variants and no
/// strategies: records are written on first change, so enabling an environment for a project
/// costs one write however many features it holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureEnvironmentRecord {
    #[serde(default)]
    pub enabled: bool,
    #[serde(default)]
    pub variants: Vec<Variant>,
    #[serde(default)]
    pub strategies: Vec<FeatureStrategy>,
}

/// Decode the record at `key`.
pub(crate) fn decode<T: DeserializeOwned>(key: &Key, value: &Json) -> Result<T> {
    decode_ref(key, value)
}

/// Decode the record at `key`, borrowing strings from its text where `T` allows.
pub(crate) fn decode_ref<'a, T: Deserialize<'a>>(key: &Key, value: &'a Json) -> Result<T> {
    value.decode().map_err(|source| {
        Error::Store(StoreError::Encoding {
            what: format!("record {key}"),
            source,
        })
    })
}

/// Decode an optional record.
pub(crate) fn decode_opt<T: DeserializeOwned>(
    key: &Key,
    record: Option<&Versioned>,
) -> Result<Option<T>> {
    record.map(|r| decode(key, &r.value)).transpose()
}

/// Encode a record. The record types are this crate's own, so a failure is a bug
/// ([`Error::Internal`]), not a store failure.
pub(crate) fn encode<T: Serialize + ?Sized>(key: &Key, value: &T) -> Result<Json> {
    Json::encode(value).map_err(|source| {
        Error::internal(
            format!("could not encode record {key}"),
            Some(Box::new(source)),
        )
    })
}

/// The revision of an optional record ([`Revision::ABSENT`](crate::store::Revision::ABSENT)
/// when there is none).
pub(crate) fn revision_of(record: Option<&Versioned>) -> crate::store::Revision {
    record.map_or(crate::store::Revision::ABSENT, |r| r.revision)
}

pub(crate) fn strategy_definition_key(name: &str) -> Key {
    Key::new(Collection::StrategyDefinitions, name)
}

pub(crate) fn segment_key(id: i64) -> Key {
    Key::new(Collection::Segments, id.to_string())
}

/// The counter that hands out segment ids.
pub(crate) fn segment_sequence_key() -> Key {
    Key::new(Collection::Sequences, "segments")
}

pub(crate) fn context_field_key(name: &str) -> Key {
    Key::new(Collection::ContextFields, name)
}

pub(crate) fn tag_type_key(name: &str) -> Key {
    Key::new(Collection::TagTypes, name)
}

pub(crate) fn feature_tags_key(feature: &str) -> Key {
    Key::new(Collection::FeatureTags, feature)
}

pub(crate) fn feature_dependencies_key(feature: &str) -> Key {
    Key::new(Collection::FeatureDependencies, feature)
}

/// A tag that exists on its own: `type\u{1f}value` (a tag value has no control character,
/// so the id is unambiguous, and the tags of one type share the prefix `type\u{1f}`).
pub(crate) fn tag_key(tag_type: &str, value: &str) -> Key {
    Key::new(Collection::Tags, format!("{tag_type}{SEP}{value}"))
}

pub(crate) fn feature_links_key(feature: &str) -> Key {
    Key::new(Collection::FeatureLinks, feature)
}

pub(crate) fn feature_lifecycle_key(feature: &str) -> Key {
    Key::new(Collection::FeatureLifecycles, feature)
}

pub(crate) fn feature_type_key(id: &str) -> Key {
    Key::new(Collection::FeatureTypes, id)
}

/// The records that belong to one feature alone, keyed by its name: deleted with it.
pub(crate) fn feature_attachment_keys(feature: &str) -> [Key; 4] {
    [
        feature_tags_key(feature),
        feature_dependencies_key(feature),
        feature_links_key(feature),
        feature_lifecycle_key(feature),
    ]
}

/// A counter of [`Collection::Sequences`]: the last id handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct SequenceRecord {
    pub last: i64,
}

/// A context field as stored (the built-ins are not stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextFieldRecord {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub stickiness: bool,
    #[serde(default)]
    pub sort_order: i64,
    #[serde(default)]
    pub legal_values: Vec<crate::model::LegalValue>,
    pub created_at: DateTime<Utc>,
}

/// A tag type as stored (the built-in `simple` is not stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TagTypeRecord {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub icon: Option<String>,
    #[serde(default)]
    pub color: Option<String>,
}

/// A feature's tags as stored, in the order they were added.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct FeatureTagsRecord {
    pub tags: Vec<crate::model::Tag>,
}

/// A feature's links as stored, in the order they were added.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct FeatureLinksRecord {
    pub links: Vec<crate::model::FeatureLink>,
}

/// What is stored of a feature's lifecycle: only its completion (the other stages are
/// derived, see `feature_lifecycle.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureLifecycleRecord {
    pub completed_at: DateTime<Utc>,
    pub status: crate::model::CompletionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_value: Option<String>,
}

/// The lifetime set for a built-in feature type (`None`: never stale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureTypeRecord {
    pub lifetime_days: Option<u32>,
}

/// A feature's parents as stored: `enabled` and `variants` always filled in.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct FeatureDependenciesRecord {
    pub parents: Vec<crate::model::ParentDependency>,
}

/// The flags of `uses`, each once, quoted and comma-separated.
pub(crate) fn flag_list(uses: &[crate::model::StrategyUse]) -> String {
    let mut flags: Vec<&str> = uses.iter().map(|u| u.feature_name.as_str()).collect();
    flags.sort_unstable();
    flags.dedup();
    flags
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One detail per use: the flag, its project, environment and strategy.
pub(crate) fn use_details(uses: &[crate::model::StrategyUse]) -> Vec<crate::error::ErrorDetail> {
    uses.iter()
        .map(|u| {
            crate::error::ErrorDetail::general(format!(
                "flag \"{}\" (project \"{}\") uses it in environment \"{}\", strategy {} \"{}\"",
                u.feature_name, u.project_id, u.environment, u.strategy_name, u.id
            ))
        })
        .collect()
}

/// [`Error::InUse`]: `what` (e.g. `The segment "eu"`) is used by the strategies `uses`.
pub(crate) fn in_use(what: &str, uses: &[crate::model::StrategyUse]) -> Error {
    Error::InUse {
        message: format!(
            "{what} is in use by the strategies of the flags {}: remove it from them first.",
            flag_list(uses)
        ),
        details: use_details(uses),
    }
}

/// 404 unless the project exists and the feature is in it.
pub(crate) fn check_feature(
    project: &str,
    feature: &str,
    project_exists: bool,
    record: Option<FeatureRecord>,
) -> Result<FeatureRecord> {
    if !project_exists {
        return Err(project_not_found(project));
    }
    record
        .filter(|f| f.project == project)
        .ok_or_else(|| feature_not_found(feature, project))
}

/// The refusal of a bulk operation over features, nothing changed: a 404 naming them when
/// every problem is a feature that does not exist (as Unleash answers), else one 400 listing
/// every problem.
pub(crate) fn bulk_refusal(problems: Vec<crate::error::ErrorDetail>, missing: usize) -> Error {
    if missing == problems.len() {
        return Error::not_found_at("Some features do not exist; nothing was changed.", problems);
    }
    Error::validation(
        "Some features cannot be changed; nothing was changed.",
        problems,
    )
}
