//! What an import answers: its report, and the dry run's findings in Unleash's shape
//! (`importTogglesValidateSchema`).

use serde::{Deserialize, Serialize};

use crate::error::ErrorDetail;

/// What an import did: [`import_toggles`](crate::ToggleAdmin::import_toggles)' result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    /// The features created, in payload order.
    pub created: Vec<String>,
    /// The existing features updated (their metadata, strategies, tags … replaced), in
    /// payload order.
    pub updated: Vec<String>,
    /// The payload's features that are archived in the store: skipped with everything that
    /// belongs to them.
    pub skipped_archived: Vec<String>,
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
