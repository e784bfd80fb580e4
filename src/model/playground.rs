//! The playground (Unleash's `playgroundRequestSchema`, `playgroundResponseSchema` and their
//! advanced twins): every flag of some projects evaluated for a context, with the reasons —
//! each strategy's result, each constraint's, each segment's.
//!
//! The request's `context` is Unleash's `sdkContextSchema`: `appName` (required), `userId`,
//! `sessionId`, `remoteAddress`, `environment`, `currentTime`, `properties: {name: value}`,
//! and any other top-level string field, which is a context field like a property.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use unleash_types::client_features::Payload;

use super::{Constraint, StrategyVariant, Variant};

/// Which projects' flags to evaluate: `"*"` (every project) or a list of project ids.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PlaygroundProjects {
    /// `"*"`: every project.
    #[default]
    All,
    /// These projects (each must exist).
    Only(Vec<String>),
}

impl Serialize for PlaygroundProjects {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PlaygroundProjects::All => serializer.serialize_str("*"),
            PlaygroundProjects::Only(projects) => projects.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for PlaygroundProjects {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Projects;
        impl<'de> de::Visitor<'de> for Projects {
            type Value = PlaygroundProjects;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"*\" or a list of project ids")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                if text == "*" {
                    Ok(PlaygroundProjects::All)
                } else {
                    Err(E::invalid_value(de::Unexpected::Str(text), &self))
                }
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut projects = Vec::new();
                while let Some(project) = seq.next_element::<String>()? {
                    projects.push(project);
                }
                Ok(PlaygroundProjects::Only(projects))
            }
        }
        deserializer.deserialize_any(Projects)
    }
}

/// `POST /api/admin/playground`: evaluate the flags of `projects` in `environment` for
/// `context`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundRequest {
    /// The environment the flags are evaluated in.
    pub environment: String,
    /// `"*"` or a list of project ids; absent: every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub projects: Option<PlaygroundProjects>,
    /// The context (`sdkContextSchema`): `appName` required.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub context: Map<String, Value>,
}

/// `POST /api/admin/playground/advanced`: evaluate the flags of `projects` in each of
/// `environments` for every combination of the context's values, a field's values written
/// comma-separated (`"userId": "1,2"`, `"properties": {"country": "NO,DK"}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AdvancedPlaygroundRequest {
    /// The environments, at least one.
    pub environments: Vec<String>,
    /// `"*"` or a list of project ids; absent: every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub projects: Option<PlaygroundProjects>,
    /// The context (`sdkContextSchema`), each string value possibly comma-separated.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub context: Map<String, Value>,
}

/// The answer of `POST /api/admin/playground`: the input, and every flag evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundResponse {
    /// The request, as understood.
    pub input: PlaygroundRequest,
    /// Every flag of the projects, by name.
    pub features: Vec<PlaygroundFeature>,
}

/// True, false, or `"unknown"` (a custom strategy the server cannot evaluate, whose
/// constraints and segments hold).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// `true` or `false`.
    Decided(bool),
    /// `"unknown"`.
    Unknown,
}

impl Serialize for Outcome {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Outcome::Decided(value) => serializer.serialize_bool(*value),
            Outcome::Unknown => serializer.serialize_str("unknown"),
        }
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Bool(value) => Ok(Outcome::Decided(value)),
            Value::String(text) if text == "unknown" => Ok(Outcome::Unknown),
            other => Err(de::Error::custom(format!(
                "expected true, false or \"unknown\", not {other}"
            ))),
        }
    }
}

/// One flag evaluated for a context in an environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundFeature {
    /// The flag.
    pub name: String,
    /// Its project.
    pub project_id: String,
    /// Whether an SDK sees it enabled for the context: the frontend API's answer.
    pub is_enabled: bool,
    /// Whether it is switched on in the environment.
    pub is_enabled_in_current_environment: bool,
    /// Whether a parent flag it depends on does not give what it needs.
    pub has_unsatisfied_dependency: bool,
    /// Its strategies' results.
    pub strategies: PlaygroundStrategies,
    /// The variant the context gets (`disabled` when the flag is off or has none).
    pub variant: PlaygroundVariant,
    /// The variants it chooses from: the enabling strategy's, else the environment's.
    pub variants: Vec<Variant>,
}

/// A flag's strategies and their combined result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundStrategies {
    /// Whether the strategies enable the flag for the context, whatever its environment
    /// switch: `true` when one does, `"unknown"` when none does but a custom strategy might,
    /// else `false`; without an active strategy, the environment switch (as in Unleash).
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub result: Outcome,
    /// Each strategy in order, disabled ones included.
    pub data: Vec<PlaygroundStrategy>,
}

/// One strategy evaluated for a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundStrategy {
    /// The strategy's type (`flexibleRollout`, …).
    pub name: String,
    /// The strategy's id.
    pub id: String,
    /// Its title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A disabled strategy is not evaluated.
    pub disabled: bool,
    /// Its parameters.
    pub parameters: BTreeMap<String, String>,
    /// Its result.
    pub result: StrategyResult,
    /// Its constraints, each with its result.
    pub constraints: Vec<PlaygroundConstraint>,
    /// Its segments, each with its result.
    pub segments: Vec<PlaygroundSegment>,
    /// Where Unleash's admin UI edits it.
    pub links: StrategyLinks,
}

/// How a strategy was evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum EvaluationStatus {
    /// Evaluated: `enabled` is true or false.
    Complete,
    /// A custom strategy the server cannot evaluate: `enabled` is `false` (a constraint or
    /// segment fails) or `"unknown"`.
    Incomplete,
    /// A disabled strategy: not evaluated.
    Unevaluated,
}

/// A strategy's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StrategyResult {
    /// Whether it enables the flag for the context: constraints, segments and the strategy's
    /// own rule (a rollout, a user list) all hold.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub enabled: Outcome,
    /// How it was evaluated.
    pub evaluation_status: EvaluationStatus,
    /// The strategy variant the context gets, when the strategy is enabled and has variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<PlaygroundStrategyVariant>,
    /// The strategy's variants, with `variant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<StrategyVariant>>,
}

/// The variant a strategy gives a context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundStrategyVariant {
    /// The variant's name.
    pub name: String,
    /// Always true: a variant was chosen.
    pub enabled: bool,
    /// Its payload, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub payload: Option<Payload>,
}

/// A constraint with its result for the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundConstraint {
    /// The constraint (`inverted`, `caseInsensitive` and `values` always written).
    #[serde(flatten)]
    pub constraint: Constraint,
    /// Whether it holds for the context (after `inverted`).
    pub result: bool,
}

/// A segment with its result for the context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundSegment {
    /// The segment's id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Whether all its constraints hold.
    pub result: bool,
    /// Its constraints, each with its result.
    pub constraints: Vec<PlaygroundConstraint>,
}

/// `{edit}`: the path of Unleash's admin UI page that edits the strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct StrategyLinks {
    /// `/projects/{project}/features/{feature}/strategies/edit?environmentId=…&strategyId=…`.
    pub edit: String,
}

/// The variant a flag gives a context, as the frontend API gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PlaygroundVariant {
    /// The variant's name; `disabled` when the flag is off or has no variants.
    pub name: String,
    /// Whether a variant was chosen.
    pub enabled: bool,
    /// Its payload, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub payload: Option<Payload>,
    /// Whether the flag is enabled for the context.
    pub feature_enabled: bool,
    /// The same, under the deprecated name Unleash still writes.
    #[serde(rename = "featureEnabled")]
    pub feature_enabled_deprecated: bool,
}

/// The answer of `POST /api/admin/playground/advanced`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct AdvancedPlaygroundResponse {
    /// The request, as understood.
    pub input: AdvancedPlaygroundRequest,
    /// Every flag of the projects, by name, with its results per environment.
    pub features: Vec<AdvancedPlaygroundFeature>,
    /// Top-level context fields that were left out because they are not strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<PlaygroundWarnings>,
}

/// What the advanced playground left out of the context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlaygroundWarnings {
    /// The top-level context fields that were not strings.
    pub invalid_context_properties: Vec<String>,
}

/// One flag across environments and contexts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AdvancedPlaygroundFeature {
    /// The flag.
    pub name: String,
    /// Its project.
    pub project_id: String,
    /// Per environment, one result per combination of the context's values.
    pub environments: BTreeMap<String, Vec<AdvancedPlaygroundEnvironmentFeature>>,
}

/// One flag evaluated in one environment for one combination of the context's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AdvancedPlaygroundEnvironmentFeature {
    /// The flag.
    pub name: String,
    /// The environment.
    pub environment: String,
    /// The combination evaluated, flat (`properties` spread into the top level), as Unleash
    /// writes it.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub context: Map<String, Value>,
    /// Its project.
    pub project_id: String,
    /// Whether an SDK sees it enabled for the context.
    pub is_enabled: bool,
    /// Whether it is switched on in the environment.
    pub is_enabled_in_current_environment: bool,
    /// Whether a parent flag it depends on does not give what it needs.
    pub has_unsatisfied_dependency: bool,
    /// Its strategies' results.
    pub strategies: PlaygroundStrategies,
    /// The variant the context gets.
    pub variant: PlaygroundVariant,
    /// The variants it chooses from.
    pub variants: Vec<Variant>,
}
