//! The import pipeline: read → check every member → permissions → (when valid) the writes
//! and events.

use std::collections::BTreeSet;

use serde_json::Value;

use super::check::{
    Selection, check_context_fields, check_features, check_segments, check_tag_types, check_target,
};
use super::members::{Members, check_members};
use super::parse::{Payload, parse};
use super::strategy::enabling_strategy;
use super::{
    FeatureEnvironmentState, FeatureOutcome, ImportWrites, Issues, Outcome, PlannedEvent, Snapshot,
};
use crate::model::ImportReport;
use crate::model::{ContextField, FeatureStrategy};
use crate::model::{ImportMode, Json, Permission, PlanAction, SkipReason};

/// Check `body` against `snapshot` and plan the import under `mode`. `new_id` hands out
/// strategy ids.
pub(crate) fn plan(
    body: &Value,
    snapshot: &Snapshot,
    mode: ImportMode,
    new_id: &mut dyn FnMut() -> String,
) -> Outcome {
    let mut issues = Issues::default();
    let payload = parse(body, &mut issues);
    check_target(&payload, snapshot, &mut issues);
    let mut selection = check_features(&payload, snapshot, &mut issues);
    selection.apply(mode);
    let segments = check_segments(&payload, snapshot, &mut issues);
    let new_fields = check_context_fields(&payload, snapshot, &mut issues);
    let new_tag_types = check_tag_types(&payload, snapshot, &mut issues);
    let members = check_members(
        &payload,
        snapshot,
        &selection,
        &segments,
        &new_fields,
        &mut issues,
    );
    let permissions = permissions(
        &payload,
        snapshot,
        &selection,
        &members,
        &new_fields,
        &new_tag_types,
    );
    let warnings = issues.warnings.clone();
    let result = if issues.errors.is_empty() && issues.not_found.is_empty() {
        Ok(build(
            &payload,
            snapshot,
            &selection,
            members,
            new_fields,
            new_tag_types,
            warnings.clone(),
            new_id,
        ))
    } else {
        Err(issues)
    };
    Outcome {
        project: payload.project,
        environment: payload.environment,
        permissions,
        warnings,
        result,
    }
}

/// The permissions the import needs in the target project and environment (as
/// Unleash computes them, without demanding `DELETE_FEATURE_STRATEGY` for an empty feature list, and with
/// `CREATE_FEATURE_STRATEGY` when enabling adds the default strategy).
fn permissions(
    payload: &Payload,
    snapshot: &Snapshot,
    selection: &Selection,
    members: &Members,
    new_fields: &[ContextField],
    new_tag_types: &[super::TagType],
) -> Vec<Permission> {
    let mut needed = vec![Permission::UpdateFeature];
    if selection.active.values().any(|(_, exists)| !exists) {
        needed.push(Permission::CreateFeature);
    }
    if !new_tag_types.is_empty() {
        needed.push(Permission::CreateTagType);
    }
    if !new_fields.is_empty() {
        needed.push(Permission::CreateContextField);
    }
    let adds_default = members
        .environments
        .values()
        .any(|e| e.enabled && !members.strategies.contains_key(&e.feature));
    if !payload.strategies.is_empty() || adds_default {
        needed.push(Permission::CreateFeatureStrategy);
    }
    let deletes = selection.active.keys().any(|name| {
        snapshot
            .feature_environments
            .get(name)
            .is_some_and(|fe| !fe.strategies.is_empty())
    });
    if deletes {
        needed.push(Permission::DeleteFeatureStrategy);
    }
    if payload
        .feature_environments
        .iter()
        .any(|e| e.value.variants.is_some())
    {
        needed.push(Permission::UpdateFeatureEnvironmentVariants);
    }
    needed
}

/// The data of a `feature-environment-variants-updated` event.
#[derive(serde::Serialize)]
struct VariantList<'a> {
    variants: &'a [crate::model::Variant],
}

/// An event of the plan.
fn planned(
    event_type: &'static str,
    feature: Option<&str>,
    in_environment: bool,
    pre_data: Option<Json>,
    data: Option<Json>,
) -> PlannedEvent {
    PlannedEvent {
        event_type,
        feature: feature.map(str::to_owned),
        in_environment,
        pre_data,
        data,
    }
}

/// The strategies of a feature after the import: the payload's, created in payload order as
/// Unleash creates them: a given `sortOrder` is kept, an absent one is one more than the
/// highest of those created before it (0 for the first); then listed in sort order, payload
/// order among equals. A payload strategy equal to a stored one but for the id keeps that id.
///
/// When no payload strategy gives a `sortOrder` (an export gives none), the order is the
/// payload's and the numbers are the store's business: a strategy equal to a stored one but
/// for the id and the sort order keeps both when the stored number still sorts after the one
/// before it, so that importing a document that describes the stored strategies in their
/// order changes nothing, whatever numbers the store holds (gaps left by deleted strategies,
/// orders set by hand).
fn merge_strategies(
    before: &[FeatureStrategy],
    mut incoming: Vec<FeatureStrategy>,
    new_id: &mut dyn FnMut() -> String,
) -> Vec<FeatureStrategy> {
    let implicit = incoming.iter().all(|s| s.sort_order.is_none());
    let mut highest: Option<i64> = None;
    for strategy in &mut incoming {
        let order = strategy
            .sort_order
            .unwrap_or_else(|| highest.map_or(0, |h| h.saturating_add(1)));
        strategy.sort_order = Some(order);
        highest = Some(highest.map_or(order, |h| h.max(order)));
    }
    // A stable sort keeps payload order among equal sort orders.
    incoming.sort_by_key(|s| s.sort_order.unwrap_or(0));
    // The stored strategies not matched yet, with their stored positions.
    let mut unused: Vec<(usize, &FeatureStrategy)> = before.iter().enumerate().collect();
    // The sort order and stored position of the strategy before, when it was kept.
    let mut previous: Option<i64> = None;
    let mut previous_kept: Option<usize> = None;
    let mut result = Vec::with_capacity(incoming.len());
    for mut strategy in incoming {
        let same = if implicit {
            let candidate = unused.iter().position(|(_, old)| {
                FeatureStrategy {
                    id: None,
                    sort_order: None,
                    ..(*old).clone()
                } == FeatureStrategy {
                    sort_order: None,
                    ..strategy.clone()
                }
            });
            // The stored number is kept when it still sorts after the previous strategy (or
            // ties with it and came after it in the store); otherwise the next number is
            // given, and the strategy is a new one.
            let keeps = |(position, order): (usize, i64)| match previous {
                None => true,
                Some(p) => order > p || (order == p && previous_kept.is_some_and(|k| position > k)),
            };
            match candidate.and_then(|at| {
                let (position, old) = unused[at];
                old.sort_order
                    .map(|order| (at, position, order))
                    .filter(|(_, position, order)| keeps((*position, *order)))
            }) {
                Some((at, position, order)) => {
                    strategy.sort_order = Some(order);
                    previous_kept = Some(position);
                    Some(at)
                }
                None => {
                    strategy.sort_order = Some(previous.map_or(0, |p| p.saturating_add(1)));
                    previous_kept = None;
                    None
                }
            }
        } else {
            unused.iter().position(|(_, old)| {
                FeatureStrategy {
                    id: None,
                    ..(*old).clone()
                } == strategy
            })
        };
        previous = strategy.sort_order;
        strategy.id = Some(match same {
            Some(at) => unused.remove(at).1.id.clone().unwrap_or_else(&mut *new_id),
            None => new_id(),
        });
        result.push(strategy);
    }
    result
}

/// The writes and events of a valid import, and what happens to each payload feature. An
/// import that changes nothing has no writes and no events, not even `features-imported`.
#[allow(clippy::too_many_arguments)]
fn build(
    payload: &Payload,
    snapshot: &Snapshot,
    selection: &Selection,
    mut members: Members,
    new_fields: Vec<ContextField>,
    new_tag_types: Vec<super::TagType>,
    warnings: Vec<crate::error::ErrorDetail>,
    new_id: &mut dyn FnMut() -> String,
) -> ImportWrites {
    let mut writes = ImportWrites {
        project: payload.project.clone(),
        environment: payload.environment.clone(),
        ..ImportWrites::default()
    };
    let (mut feature_events, mut variant_events, mut tag_events) =
        (Vec::new(), Vec::new(), Vec::new());
    let (mut strategy_events, mut enabled_events) = (Vec::new(), Vec::new());
    let mut dependency_changes = Vec::new();
    for (child, parents) in std::mem::take(&mut members.dependencies) {
        let before = snapshot
            .dependencies
            .get(&child)
            .cloned()
            .unwrap_or_default();
        if parents != before {
            dependency_changes.push((child, before, parents));
        }
    }
    let mut changed: BTreeSet<String> = dependency_changes
        .iter()
        .map(|(child, _, _)| child.clone())
        .collect();
    for name in &selection.order {
        let Some((meta, exists)) = selection.active.get(name) else {
            continue;
        };
        let project = &payload.project;
        match snapshot.features.get(name).filter(|_| *exists) {
            Some(existing) => {
                if existing.meta != *meta {
                    changed.insert(name.clone());
                    writes.features.push((name.clone(), meta.clone(), false));
                    feature_events.push(planned(
                        "feature-metadata-updated",
                        Some(name),
                        false,
                        Some(Json::of(&existing.meta)),
                        Some(Json::of(&meta)),
                    ));
                }
            }
            None => {
                writes.features.push((name.clone(), meta.clone(), true));
                let data = Json::of(&crate::model::CreatedFeatureData {
                    name,
                    description: meta.description.as_deref(),
                    feature_type: &meta.feature_type,
                    project,
                    stale: meta.stale,
                    created_at: chrono::Utc::now(),
                    last_seen_at: None,
                    impression_data: meta.impression_data,
                    archived: false,
                });
                feature_events.push(planned(
                    "feature-created",
                    Some(name),
                    false,
                    None,
                    Some(data),
                ));
            }
        }
        let before = snapshot
            .feature_environments
            .get(name)
            .cloned()
            .unwrap_or_default();
        let entry = members.environments.remove(name);
        let mut incoming = members.strategies.remove(name).unwrap_or_default();
        if entry.as_ref().is_some_and(|e| e.enabled) && incoming.iter().all(|s| s.is_disabled()) {
            // Enabling with no (enabled) strategy adds Unleash's default, last; a stored equal
            // one keeps its id like any other strategy.
            let mut strategy =
                enabling_strategy(snapshot.project.as_ref(), &payload.environment, name);
            strategy.sort_order = None;
            incoming.push(strategy);
        }
        let after = FeatureEnvironmentState {
            enabled: entry.as_ref().map_or(before.enabled, |e| e.enabled),
            variants: entry
                .as_ref()
                .and_then(|e| e.variants.clone())
                .unwrap_or_else(|| before.variants.clone()),
            strategies: merge_strategies(&before.strategies, incoming, new_id),
        };
        if after.variants != before.variants {
            variant_events.push(planned(
                "feature-environment-variants-updated",
                Some(name),
                true,
                Some(Json::of(&VariantList {
                    variants: &before.variants,
                })),
                Some(Json::of(&VariantList {
                    variants: &after.variants,
                })),
            ));
        }
        let kept: BTreeSet<&str> = after
            .strategies
            .iter()
            .filter_map(|s| s.id.as_deref())
            .collect();
        let old: BTreeSet<&str> = before
            .strategies
            .iter()
            .filter_map(|s| s.id.as_deref())
            .collect();
        for removed in before
            .strategies
            .iter()
            .filter(|s| !s.id.as_deref().is_some_and(|id| kept.contains(id)))
        {
            strategy_events.push(planned(
                "feature-strategy-remove",
                Some(name),
                true,
                Some(Json::of(&removed)),
                None,
            ));
        }
        for added in after
            .strategies
            .iter()
            .filter(|s| !s.id.as_deref().is_some_and(|id| old.contains(id)))
        {
            strategy_events.push(planned(
                "feature-strategy-add",
                Some(name),
                true,
                None,
                Some(Json::of(&added)),
            ));
        }
        if after.enabled != before.enabled {
            let kind = if after.enabled {
                "feature-environment-enabled"
            } else {
                "feature-environment-disabled"
            };
            enabled_events.push(planned(kind, Some(name), true, None, None));
        }
        if after != before {
            changed.insert(name.clone());
            writes.feature_environments.push((name.clone(), after));
        }
        let tags_before = snapshot.tags.get(name).cloned().unwrap_or_default();
        let mut tags_after = members.tags.remove(name).unwrap_or_default();
        // Tags are a set; the export order (type, value) is the stored order too, so an
        // exported document imports back unchanged.
        tags_after.sort_by(|a, b| (&a.tag_type, &a.value).cmp(&(&b.tag_type, &b.value)));
        if tags_after != tags_before {
            changed.insert(name.clone());
            for tag in tags_before.iter().filter(|t| !tags_after.contains(t)) {
                tag_events.push(planned(
                    "feature-untagged",
                    Some(name),
                    false,
                    Some(Json::of(&tag)),
                    None,
                ));
            }
            for tag in tags_after.iter().filter(|t| !tags_before.contains(t)) {
                tag_events.push(planned(
                    "feature-tagged",
                    Some(name),
                    false,
                    None,
                    Some(Json::of(&tag)),
                ));
            }
            writes.tags.push((name.clone(), tags_after));
        }
    }
    writes.outcomes = outcomes(payload, selection, &changed);
    writes.report = report(&writes.outcomes, warnings);
    let mut events = feature_events;
    events.extend(variant_events);
    for tag_type in &new_tag_types {
        events.push(planned(
            "tag-type-created",
            None,
            false,
            None,
            Some(Json::of(&tag_type)),
        ));
    }
    events.extend(tag_events);
    for field in &new_fields {
        events.push(planned(
            "context-field-created",
            None,
            false,
            None,
            Some(Json::of(&field)),
        ));
    }
    events.extend(strategy_events);
    events.extend(enabled_events);
    for (child, before, parents) in dependency_changes {
        for parent in parents.iter().filter(|p| !before.contains(p)) {
            events.push(planned(
                "feature-dependency-added",
                Some(&child),
                false,
                None,
                Some(Json::of(&parent)),
            ));
        }
        writes.dependencies.push((child, parents));
    }
    if !events.is_empty() {
        events.push(planned("features-imported", None, true, None, None));
    }
    writes.tag_types = new_tag_types;
    writes.context_fields = new_fields;
    writes.events = events;
    writes
}

/// What happens to each payload feature, in payload order: created, updated (it is in
/// `changed`), unchanged, or skipped (archived, or kept as it is).
fn outcomes(
    payload: &Payload,
    selection: &Selection,
    changed: &BTreeSet<String>,
) -> Vec<FeatureOutcome> {
    let mut seen = BTreeSet::new();
    let mut outcomes = Vec::with_capacity(payload.features.len());
    for item in &payload.features {
        let name = &item.value.name;
        if !seen.insert(name.as_str()) {
            continue;
        }
        let (action, reason) = match selection.active.get(name) {
            Some((_, false)) => (PlanAction::Create, None),
            Some((_, true)) if changed.contains(name) => (PlanAction::Update, None),
            Some((_, true)) => (PlanAction::Unchanged, None),
            None if selection.archived.contains(name) => {
                (PlanAction::Skip, Some(SkipReason::Archived))
            }
            None if selection.existing.contains(name) => {
                (PlanAction::Skip, Some(SkipReason::Exists))
            }
            None => continue,
        };
        outcomes.push(FeatureOutcome {
            name: name.clone(),
            action,
            reason,
        });
    }
    outcomes
}

/// The report of an import: its outcomes by kind.
fn report(outcomes: &[FeatureOutcome], warnings: Vec<crate::error::ErrorDetail>) -> ImportReport {
    let mut report = ImportReport {
        warnings,
        ..ImportReport::default()
    };
    for outcome in outcomes {
        let list = match (outcome.action, outcome.reason) {
            (PlanAction::Create, _) => &mut report.created,
            (PlanAction::Update, _) => &mut report.updated,
            (PlanAction::Unchanged, _) => &mut report.unchanged,
            (PlanAction::Skip, Some(SkipReason::Exists)) => &mut report.skipped_existing,
            (PlanAction::Skip, _) => &mut report.skipped_archived,
        };
        list.push(outcome.name.clone());
    }
    report
}
