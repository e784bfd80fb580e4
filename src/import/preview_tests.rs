//! The plan of an import against a snapshot: an exported snapshot plans as unchanged, an
//! edit plans as exactly that edit, and what an import writes plans as unchanged afterwards
//! (the plan converges).

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::{
    ExistingFeature, ExportSource, ExportedFeature, FeatureEnvironmentState, FeatureMeta,
    ImportWrites, Snapshot, build_export, builtin_context_fields, builtin_strategy_definitions,
    builtin_tag_types, plan,
};
use super::preview;
use crate::model::{
    FeatureStrategy, ImportMode, ImportPlan, PlanAction, Project, SkipReason, Tag, Variant,
    WeightType,
};

const PROJECT: &str = "shop";
const ENVIRONMENT: &str = "production";

fn snapshot() -> Snapshot {
    Snapshot {
        project: Some(Project {
            id: PROJECT.into(),
            name: "Shop".into(),
            environments: vec![ENVIRONMENT.into()],
            ..Project::default()
        }),
        environment_exists: true,
        strategy_definitions: builtin_strategy_definitions()
            .into_iter()
            .map(|d| (d.name.clone(), d))
            .collect(),
        context_fields: builtin_context_fields()
            .into_iter()
            .map(|f| (f.name.clone(), f))
            .collect(),
        tag_types: builtin_tag_types()
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect(),
        ..Snapshot::default()
    }
}

fn meta() -> FeatureMeta {
    FeatureMeta {
        feature_type: "release".into(),
        description: None,
        stale: false,
        impression_data: false,
    }
}

fn rollout(percent: u8, order: i64, id: &str) -> FeatureStrategy {
    let mut parameters = BTreeMap::new();
    parameters.insert("rollout".to_owned(), percent.to_string());
    parameters.insert("stickiness".to_owned(), "default".to_owned());
    parameters.insert("groupId".to_owned(), "checkout".to_owned());
    FeatureStrategy {
        id: Some(id.to_owned()),
        name: "flexibleRollout".into(),
        title: Some(None),
        disabled: Some(Some(false)),
        feature_name: Some("checkout".into()),
        sort_order: Some(order),
        parameters,
        ..FeatureStrategy::default()
    }
}

fn variant(name: &str, weight: u32, weight_type: WeightType) -> Variant {
    Variant {
        name: name.into(),
        weight,
        weight_type: Some(weight_type),
        stickiness: Some("default".into()),
        payload: None,
        overrides: None,
    }
}

/// The snapshot with `checkout` stored: its strategies (sort orders with gaps, as deletions
/// leave them), variants and a tag.
fn stored(strategies: Vec<FeatureStrategy>, variants: Vec<Variant>) -> Snapshot {
    let mut snapshot = snapshot();
    snapshot.features.insert(
        "checkout".into(),
        ExistingFeature {
            project: PROJECT.into(),
            archived: false,
            meta: meta(),
        },
    );
    snapshot.feature_environments.insert(
        "checkout".into(),
        FeatureEnvironmentState {
            enabled: true,
            variants,
            strategies,
        },
    );
    snapshot.tags.insert(
        "checkout".into(),
        vec![Tag {
            value: "team-a".into(),
            tag_type: "simple".into(),
        }],
    );
    snapshot
}

/// The import body of the snapshot's features, exported.
fn export(snapshot: &Snapshot) -> Value {
    let features = snapshot
        .features
        .iter()
        .filter(|(_, f)| !f.archived)
        .map(|(name, f)| ExportedFeature {
            name: name.clone(),
            project: f.project.clone(),
            archived: false,
            meta: f.meta.clone(),
            environment: Some(
                snapshot
                    .feature_environments
                    .get(name)
                    .cloned()
                    .unwrap_or_default(),
            ),
            tags: snapshot.tags.get(name).cloned().unwrap_or_default(),
            parents: snapshot.dependencies.get(name).cloned().unwrap_or_default(),
        })
        .collect();
    let data = build_export(ExportSource {
        environment: ENVIRONMENT,
        features,
        segments: &snapshot.segments,
        context_fields: &snapshot.context_fields,
        tag_types: &snapshot.tag_types,
    });
    json!({"project": PROJECT, "environment": ENVIRONMENT, "data": data})
}

fn writes(body: &Value, snapshot: &Snapshot, mode: ImportMode) -> ImportWrites {
    let mut next = 0;
    let outcome = plan(body, snapshot, mode, &mut || {
        next += 1;
        format!("new-{next}")
    });
    match outcome.result {
        Ok(writes) => writes,
        Err(issues) => panic!("{:?}", issues.into_error()),
    }
}

fn plan_of(body: &Value, snapshot: &Snapshot, mode: ImportMode) -> ImportPlan {
    preview(snapshot, &writes(body, snapshot, mode), mode)
}

/// The snapshot after `writes` are committed (what the facade's change set does, in domain
/// terms).
fn applied(mut snapshot: Snapshot, writes: ImportWrites) -> Snapshot {
    for (name, meta, _) in writes.features {
        snapshot.features.insert(
            name,
            ExistingFeature {
                project: writes.project.clone(),
                archived: false,
                meta,
            },
        );
    }
    for (name, state) in writes.feature_environments {
        snapshot.feature_environments.insert(name, state);
    }
    for (name, tags) in writes.tags {
        snapshot.tags.insert(name, tags);
    }
    for (name, parents) in writes.dependencies {
        snapshot.dependencies.insert(name, parents);
    }
    for field in writes.context_fields {
        snapshot.context_fields.insert(field.name.clone(), field);
    }
    for tag_type in writes.tag_types {
        snapshot.tag_types.insert(tag_type.name.clone(), tag_type);
    }
    snapshot
}

fn actions(plan: &ImportPlan) -> Vec<(&str, PlanAction)> {
    plan.features
        .iter()
        .map(|f| (f.name.as_str(), f.action))
        .collect()
}

#[test]
fn an_export_of_the_store_plans_as_unchanged_and_writes_nothing() {
    // Sort orders 3 and 7 (gaps), variable weights as the store distributed them.
    let snapshot = stored(
        vec![rollout(50, 3, "s1"), rollout(20, 7, "s2")],
        vec![
            variant("a", 334, WeightType::Variable),
            variant("b", 333, WeightType::Variable),
            variant("c", 333, WeightType::Variable),
        ],
    );
    let body = export(&snapshot);
    let writes = writes(&body, &snapshot, ImportMode::Replace);
    assert!(writes.changes_nothing(), "{writes:?}");
    assert_eq!(writes.report.unchanged, ["checkout"]);
    assert!(writes.report.updated.is_empty());
    let plan = preview(&snapshot, &writes, ImportMode::Replace);
    assert_eq!(actions(&plan), [("checkout", PlanAction::Unchanged)]);
    assert!(plan.features[0].changes.is_empty());
    assert!(!plan.has_changes());
}

#[test]
fn edits_plan_as_exactly_those_changes_and_converge_once_applied() {
    let snapshot = stored(
        vec![rollout(50, 0, "s1"), rollout(20, 1, "s2")],
        vec![
            variant("a", 500, WeightType::Variable),
            variant("b", 500, WeightType::Variable),
        ],
    );
    let mut body = export(&snapshot);
    let data = &mut body["data"];
    // A weight: a fixed 200 redistributes the other variable one.
    data["featureEnvironments"][0]["variants"][0]["weight"] = json!(200);
    data["featureEnvironments"][0]["variants"][0]["weightType"] = json!("fix");
    // A rollout changed, a strategy added.
    data["featureStrategies"][1]["parameters"]["rollout"] = json!("30");
    let mut added = data["featureStrategies"][0].clone();
    added["parameters"]["rollout"] = json!("5");
    data["featureStrategies"]
        .as_array_mut()
        .unwrap()
        .push(added);
    // A new flag.
    data["features"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "search", "type": "experiment"}));
    let plan = plan_of(&body, &snapshot, ImportMode::Replace);
    assert_eq!(
        actions(&plan),
        [
            ("checkout", PlanAction::Update),
            ("search", PlanAction::Create)
        ]
    );
    let paths: Vec<&str> = plan.features[0]
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "/strategies/1/parameters/rollout",
            "/strategies/2",
            "/variants/0/weight",
            "/variants/0/weightType",
            "/variants/1/weight",
        ],
        "{:#?}",
        plan.features[0].changes
    );
    let rollout = &plan.features[0].changes[0];
    assert_eq!(
        (rollout.from.clone(), rollout.to.clone()),
        (Some(json!("20")), Some(json!("30")))
    );
    assert_eq!(plan.features[0].changes[1].from, None);
    assert_eq!(
        plan.features[0].changes[1].to.as_ref().unwrap()["sortOrder"],
        2
    );
    assert_eq!(
        plan.features[0].changes[4].to,
        Some(json!(800)),
        "the variable variant takes what the fixed one leaves"
    );
    let creation: Vec<&str> = plan.features[1]
        .changes
        .iter()
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(creation, ["/enabled", "/impressionData", "/stale", "/type"]);
    // Applied, the same document plans as unchanged.
    let after = applied(
        snapshot.clone(),
        writes(&body, &snapshot, ImportMode::Replace),
    );
    let again = writes(&body, &after, ImportMode::Replace);
    assert!(again.changes_nothing(), "{again:?}");
    let again = preview(&after, &again, ImportMode::Replace);
    assert_eq!(
        actions(&again),
        [
            ("checkout", PlanAction::Unchanged),
            ("search", PlanAction::Unchanged)
        ]
    );
}

#[test]
fn a_removed_constraint_and_tag_are_removals() {
    let mut strategy = rollout(50, 0, "s1");
    strategy.constraints = serde_json::from_value(json!([
        {"contextName": "userId", "operator": "IN", "values": ["1"]},
        {"contextName": "appName", "operator": "IN", "values": ["web"]}
    ]))
    .unwrap();
    let snapshot = stored(vec![strategy], Vec::new());
    let mut body = export(&snapshot);
    let removed = body["data"]["featureStrategies"][0]["constraints"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    body["data"]["featureTags"] = json!([]);
    let plan = plan_of(&body, &snapshot, ImportMode::Replace);
    let changes = &plan.features[0].changes;
    assert_eq!(changes.len(), 2, "{changes:#?}");
    assert_eq!(changes[0].path, "/strategies/0/constraints/0");
    assert_eq!(
        changes[0].from.as_ref().unwrap()["contextName"],
        removed["contextName"]
    );
    assert_eq!(changes[0].to, None);
    assert_eq!(changes[1].path, "/tags/0");
    assert_eq!(changes[1].to, None);
}

#[test]
fn create_missing_skips_existing_features_and_writes_nothing_for_them() {
    let snapshot = stored(vec![rollout(50, 0, "s1")], Vec::new());
    let mut body = export(&snapshot);
    body["data"]["featureStrategies"][0]["parameters"]["rollout"] = json!("90");
    body["data"]["features"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "search"}));
    let writes = writes(&body, &snapshot, ImportMode::CreateMissing);
    assert!(
        writes
            .feature_environments
            .iter()
            .all(|(n, _)| n != "checkout")
            && writes.tags.iter().all(|(n, _)| n != "checkout")
            && writes.features.iter().all(|(n, _, _)| n != "checkout"),
        "{writes:?}"
    );
    assert_eq!(writes.report.skipped_existing, ["checkout"]);
    assert_eq!(writes.report.created, ["search"]);
    let plan = preview(&snapshot, &writes, ImportMode::CreateMissing);
    assert_eq!(plan.features[0].action, PlanAction::Skip);
    assert_eq!(plan.features[0].reason, Some(SkipReason::Exists));
    assert!(plan.features[0].changes.is_empty());
    // Only existing features: nothing at all.
    let only = export(&snapshot);
    assert!(writes_nothing(&only, &snapshot, ImportMode::CreateMissing));
}

fn writes_nothing(body: &Value, snapshot: &Snapshot, mode: ImportMode) -> bool {
    writes(body, snapshot, mode).changes_nothing()
}

#[test]
fn an_archived_feature_is_skipped_with_its_reason() {
    let mut snapshot = stored(vec![rollout(50, 0, "s1")], Vec::new());
    let body = export(&snapshot);
    if let Some(f) = snapshot.features.get_mut("checkout") {
        f.archived = true;
    }
    let plan = plan_of(&body, &snapshot, ImportMode::Replace);
    assert_eq!(plan.features[0].action, PlanAction::Skip);
    assert_eq!(plan.features[0].reason, Some(SkipReason::Archived));
}

fn stored_strategy() -> impl Strategy<Value = FeatureStrategy> {
    (0u8..=100, any::<bool>(), prop::option::of("[a-z]{1,4}")).prop_map(
        |(percent, disabled, title)| FeatureStrategy {
            title: Some(title),
            disabled: Some(Some(disabled)),
            ..rollout(percent, 0, "")
        },
    )
}

proptest! {
    /// Whatever the store holds (sort orders with gaps and ties, variable and fixed weights),
    /// its export plans as unchanged; an edited document, once applied, plans as unchanged too;
    /// and a feature is `update` exactly when the import writes it, with at least one change.
    #[test]
    fn plans_converge(
        strategies in prop::collection::vec((stored_strategy(), 0i64..6), 0..5),
        weights in prop::collection::vec((0u32..=300, any::<bool>()), 0..4),
        edits in prop::collection::vec((stored_strategy(), any::<bool>()), 0..4),
        enabled in any::<bool>(),
    ) {
        let mut order = 0;
        let strategies: Vec<FeatureStrategy> = strategies
            .into_iter()
            .enumerate()
            .map(|(i, (s, gap))| {
                order += gap;
                FeatureStrategy { id: Some(format!("s{i}")), sort_order: Some(order), ..s }
            })
            .collect();
        let names = ["a", "b", "c", "d"];
        let raw: Vec<Value> = weights
            .iter()
            .zip(names)
            .map(|((w, fixed), name)| json!({
                "name": name, "weight": w, "weightType": if *fixed { "fix" } else { "variable" },
                "stickiness": "default"
            }))
            .collect();
        let variants = if raw.is_empty() {
            Vec::new()
        } else {
            match crate::variants::normalise_variants(&Value::Array(raw)) {
                Ok(v) => v,
                Err(_) => return Ok(()),
            }
        };
        // Enabled with no enabled strategy is a state an import never leaves alone (it adds
        // Unleash's default strategy, as Unleash does): the store is enabled only with one.
        let enabled = enabled && strategies.iter().any(|s| !s.is_disabled());
        let mut snapshot = stored(strategies, variants);
        if let Some(fe) = snapshot.feature_environments.get_mut("checkout") {
            fe.enabled = enabled;
        }
        let body = export(&snapshot);
        let first = writes(&body, &snapshot, ImportMode::Replace);
        prop_assert!(first.changes_nothing(), "{:?}", first);
        // Edit: replace or append strategies.
        let mut edited = body.clone();
        for (strategy, replace) in edits {
            let list = edited["data"]["featureStrategies"].as_array_mut().unwrap();
            let mut value = serde_json::to_value(FeatureStrategy { id: None, sort_order: None, ..strategy }).unwrap();
            value["featureName"] = json!("checkout");
            if replace && !list.is_empty() {
                list[0] = value;
            } else {
                list.push(value);
            }
        }
        let writes_1 = writes(&edited, &snapshot, ImportMode::Replace);
        let plan = preview(&snapshot, &writes_1, ImportMode::Replace);
        let feature = &plan.features[0];
        prop_assert_eq!(feature.action == PlanAction::Update, !writes_1.changes_nothing());
        prop_assert_eq!(feature.action == PlanAction::Update, !feature.changes.is_empty());
        let after = applied(snapshot.clone(), writes_1);
        let second = writes(&edited, &after, ImportMode::Replace);
        prop_assert!(second.changes_nothing(), "{:?}", second);
        let plan = preview(&after, &second, ImportMode::Replace);
        prop_assert_eq!(plan.features[0].action, PlanAction::Unchanged);
    }
}
