//! The plan of an import: each payload feature's document as stored and as the import would
//! write it, and the differences between the two as JSON pointers.
//!
//! Both documents are built from the same domain values the import writes (the snapshot's
//! state, and the state [`plan`](super::plan()) computed from the payload), never from the
//! payload as given: a document is compared after the normalisation the store applies, so
//! a feature the import would not write plans as `unchanged`, and one it would write has at
//! least one change.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{FeatureEnvironmentState, FeatureMeta, ImportWrites, Snapshot};
use crate::model::{
    FeaturePlan, FeatureStrategy, ImportMode, ImportPlan, ParentDependency, PlanAction, PlanChange,
    Tag,
};

/// One feature, everything a plan compares.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FeatureState<'a> {
    /// Its metadata.
    pub meta: &'a FeatureMeta,
    /// Its configuration in the target environment.
    pub environment: &'a FeatureEnvironmentState,
    /// Its tags.
    pub tags: &'a [Tag],
    /// Its parents.
    pub parents: &'a [ParentDependency],
}

/// A feature's document: `{type, description, stale, impressionData, enabled, variants,
/// strategies, tags, dependencies}`, the strategies as exported without their id. Every
/// difference the store would see between two states is a difference of their documents.
pub(crate) fn feature_document(state: FeatureState<'_>) -> Value {
    let strategies: Vec<Value> = state
        .environment
        .strategies
        .iter()
        .map(strategy_document)
        .collect();
    json!({
        "type": state.meta.feature_type,
        "description": state.meta.description,
        "stale": state.meta.stale,
        "impressionData": state.meta.impression_data,
        "enabled": state.environment.enabled,
        "variants": state.environment.variants,
        "strategies": strategies,
        "tags": state.tags,
        "dependencies": state.parents,
    })
}

/// A strategy as exported, without its id (the store's, or a new one the import gives).
fn strategy_document(strategy: &FeatureStrategy) -> Value {
    let mut value = serde_json::to_value(strategy).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.remove("id");
    }
    value
}

/// The differences between `before` and `after`, each at a JSON pointer (RFC 6901) into
/// them: members by name; list elements matched by equality first (a longest common
/// subsequence), the unmatched ones between two matches paired in order and compared
/// member by member; left over ones are removed (at their index in `before`) or added (at
/// their index in `after`). Equal values give no change.
pub(crate) fn diff(before: &Value, after: &Value) -> Vec<PlanChange> {
    let mut changes = Vec::new();
    diff_at(&mut String::new(), before, after, &mut changes);
    changes
}

fn diff_at(path: &mut String, before: &Value, after: &Value, out: &mut Vec<PlanChange>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => diff_objects(path, old, new, out),
        (Value::Array(old), Value::Array(new)) => diff_arrays(path, old, new, out),
        _ => out.push(PlanChange::new(
            path.clone(),
            Some(before.clone()),
            Some(after.clone()),
        )),
    }
}

fn diff_objects(
    path: &mut String,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    out: &mut Vec<PlanChange>,
) {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let length = path.len();
        push_token(path, key);
        match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) => diff_at(path, a, b, out),
            (Some(a), None) => out.push(PlanChange::new(path.clone(), Some(a.clone()), None)),
            (None, Some(b)) => out.push(PlanChange::new(path.clone(), None, Some(b.clone()))),
            (None, None) => {}
        }
        path.truncate(length);
    }
}

fn diff_arrays(path: &mut String, old: &[Value], new: &[Value], out: &mut Vec<PlanChange>) {
    let matches = common_subsequence(old, new);
    let (mut i, mut j) = (0, 0);
    let ends = matches
        .iter()
        .copied()
        .chain(std::iter::once((old.len(), new.len())));
    for (next_i, next_j) in ends {
        // The unmatched elements before this match: pair them in order, then what is left.
        while i < next_i && j < next_j {
            let length = path.len();
            push_token(path, &j.to_string());
            diff_at(path, &old[i], &new[j], out);
            path.truncate(length);
            i += 1;
            j += 1;
        }
        for (at, removed) in old.iter().enumerate().take(next_i).skip(i) {
            out.push(PlanChange::new(
                format!("{path}/{at}"),
                Some(removed.clone()),
                None,
            ));
        }
        for (at, added) in new.iter().enumerate().take(next_j).skip(j) {
            out.push(PlanChange::new(
                format!("{path}/{at}"),
                None,
                Some(added.clone()),
            ));
        }
        (i, j) = (next_i + 1, next_j + 1);
    }
}

/// The index pairs of a longest common subsequence of `a` and `b` (by equality), in order.
fn common_subsequence(a: &[Value], b: &[Value]) -> Vec<(usize, usize)> {
    // Lists are short (at most 30 strategies, a few variants, tags and constraints): the
    // quadratic table is fine.
    let (n, m) = (a.len(), b.len());
    let mut table = vec![0usize; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[at(i, j)] = if a[i] == b[j] {
                table[at(i + 1, j + 1)] + 1
            } else {
                table[at(i + 1, j)].max(table[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::with_capacity(table[at(0, 0)]);
    while i < n && j < m {
        if a[i] == b[j] {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if table[at(i + 1, j)] >= table[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Append `/token` to a JSON pointer, escaped (`~` as `~0`, `/` as `~1`).
fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// The plan of a valid import: for each payload feature, its action and, for a creation or
/// an update, the differences between its document as stored and as `writes` leave it.
pub(crate) fn preview(snapshot: &Snapshot, writes: &ImportWrites, mode: ImportMode) -> ImportPlan {
    let metas: BTreeMap<&str, &FeatureMeta> = writes
        .features
        .iter()
        .map(|(name, meta, _)| (name.as_str(), meta))
        .collect();
    let environments: BTreeMap<&str, &FeatureEnvironmentState> = writes
        .feature_environments
        .iter()
        .map(|(name, state)| (name.as_str(), state))
        .collect();
    let tags: BTreeMap<&str, &[Tag]> = writes
        .tags
        .iter()
        .map(|(name, tags)| (name.as_str(), tags.as_slice()))
        .collect();
    let parents: BTreeMap<&str, &[ParentDependency]> = writes
        .dependencies
        .iter()
        .map(|(name, parents)| (name.as_str(), parents.as_slice()))
        .collect();
    let empty = FeatureEnvironmentState::default();
    let features = writes
        .outcomes
        .iter()
        .map(|outcome| {
            let name = outcome.name.as_str();
            let stored = snapshot.features.get(name);
            let environment = snapshot.feature_environments.get(name).unwrap_or(&empty);
            let stored_tags = snapshot.tags.get(name).map_or(&[][..], Vec::as_slice);
            let stored_parents = snapshot
                .dependencies
                .get(name)
                .map_or(&[][..], Vec::as_slice);
            let before = stored.map(|f| FeatureState {
                meta: &f.meta,
                environment,
                tags: stored_tags,
                parents: stored_parents,
            });
            let changes = match (outcome.action, before) {
                (PlanAction::Create | PlanAction::Update, before) => {
                    let Some(meta) = metas.get(name).copied().or(before.as_ref().map(|b| b.meta))
                    else {
                        return feature_plan(outcome, Vec::new());
                    };
                    let after = FeatureState {
                        meta,
                        environment: environments.get(name).copied().unwrap_or(environment),
                        tags: tags.get(name).copied().unwrap_or(stored_tags),
                        parents: parents.get(name).copied().unwrap_or(stored_parents),
                    };
                    let after = feature_document(after);
                    match before {
                        Some(before) if outcome.action == PlanAction::Update => {
                            diff(&feature_document(before), &after)
                        }
                        _ => created(after),
                    }
                }
                _ => Vec::new(),
            };
            feature_plan(outcome, changes)
        })
        .collect();
    ImportPlan {
        project: writes.project.clone(),
        environment: writes.environment.clone(),
        mode,
        features,
        context_fields: writes.context_fields.clone(),
        tag_types: writes.tag_types.clone(),
        warnings: writes.report.warnings.clone(),
    }
}

fn feature_plan(outcome: &super::FeatureOutcome, changes: Vec<PlanChange>) -> FeaturePlan {
    FeaturePlan {
        name: outcome.name.clone(),
        action: outcome.action,
        reason: outcome.reason,
        changes,
    }
}

/// The changes of a creation: each member of the new document that is not empty.
fn created(document: Value) -> Vec<PlanChange> {
    let Value::Object(fields) = document else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter(|(_, v)| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(key, value)| {
            let mut path = String::new();
            push_token(&mut path, &key);
            PlanChange::new(path, None, Some(value))
        })
        .collect()
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "preview_tests.rs"]
mod preview_tests;
