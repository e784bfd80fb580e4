//! The dry run's answer in Unleash's shape (`importTogglesValidateSchema`): errors, warnings
//! and missing permissions, each a list of `{message, affectedItems}` under Unleash's
//! messages, computed from the payload as Unleash computes them.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Snapshot;
use crate::error::ErrorDetail;
use crate::model::ValidationItem;

/// The strings at `member` of every object of the payload's list `list`.
fn names<'a>(data: &'a Value, list: &str, member: &str) -> Vec<&'a str> {
    data[list]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item[member].as_str())
        .collect()
}

/// Distinct, in first-seen order.
fn distinct(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

/// Push `message` with `items` when there are any.
fn found(into: &mut Vec<ValidationItem>, message: impl Into<String>, items: Vec<String>) {
    if !items.is_empty() {
        into.push(ValidationItem::new(message, items));
    }
}

/// Unleash's errors and warnings for `body` against `snapshot`.
pub(crate) fn unleash_findings(
    body: &Value,
    snapshot: &Snapshot,
) -> (Vec<ValidationItem>, Vec<ValidationItem>) {
    let (mut errors, mut warnings) = (Vec::new(), Vec::new());
    let target = body["project"].as_str().unwrap_or_default();
    let data = &body["data"];
    let features = names(data, "features", "name");
    let strategies = names(data, "featureStrategies", "name");
    found(
        &mut errors,
        "We detected the following custom strategy that needs to be created first:",
        distinct(
            strategies
                .iter()
                .filter(|s| !snapshot.strategy_definitions.contains_key(**s))
                .map(|s| (*s).to_owned()),
        ),
    );
    let mismatched = data["contextFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|field| {
            let name = field["name"].as_str()?;
            let existing = snapshot.context_fields.get(name)?;
            let known: BTreeSet<&str> = existing
                .legal_values
                .iter()
                .flatten()
                .map(|v| v.value.as_str())
                .collect();
            let imported = field["legalValues"].as_array()?;
            imported
                .iter()
                .any(|v| v["value"].as_str().is_some_and(|v| !known.contains(v)))
                .then(|| name.to_owned())
        });
    found(
        &mut errors,
        "We detected the following context fields that do not have matching legal values with the imported ones:",
        distinct(mismatched),
    );
    let elsewhere = features.iter().filter_map(|name| {
        let existing = snapshot.features.get(*name)?;
        (existing.project != target).then(|| format!("{name} (in project {})", existing.project))
    });
    found(
        &mut errors,
        format!(
            "You cannot import a features that already exist in other projects. You already have the following features defined outside of project {target}:"
        ),
        distinct(elsewhere),
    );
    let mut seen = BTreeSet::new();
    let duplicates = features
        .iter()
        .filter(|name| !seen.insert(**name))
        .map(|name| (*name).to_owned());
    found(
        &mut errors,
        "We detected the following features are duplicate in your import data:",
        distinct(duplicates),
    );
    if let Some(project) = &snapshot.project {
        if let Some(naming) = &project.feature_naming
            && let Ok(pattern) = crate::names::naming_regex(&naming.pattern)
        {
            let mut misfits: Vec<String> = distinct(
                features
                    .iter()
                    .filter(|name| !pattern.is_match(name))
                    .map(|name| (*name).to_owned()),
            );
            misfits.sort();
            let mut message = format!(
                "Features imported into this project must match the project's feature naming pattern: \"{}\".",
                naming.pattern
            );
            if let Some(example) = &naming.example {
                message.push_str(&format!(" For example: \"{example}\"."));
            }
            if let Some(description) = &naming.description {
                message.push_str(&format!(
                    " The pattern is described as follows: \"{description}\""
                ));
            }
            message.push_str(" The following features do not match the pattern:");
            found(&mut errors, message, misfits);
        }
        if let Some(limit) = project.feature_limit {
            let current = snapshot
                .features
                .values()
                .filter(|f| f.project == target && !f.archived)
                .count();
            let new = features
                .iter()
                .copied()
                .collect::<BTreeSet<&str>>()
                .into_iter()
                .filter(|name| {
                    !snapshot
                        .features
                        .get(*name)
                        .is_some_and(|f| f.project == target && !f.archived)
                })
                .count();
            if current + new > limit as usize {
                errors.push(ValidationItem::new(
                    format!(
                        "We detected you want to create {new} new features to a project that already has {current} existing features, exceeding the maximum limit of {limit}."
                    ),
                    Vec::new(),
                ));
            }
        }
    }
    let missing_segments = names(data, "segments", "name")
        .into_iter()
        .filter(|name| {
            !snapshot
                .segments
                .iter()
                .any(|s| s.name == *name && s.project.as_deref().is_none_or(|p| p == target))
        })
        .map(str::to_owned);
    found(
        &mut errors,
        "We detected the following segments that need to be created first:",
        distinct(missing_segments),
    );
    let in_payload: BTreeSet<&str> = features.iter().copied().collect();
    let missing_parents = data["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| d["dependencies"].as_array().into_iter().flatten())
        .filter_map(|p| p["feature"].as_str())
        .filter(|parent| {
            !in_payload.contains(parent)
                && snapshot.features.get(*parent).is_none_or(|f| f.archived)
        })
        .map(str::to_owned);
    found(
        &mut errors,
        "We detected the following dependencies that need to be created first:",
        distinct(missing_parents),
    );
    found(
        &mut warnings,
        "The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:",
        distinct(
            strategies
                .iter()
                .filter(|s| {
                    snapshot
                        .strategy_definitions
                        .get(**s)
                        .is_some_and(|d| d.editable)
                })
                .map(|s| (*s).to_owned()),
        ),
    );
    found(
        &mut warnings,
        "The following features will not be imported as they are currently archived. To import them, please unarchive them first:",
        distinct(
            features
                .iter()
                .filter(|name| snapshot.features.get(**name).is_some_and(|f| f.archived))
                .map(|name| (*name).to_owned()),
        ),
    );
    found(
        &mut warnings,
        "The following features already exist in this project and will be overwritten:",
        distinct(
            features
                .iter()
                .filter(|name| {
                    snapshot
                        .features
                        .get(**name)
                        .is_some_and(|f| !f.archived && f.project == target)
                })
                .map(|name| (*name).to_owned()),
        ),
    );
    (errors, warnings)
}

/// The name Unleash shows for a permission the dry run finds missing (its display name, as
/// stored in Unleash's database); other names as they are.
pub(crate) fn permission_display_name(permission: &str) -> String {
    match permission {
        "UPDATE_FEATURE" => "Update feature flags",
        "CREATE_FEATURE" => "Create feature flags",
        "CREATE_TAG_TYPE" => "Create tag types",
        "CREATE_CONTEXT_FIELD" => "Create context fields",
        "CREATE_FEATURE_STRATEGY" => "Create activation strategies",
        "DELETE_FEATURE_STRATEGY" => "Delete activation strategies",
        "UPDATE_FEATURE_ENVIRONMENT_VARIANTS" => "Update variants",
        other => other,
    }
    .to_owned()
}

/// This crate's problems as items: one per problem, its path the affected item.
pub(crate) fn items_of(problems: Vec<ErrorDetail>) -> Vec<ValidationItem> {
    problems
        .into_iter()
        .map(|p| ValidationItem::new(p.message.clone(), p.path.into_iter().collect()))
        .collect()
}
