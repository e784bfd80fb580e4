//! What an import answers: its report, the dry run's findings in Unleash's shape
//! (`importTogglesValidateSchema`), and the plan of what it would change ([`ImportPlan`],
//! under an [`ImportMode`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorDetail};
use crate::model::{ContextField, TagType};

/// What an import did: [`import_toggles`](crate::ToggleAdmin::import_toggles)' result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The features created, in payload order.
    pub created: Vec<String>,
    /// The existing features whose metadata, strategies, variants, tags or dependencies
    /// changed, in payload order (the plan's `update`).
    pub updated: Vec<String>,
    /// The existing features the document already described exactly: nothing written (the
    /// plan's `unchanged`).
    #[serde(default)]
    pub unchanged: Vec<String>,
    /// The payload's features that are archived in the store: skipped with everything that
    /// belongs to them.
    pub skipped_archived: Vec<String>,
    /// The payload's features that exist, left exactly as they are under
    /// [`ImportMode::CreateMissing`].
    #[serde(default)]
    pub skipped_existing: Vec<String>,
    /// What was ignored or deserves attention: unknown keys, archived features, custom
    /// strategy definitions in use.
    pub warnings: Vec<ErrorDetail>,
}

/// The dry run of an import: [`validate_import`](crate::ToggleAdmin::validate_import)'s
/// result. Nothing is written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ImportValidation {
    /// What would make the import fail, under Unleash's messages (unknown strategies,
    /// context fields whose legal values conflict, features of other projects, duplicates,
    /// the naming pattern, the feature limit, missing segments and dependency parents). When
    /// none of those applies but this crate's stricter checks find problems, each is one
    /// item whose affected item is its path. Empty when the import would succeed (given the
    /// permissions).
    pub errors: Vec<ValidationItem>,
    /// What deserves attention: custom strategy types used, archived features that will be
    /// skipped, existing features that will be overwritten.
    pub warnings: Vec<ValidationItem>,
    /// The permissions the import needs that the caller lacks: one item
    /// `We detected you are missing the following permissions:` listing them by Unleash's
    /// display names (`Update feature flags`, `Create feature flags`, …), or none.
    pub permissions: Vec<ValidationItem>,
}

/// One finding of the dry run: Unleash's message and the names it concerns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ValidationItem {
    /// What was found.
    pub message: String,
    /// The features, strategies, segments … it concerns (for a problem of this crate's
    /// stricter checks: the path of the offending value).
    pub affected_items: Vec<String>,
}

impl ValidationItem {
    pub(crate) fn new(message: impl Into<String>, items: Vec<String>) -> Self {
        Self {
            message: message.into(),
            affected_items: items,
        }
    }
}

/// What an import does to the features that exist already: `?mode=` of the import and of the
/// plan.
///
/// ```
/// use toggle_admin::model::ImportMode;
///
/// assert!(matches!("create-missing".parse::<ImportMode>(), Ok(ImportMode::CreateMissing)));
/// assert_eq!(ImportMode::default(), ImportMode::Replace);
/// assert!("merge".parse::<ImportMode>().is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ImportMode {
    /// Unleash's behaviour (the default): every feature of the document is made exactly as the
    /// document describes it in the target environment (metadata, enabled state, variants,
    /// strategies, tags), and its dependencies are added; features absent from the document
    /// are not touched.
    #[default]
    Replace,
    /// Only the document's features that the store lacks are created (with everything the
    /// document gives them); the existing ones are left exactly as they are, with no event.
    /// Missing context fields and tag types are created as in `replace`.
    CreateMissing,
}

impl ImportMode {
    /// The name in `?mode=`: `replace` or `create-missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportMode::Replace => "replace",
            ImportMode::CreateMissing => "create-missing",
        }
    }
}

impl fmt::Display for ImportMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ImportMode {
    type Err = Error;

    /// `replace` or `create-missing`; anything else is an [`Error::Validation`] naming `mode`.
    fn from_str(text: &str) -> Result<Self, Error> {
        match text {
            "replace" => Ok(ImportMode::Replace),
            "create-missing" => Ok(ImportMode::CreateMissing),
            other => Err(Error::invalid_at(
                "mode",
                format!("mode must be `replace` or `create-missing`, not `{other}`"),
            )),
        }
    }
}

/// What an import would do, computed without writing anything:
/// [`plan_import`](crate::ToggleAdmin::plan_import)'s result and the body of
/// `POST /api/admin/features-batch/plan`. `docs/flags-as-code.md` describes the format.
///
/// Both sides are compared as the store holds them: the document is normalised exactly as
/// the import would write it (variable variant weights distributed, defaults filled in,
/// segments mapped to stored ids, a stored strategy kept with its id and sort order when the
/// document describes it unchanged), so a document planned right after it was applied plans
/// as `unchanged`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ImportPlan {
    /// The target project.
    pub project: String,
    /// The target environment.
    pub environment: String,
    /// The mode planned with.
    pub mode: ImportMode,
    /// Every feature of the document, in document order, with what the import would do to
    /// it.
    pub features: Vec<FeaturePlan>,
    /// The context fields the import would create (those it uses that do not exist yet).
    pub context_fields: Vec<ContextField>,
    /// The tag types the import would create.
    pub tag_types: Vec<TagType>,
    /// What the import would ignore or that deserves attention (as in [`ImportReport`]).
    pub warnings: Vec<ErrorDetail>,
}

impl ImportPlan {
    /// Whether applying the document would change anything: a feature created or updated, or
    /// a context field or tag type created. The CLI's exit code 2.
    pub fn has_changes(&self) -> bool {
        !self.context_fields.is_empty()
            || !self.tag_types.is_empty()
            || self
                .features
                .iter()
                .any(|f| matches!(f.action, PlanAction::Create | PlanAction::Update))
    }
}

/// One feature of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FeaturePlan {
    /// The feature's name.
    pub name: String,
    /// What the import would do to it.
    pub action: PlanAction,
    /// Why it is skipped (only with `action: skip`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<SkipReason>,
    /// What would change, each at a JSON pointer into the feature's document (see
    /// [`PlanChange`]); for `create`, every member of the new feature's document that is not
    /// empty; for `unchanged` and `skip`, none.
    pub changes: Vec<PlanChange>,
}

/// What an import would do to one feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum PlanAction {
    /// The store lacks it: it would be created.
    Create,
    /// It exists and something about it would change.
    Update,
    /// It exists exactly as the document describes it: nothing would be written.
    Unchanged,
    /// It would not be touched (see [`SkipReason`]).
    Skip,
}

/// Why a feature of the document is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// It is archived in the store (revive it to import it).
    Archived,
    /// It exists, and the mode is [`ImportMode::CreateMissing`].
    Exists,
}

/// One difference between a feature as stored and as the import would write it.
///
/// `path` is a JSON pointer (RFC 6901) into the feature's document: `{type, description,
/// stale, impressionData, enabled, variants, strategies, tags, dependencies}`, where
/// `enabled`, `variants` and `strategies` are those of the target environment, a strategy is
/// as exported without its `id` (with its `sortOrder` as stored), a tag is `{value, type}`
/// and a dependency `{feature, enabled?, variants?}`. For example
/// `/strategies/0/parameters/rollout`, `/strategies/1/constraints/0`, `/variants/2/weight`,
/// `/tags/0`, `/enabled`.
///
/// `from` is the value as stored, `to` as it would be; a side where the value does not exist
/// is left out (an added strategy has no `from`, a removed constraint no `to`); `null` is a
/// value (`"description": null`). In a list, elements are matched by equality first (a
/// removed constraint is one change, not a shift of the others): an element changed or added
/// is named by its index in the new list, a removed one by its index in the stored list (the
/// path to the list itself is, like every path, the one in the new document).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[non_exhaustive]
pub struct PlanChange {
    /// Where, as a JSON pointer into the feature's document.
    pub path: String,
    /// The stored value; absent when there is none.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub from: Option<Value>,
    /// The value the import would write; absent when it would be removed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub to: Option<Value>,
}

impl PlanChange {
    /// A change at `path`.
    pub fn new(path: impl Into<String>, from: Option<Value>, to: Option<Value>) -> Self {
        Self {
            path: path.into(),
            from,
            to,
        }
    }
}

/// A member that is there, `null` included (serde reads a `null` `Option` as `None`).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}
