//! The sub-lists of an import, checked against the imported features: strategies, feature
//! environments, tags and dependencies.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::check::{Selection, tag_value_problem};
use super::dependencies::{dependency_problem, normalise_dependency, upsert};
use super::parse::{EnvironmentEntry, Payload};
use super::strategy::{StrategyContext, normalise_strategy};
use super::{Issues, Snapshot};
use crate::model::{ContextField, FeatureStrategy, ParentDependency, Tag};

/// The most strategies one feature may have in one environment (Unleash's default limit).
const MAX_STRATEGIES: usize = 30;

/// What the checked members add up to, per imported feature.
#[derive(Default)]
pub(crate) struct Members {
    pub strategies: BTreeMap<String, Vec<FeatureStrategy>>,
    pub environments: BTreeMap<String, EnvironmentEntry>,
    pub tags: BTreeMap<String, Vec<Tag>>,
    /// The final parents of every child the payload gives parents to.
    pub dependencies: BTreeMap<String, Vec<ParentDependency>>,
}

/// Whether the sub-list entry at `path` names an imported feature: `Some(true)` to use it,
/// `Some(false)` to skip it with its skipped (archived or kept) feature, `None` (recorded) when it names a
/// feature outside `data.features`.
fn belongs(
    feature: &str,
    path: &dyn Fn() -> String,
    selection: &Selection,
    payload: &Payload,
    issues: &mut Issues,
) -> Option<bool> {
    if selection.active.contains_key(feature) {
        Some(true)
    } else if selection.skipped(feature) {
        Some(false)
    } else {
        // A feature of data.features with an invalid name or in another project is reported
        // there already; only names missing from data.features are reported here.
        if !payload.features.iter().any(|f| f.value.name == feature) {
            issues.error(
                path(),
                format!("\"{feature}\" is not one of the features in data.features"),
            );
        }
        None
    }
}

/// Strategies, feature environments, tags and dependencies.
pub(crate) fn check_members(
    payload: &Payload,
    snapshot: &Snapshot,
    selection: &Selection,
    segments: &BTreeMap<i64, i64>,
    new_fields: &[ContextField],
    issues: &mut Issues,
) -> Members {
    let mut members = Members::default();
    let listed: BTreeSet<i64> = payload.segments.iter().map(|s| s.value.id).collect();
    let segment = |id: i64| match segments.get(&id) {
        Some(stored) => Ok(*stored),
        None if listed.contains(&id) => Err(format!(
            "segment {id} of data.segments does not exist in the target"
        )),
        None => Err(format!("segment id {id} is not listed in data.segments")),
    };
    let context_field = |name: &str| {
        snapshot
            .context_fields
            .get(name)
            .or_else(|| new_fields.iter().find(|f| f.name == name))
    };
    let strategy_exists = |name: &str| snapshot.strategy_definitions.contains_key(name);
    let mut custom_used = BTreeSet::new();
    for item in &payload.strategies {
        let Some(feature) = item.value.get("featureName").and_then(Value::as_str) else {
            issues.error(
                format!("{}.featureName", item.path),
                "featureName is required: the feature the strategy belongs to",
            );
            continue;
        };
        if belongs(
            feature,
            // The path is only built for an error: imports have tens of thousands of items.
            &|| format!("{}.featureName", item.path),
            selection,
            payload,
            issues,
        ) != Some(true)
        {
            continue;
        }
        let ctx = StrategyContext {
            feature,
            strategy_exists: &strategy_exists,
            context_field: &context_field,
            segment: &segment,
        };
        if let Some(strategy) = normalise_strategy(&item.value, &item.path, &ctx, issues) {
            if snapshot
                .strategy_definitions
                .get(&strategy.name)
                .is_some_and(|d| d.editable)
            {
                custom_used.insert(strategy.name.clone());
            }
            let list = members.strategies.entry(feature.to_owned()).or_default();
            list.push(strategy);
            if list.len() == MAX_STRATEGIES + 1 {
                issues.error(
                    format!("{}.featureName", item.path),
                    format!("\"{feature}\" has more than {MAX_STRATEGIES} strategies"),
                );
            }
        }
    }
    for name in custom_used {
        issues.warn(
            "data.featureStrategies",
            format!("the custom strategy \"{name}\" is used; make sure its parameters are defined as in the source"),
        );
    }
    for item in &payload.feature_environments {
        let entry = &item.value;
        if belongs(
            &entry.feature,
            // The path is only built for an error: imports have tens of thousands of items.
            &|| format!("{}.featureName", item.path),
            selection,
            payload,
            issues,
        ) != Some(true)
        {
            continue;
        }
        if members
            .environments
            .insert(entry.feature.clone(), entry.clone())
            .is_some()
        {
            issues.error(
                format!("{}.featureName", item.path),
                format!(
                    "\"{}\" has more than one featureEnvironments entry",
                    entry.feature
                ),
            );
        }
    }
    let payload_tag_types: BTreeSet<&str> = payload
        .tag_types
        .iter()
        .map(|t| t.value.name.as_str())
        .collect();
    for item in &payload.feature_tags {
        let tag = &item.value;
        if belongs(
            &tag.feature_name,
            // The path is only built for an error: imports have tens of thousands of items.
            &|| format!("{}.featureName", item.path),
            selection,
            payload,
            issues,
        ) != Some(true)
        {
            continue;
        }
        // As in Unleash, an entry without a tag type is skipped (not given a default type).
        let Some(tag_type) = tag.tag_type.clone().or_else(|| tag.deprecated_type.clone()) else {
            issues.warn(
                format!("{}.tagType", item.path),
                "a tag without tagType is skipped, as Unleash skips it",
            );
            continue;
        };
        let mut ok = true;
        if !snapshot.tag_types.contains_key(&tag_type)
            && !payload_tag_types.contains(tag_type.as_str())
        {
            issues.error(
                format!("{}.tagType", item.path),
                format!("there is no tag type \"{tag_type}\", neither stored nor in data.tagTypes"),
            );
            ok = false;
        }
        if let Some(problem) = tag_value_problem(&tag.tag_value) {
            issues.error(format!("{}.tagValue", item.path), problem);
            ok = false;
        }
        let tag = Tag {
            value: tag.tag_value.trim().to_owned(),
            tag_type,
        };
        let list = members
            .tags
            .entry(item.value.feature_name.clone())
            .or_default();
        if ok && !list.contains(&tag) {
            list.push(tag);
        }
    }
    members
        .tags
        .retain(|feature, _| selection.active.contains_key(feature));
    check_dependencies(payload, snapshot, selection, &mut members, issues);
    members
}

/// `data.dependencies`: parents exist, no self-dependency, no chains, same project.
fn check_dependencies(
    payload: &Payload,
    snapshot: &Snapshot,
    selection: &Selection,
    members: &mut Members,
    issues: &mut Issues,
) {
    let mut graph = snapshot.dependencies.clone();
    let mut edges = Vec::new();
    for item in &payload.dependencies {
        let child = &item.value.feature;
        if belongs(
            child,
            &|| format!("{}.feature", item.path),
            selection,
            payload,
            issues,
        ) != Some(true)
        {
            continue;
        }
        for (j, dependency) in item.value.dependencies.iter().enumerate() {
            let path = format!("{}.dependencies[{j}]", item.path);
            let parent = &dependency.feature;
            let archived = selection.archived.contains(parent)
                || snapshot.features.get(parent).is_some_and(|f| f.archived);
            if archived {
                issues.warn(
                    path,
                    format!("the parent \"{parent}\" is archived: dependency skipped"),
                );
                continue;
            }
            let parents = graph.entry(child.clone()).or_default();
            *parents = upsert(parents, normalise_dependency(dependency));
            edges.push((path, child.clone(), parent.clone()));
        }
    }
    let project_of = |name: &str| {
        if selection.active.contains_key(name) {
            Some(payload.project.clone())
        } else {
            snapshot
                .features
                .get(name)
                .filter(|f| !f.archived)
                .map(|f| f.project.clone())
        }
    };
    for (path, child, parent) in &edges {
        if let Some(problem) = dependency_problem(child, parent, &graph, &project_of) {
            issues.error(format!("{path}.feature"), problem);
        }
    }
    for (_, child, _) in edges {
        if let Some(parents) = graph.get(&child) {
            members.dependencies.insert(child, parents.clone());
        }
    }
}
