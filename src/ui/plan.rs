//! The plan of an import on the page: what will be created, changed (with the old and new
//! values), left unchanged and skipped, and the fingerprint the Import button must send back
//! so that an import only ever does what the person saw.

use maud::{Markup, html};
use sha2::{Digest, Sha256};

use crate::model::{FeaturePlan, ImportPlan, PlanAction, PlanChange, SkipReason};

/// The most changes shown in full; a plan beyond it is summarised, so that the page stays
/// small (under 100 KB) whatever the document.
const MAX_CHANGES_SHOWN: usize = 200;
/// The most characters of one value shown.
const MAX_VALUE_CHARS: usize = 160;
/// The most names listed for unchanged or skipped features.
const MAX_NAMES_SHOWN: usize = 50;

/// A digest of the plan: the Import button carries the one of the plan shown, and the import
/// runs only when the plan computed at that moment has the same (the document, the target,
/// the mode and the store all still give what was seen).
pub(crate) fn fingerprint(plan: &ImportPlan) -> String {
    let bytes = serde_json::to_vec(plan).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The plan: a summary line, the features created and updated with their changes, the
/// context fields and tag types created, and the names left unchanged or skipped.
pub(crate) fn view(plan: &ImportPlan) -> Markup {
    let count = |action| plan.features.iter().filter(|f| f.action == action).count();
    let (create, update) = (count(PlanAction::Create), count(PlanAction::Update));
    let (unchanged, skip) = (count(PlanAction::Unchanged), count(PlanAction::Skip));
    // Each changing feature with how many of its changes are shown.
    let mut budget = MAX_CHANGES_SHOWN;
    let mut changing: Vec<(&FeaturePlan, usize)> = Vec::new();
    let mut beyond: Vec<&str> = Vec::new();
    for f in plan
        .features
        .iter()
        .filter(|f| matches!(f.action, PlanAction::Create | PlanAction::Update))
    {
        if budget == 0 {
            beyond.push(&f.name);
            continue;
        }
        let shown = f.changes.len().min(budget);
        budget -= shown;
        changing.push((f, shown));
    }
    html! {
        section.plan {
            h2 { "Plan (" (plan.mode) ")" }
            p {
                (create) " to create, " (update) " to update, " (unchanged) " unchanged, "
                (skip) " skipped"
                @if !plan.context_fields.is_empty() { "; context fields to create: " (plan.context_fields.len()) }
                @if !plan.tag_types.is_empty() { "; tag types to create: " (plan.tag_types.len()) }
                "."
            }
            @if !plan.has_changes() {
                p.flash role="status" { "Nothing to change: the store already holds this document." }
            }
            @if !plan.context_fields.is_empty() {
                p { "Context fields to create: " @for f in &plan.context_fields { code.tag { (f.name) } } }
            }
            @if !plan.tag_types.is_empty() {
                p { "Tag types to create: " @for t in &plan.tag_types { code.tag { (t.name) } } }
            }
            @if !changing.is_empty() {
                table.plan {
                    thead { tr { th { "Feature" } th { "Action" } th { "Where" } th { "Now" } th { "After the import" } } }
                    tbody {
                        @for (feature, shown) in &changing {
                            @let shown = *shown;
                            @let hidden = feature.changes.len() - shown;
                            @if feature.changes.is_empty() {
                                tr {
                                    td { strong { (feature.name) } }
                                    td { (action_label(feature)) }
                                    td colspan="3" {}
                                }
                            }
                            @for (i, change) in feature.changes.iter().take(shown).enumerate() {
                                tr {
                                    td { @if i == 0 { strong { (feature.name) } } }
                                    td { @if i == 0 { (action_label(feature)) } }
                                    (change_cells(change))
                                }
                            }
                            @if hidden > 0 && shown > 0 {
                                tr { td {} td {} td colspan="3" .muted { "… and " (hidden) " more changes" } }
                            }
                        }
                    }
                }
            }
            @if !beyond.is_empty() {
                p.muted {
                    "… and " (beyond.len()) " more features to create or update, their changes not shown: "
                    @for name in beyond.iter().take(MAX_NAMES_SHOWN) { span.tag { (name) } }
                    @if beyond.len() > MAX_NAMES_SHOWN { "…" }
                }
            }
            (names("Unchanged", plan, |f| f.action == PlanAction::Unchanged))
            (names("Skipped (archived)", plan, |f| f.reason == Some(SkipReason::Archived)))
            (names("Skipped (exists; create-missing)", plan, |f| f.reason == Some(SkipReason::Exists)))
        }
    }
}

fn action_label(feature: &FeaturePlan) -> &'static str {
    match feature.action {
        PlanAction::Create => "create",
        PlanAction::Update => "update",
        PlanAction::Unchanged => "unchanged",
        PlanAction::Skip => "skip",
    }
}

fn change_cells(change: &PlanChange) -> Markup {
    html! {
        td { code { (if change.path.is_empty() { "/" } else { change.path.as_str() }) } }
        td { (value(change.from.as_ref())) }
        td { (value(change.to.as_ref())) }
    }
}

/// A value as compact JSON, cut to [`MAX_VALUE_CHARS`]; an absent side is a dash.
fn value(value: Option<&serde_json::Value>) -> Markup {
    match value {
        None => html! { span.muted { "—" } },
        Some(v) => {
            let text = v.to_string();
            let cut: String = text.chars().take(MAX_VALUE_CHARS).collect();
            html! { code { (cut) @if cut.len() < text.len() { "…" } } }
        }
    }
}

fn names(title: &str, plan: &ImportPlan, which: impl Fn(&FeaturePlan) -> bool) -> Markup {
    let listed: Vec<&str> = plan
        .features
        .iter()
        .filter(|f| which(f))
        .map(|f| f.name.as_str())
        .collect();
    html! {
        @if !listed.is_empty() {
            p {
                (title) " (" (listed.len()) "): "
                @for name in listed.iter().take(MAX_NAMES_SHOWN) { span.tag { (name) } }
                @if listed.len() > MAX_NAMES_SHOWN { "…" }
            }
        }
    }
}
