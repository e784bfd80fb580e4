//! The import domain, pure (no I/O, no store, no clock): check an import body against a
//! snapshot of what the store holds, and plan everything it writes; build an
//! export document from stored data.
//!
//! The facade ([`import_toggles`](crate::ToggleAdmin::import_toggles)) reads the snapshot,
//! runs the crate-internal planner, checks the permissions the plan names, and commits
//! the plan's writes and events at once.
//!
//! # Paths
//!
//! Every problem names where it is, as a dotted path into the body:
//! `data.features[3].name`, `data.featureStrategies[2].segments[0]`,
//! `data.featureStrategies[0].constraints[1].value`. Variant problems continue with the JSON
//! pointer of the variants checker: `data.featureEnvironments[1].variants/0/weight`.
//!
//! # Where we differ from Unleash 6.10.1
//!
//! * Everything is checked before anything is written, and every problem is reported in one
//!   400 (Unleash checks six things first and finds the rest mid-transaction, one at a time,
//!   as 400/403/404/409). A missing target project or environment alone is a 404.
//! * `archived` in the payload is never written (Unleash archives without an event).
//! * Sub-lists (`featureStrategies`, `featureEnvironments`, `featureTags`, `dependencies`) may
//!   only name features of `data.features`; Unleash applies tags and variants to features of
//!   any project. Entries without a `featureName` are errors, not silently dropped.
//! * `featureEnvironments` entries are keyed by `featureName`, falling back to `name`, for
//!   both variants and enabled state (Unleash uses one for each).
//! * Dependencies are written in the target project whether or not the payload feature
//!   carries a `project`; existing dependencies are kept, the payload's upserted.
//! * Strategies identical to a stored one (all but the id) keep the stored id and write
//!   nothing, so importing the same document twice changes nothing the second time; removed
//!   strategies and tags get events (`feature-strategy-remove`, `feature-untagged`).
//! * Events are written only for what changes (Unleash writes a metadata event per feature
//!   even when nothing changed); an import that changes nothing writes nothing at all (no
//!   `features-imported`, no new revision).
//! * Stored strategies the payload describes unchanged keep their ids and, when the payload
//!   gives no `sortOrder` (exports give none), their sort orders as stored.
//! * Two modes ([`ImportMode`](crate::model::ImportMode)): `replace` (Unleash's behaviour)
//!   and `create-missing` (existing features are left as they are).
//!
//! # Plans
//!
//! [`plan_import`](crate::ToggleAdmin::plan_import) runs the same planner and, instead of
//! committing, compares each payload feature's document as stored with the document the
//! writes would leave (the crate-internal `diff` module): the changes are exactly what the
//! import would write, so a plan converges (a document planned after it was applied plans as
//! unchanged).
//! * Constraints are checked per operator before writing; context fields named by constraints
//!   must exist (or be in the payload).
//! * `DELETE_FEATURE_STRATEGY` is not demanded for an empty `features` list.
//! * The global limit of 5000 flags and Unleash's change requests do not exist here.

mod builtins;
mod check;
mod constraints;
mod dependencies;
mod diff;
mod export;
mod members;
mod parse;
mod plan;
mod strategy;
mod validation;

pub use builtins::{
    SIMPLE_TAG_TYPE, context_fields as builtin_context_fields, is_builtin_context_field,
    is_builtin_strategy, strategy_definitions as builtin_strategy_definitions,
    tag_types as builtin_tag_types,
};
pub(crate) use check::{is_colour, tag_type_name_problem, tag_value_problem};
pub(crate) use constraints::{check_constraint, check_constraints};
pub(crate) use dependencies::{dependency_problem, normalise_dependency, upsert};
pub(crate) use diff::preview;
pub(crate) use export::{ExportSource, ExportedFeature, build_export};
pub(crate) use plan::plan;
pub(crate) use strategy::{StrategyContext, enabling_strategy, normalise_strategy};
pub(crate) use validation::{items_of, permission_display_name, unleash_findings};

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorDetail};
use crate::model::{
    ContextField, FeatureStrategy, ImportReport, ParentDependency, Project, Segment,
    StrategyDefinition, Tag, TagType, Variant,
};
use crate::model::{Permission, PlanAction, SkipReason};

/// Problems and warnings found so far.
#[derive(Debug, Default)]
pub(crate) struct Issues {
    /// Problems that make the input invalid.
    pub errors: Vec<ErrorDetail>,
    /// Things ignored or worth knowing.
    pub warnings: Vec<ErrorDetail>,
    /// Targets that do not exist (a 404 when nothing else is wrong).
    pub not_found: Vec<ErrorDetail>,
}

impl Issues {
    /// Record a problem at `path`.
    pub fn error(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(ErrorDetail::at(path, message));
    }

    /// Record a warning at `path`.
    pub fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(ErrorDetail::at(path, message));
    }

    /// Warn about every key of `fields` not in `known`: it is ignored (newer Unleash versions
    /// export more fields).
    pub fn unknown_keys(&mut self, fields: &Map<String, Value>, path: &str, known: &[&str]) {
        for key in fields.keys().filter(|k| !known.contains(&k.as_str())) {
            self.warn(
                format!("{path}.{key}"),
                format!("unknown field `{key}` ignored"),
            );
        }
    }

    /// The error these issues amount to, if any: a 404 when only targets are missing, else
    /// a 400 listing every problem (missing targets included).
    pub fn into_error(self) -> Option<Error> {
        if self.errors.is_empty() {
            return match self.not_found.as_slice() {
                [] => None,
                found => Some(Error::not_found(
                    found
                        .iter()
                        .map(|d| d.message.as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                )),
            };
        }
        let mut details = self.not_found;
        details.extend(self.errors);
        let summary = match details.len() {
            1 => "1 problem in the import".to_owned(),
            n => format!("{n} problems in the import"),
        };
        let listed: Vec<String> = details.iter().map(ToString::to_string).collect();
        Some(Error::validation(
            format!("{summary}: {}", listed.join("; ")),
            details,
        ))
    }
}

/// A feature's metadata, as the import writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FeatureMeta {
    /// The toggle type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// The description.
    pub description: Option<String>,
    /// Whether it is stale.
    pub stale: bool,
    /// Whether clients emit impression events.
    pub impression_data: bool,
}

/// A feature as the snapshot knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExistingFeature {
    /// Its project.
    pub project: String,
    /// Whether it is archived.
    pub archived: bool,
    /// Its metadata.
    pub meta: FeatureMeta,
}

/// A feature's configuration in the target environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FeatureEnvironmentState {
    /// Enabled there.
    pub enabled: bool,
    /// The environment variants.
    pub variants: Vec<Variant>,
    /// The strategies, in order.
    pub strategies: Vec<FeatureStrategy>,
}

/// What the store holds that an import depends on, read by the facade.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    /// The target project, if it exists.
    pub project: Option<Project>,
    /// Whether the target environment exists.
    pub environment_exists: bool,
    /// Every feature, by name.
    pub features: BTreeMap<String, ExistingFeature>,
    /// The payload features' configuration in the target environment (absent: disabled,
    /// nothing configured).
    pub feature_environments: BTreeMap<String, FeatureEnvironmentState>,
    /// Every strategy definition, built-ins included, by name.
    pub strategy_definitions: BTreeMap<String, StrategyDefinition>,
    /// Every segment.
    pub segments: Vec<Segment>,
    /// Every context field, built-ins included, by name.
    pub context_fields: BTreeMap<String, ContextField>,
    /// Every tag type, built-ins included, by name.
    pub tag_types: BTreeMap<String, TagType>,
    /// The payload features' tags.
    pub tags: BTreeMap<String, Vec<Tag>>,
    /// Every feature's parents, by child.
    pub dependencies: BTreeMap<String, Vec<ParentDependency>>,
}

/// An event the plan asks for; the facade adds who and when.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedEvent {
    /// Unleash's event type.
    pub event_type: &'static str,
    /// The feature concerned.
    pub feature: Option<String>,
    /// Whether it concerns the target environment.
    pub in_environment: bool,
    /// The state before.
    pub pre_data: Option<crate::model::Json>,
    /// The state after.
    pub data: Option<crate::model::Json>,
}

/// What a valid import does to one feature of the payload, in payload order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FeatureOutcome {
    /// The feature.
    pub name: String,
    /// Created, updated, unchanged or skipped.
    pub action: PlanAction,
    /// Why it is skipped.
    pub reason: Option<SkipReason>,
}

/// Everything a valid import writes, in domain terms.
#[derive(Debug, Clone, Default)]
pub(crate) struct ImportWrites {
    /// The target project.
    pub project: String,
    /// The target environment.
    pub environment: String,
    /// Features to create (`true`) or whose metadata changes (`false`).
    pub features: Vec<(String, FeatureMeta, bool)>,
    /// New configurations in the target environment, by feature.
    pub feature_environments: Vec<(String, FeatureEnvironmentState)>,
    /// Tag types to create.
    pub tag_types: Vec<TagType>,
    /// Context fields to create.
    pub context_fields: Vec<ContextField>,
    /// New tag lists, by feature.
    pub tags: Vec<(String, Vec<Tag>)>,
    /// New parent lists, by child.
    pub dependencies: Vec<(String, Vec<ParentDependency>)>,
    /// The events, in Unleash's order, the final `features-imported` included (none at all
    /// when nothing changes).
    pub events: Vec<PlannedEvent>,
    /// What happens to each payload feature, in payload order.
    pub outcomes: Vec<FeatureOutcome>,
    /// The report returned to the caller.
    pub report: ImportReport,
}

impl ImportWrites {
    /// Whether the import changes nothing: then nothing is committed (no event, no revision).
    pub fn changes_nothing(&self) -> bool {
        self.features.is_empty()
            && self.feature_environments.is_empty()
            && self.tag_types.is_empty()
            && self.context_fields.is_empty()
            && self.tags.is_empty()
            && self.dependencies.is_empty()
            && self.events.is_empty()
    }
}

/// The outcome of planning: the permissions needed (computed even when the body has
/// problems, as far as it could be read) and the plan or the issues.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The target project and environment the permissions are checked in.
    pub project: String,
    /// The target environment.
    pub environment: String,
    /// The permissions the import needs there.
    pub permissions: Vec<Permission>,
    /// Warnings, also when the import is invalid.
    pub warnings: Vec<ErrorDetail>,
    /// The writes, or the issues that make the import fail.
    pub result: Result<ImportWrites, Issues>,
}
