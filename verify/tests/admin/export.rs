//! Export: the import document shape, deterministic, only what the features use; and the
//! round trip export → import into an empty store → export, as a property.

use proptest::prelude::*;
use serde_json::{Value, json};
use test_support::import::*;
use toggle_admin::model::{ExportData, ExportQuery};
use toggle_admin::{Caller, ToggleAdmin};

/// An export with strategy ids blanked and segment ids replaced by names: what must survive
/// a round trip into another store.
fn comparable(data: &ExportData) -> Value {
    let mut value = without_ids(data);
    let names: Vec<(i64, String)> = data
        .segments
        .iter()
        .flatten()
        .map(|s| (s.id, s.name.clone()))
        .collect();
    let name_of = |id: &Value| {
        let id = id.as_i64().unwrap();
        json!(names.iter().find(|(i, _)| *i == id).unwrap().1)
    };
    for strategy in value["featureStrategies"].as_array_mut().unwrap() {
        let mapped: Vec<Value> = strategy["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(name_of)
            .collect();
        strategy["segments"] = json!(mapped);
    }
    for segment in value["segments"].as_array_mut().unwrap() {
        segment["id"] = json!(0);
    }
    value
}

/// Export `default`/`development` of `admin`, import it into a fresh store that has only the
/// project, environments and the referenced segments, export again; both must agree.
async fn round_trip(admin: &ToggleAdmin, caller: &Caller) -> ExportData {
    let first = admin
        .export(caller, "default", "development", &[])
        .await
        .unwrap();
    let (fresh, fresh_caller) = setup().await;
    for s in first.segments.iter().flatten() {
        segment(&fresh, &fresh_caller, &s.name).await;
    }
    let document = serde_json::to_value(&first).unwrap();
    fresh
        .import_toggles_json(&fresh_caller, &body(document))
        .await
        .unwrap();
    let second = fresh
        .export(&fresh_caller, "default", "development", &[])
        .await
        .unwrap();
    assert_eq!(comparable(&second), comparable(&first));
    first
}

#[tokio::test]
async fn fixtures_round_trip() {
    for name in [
        "export-segment-context-dependency.json",
        "export-two-features.json",
        "export-strategies-constraints.json",
    ] {
        let (admin, caller) = setup().await;
        segment(&admin, &caller, "ex-seg").await;
        admin
            .import_toggles_json(&caller, &body(fixture(name)))
            .await
            .unwrap();
        round_trip(&admin, &caller).await;
    }
}

#[tokio::test]
async fn only_what_is_used_and_selected() {
    let (admin, caller) = setup().await;
    segment(&admin, &caller, "ex-seg").await;
    segment(&admin, &caller, "unused").await;
    admin
        .import_toggles_json(
            &caller,
            &body(fixture("export-segment-context-dependency.json")),
        )
        .await
        .unwrap();
    admin
        .import_toggles_json(&caller, &body(fixture("export-two-features.json")))
        .await
        .unwrap();

    let all = admin
        .export(&caller, "default", "development", &[])
        .await
        .unwrap();
    let names: Vec<_> = all.features.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ex-a", "ex-b", "ex-rich", "ex-rich-parent"]);
    assert_eq!(
        all.segments
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["ex-seg"]
    );

    let only_a = admin
        .export(&caller, "default", "development", &["ex-a".into()])
        .await
        .unwrap();
    assert_eq!(only_a.features.len(), 1);
    assert!(only_a.segments.as_ref().unwrap().is_empty());
    assert_eq!(
        only_a
            .context_fields
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["userId"]
    );
    assert_eq!(
        only_a
            .tag_types
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["simple"]
    );

    let rich = admin
        .export(&caller, "default", "development", &["ex-rich".into()])
        .await
        .unwrap();
    assert_eq!(
        rich.context_fields
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>(),
        ["ex-region"]
    );
    assert_eq!(
        rich.tag_types
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        ["ex-team"]
    );
    assert_eq!(
        rich.dependencies.as_ref().unwrap()[0].dependencies[0].feature,
        "ex-rich-parent"
    );

    // Same store, same document.
    assert_eq!(
        admin
            .export(&caller, "default", "development", &[])
            .await
            .unwrap(),
        all
    );
    // Production: the same features, disabled, nothing configured.
    let prod = admin
        .export(&caller, "default", "production", &[])
        .await
        .unwrap();
    assert!(prod.feature_strategies.is_empty());
    assert!(
        prod.feature_environments
            .unwrap()
            .iter()
            .all(|e| !e.enabled)
    );
}

#[tokio::test]
async fn export_selects_as_unleash_and_leaves_unknown_names_out() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(data_with(&["a"])))
        .await
        .unwrap();
    let names = |data: &ExportData| {
        data.features
            .iter()
            .map(|f| f.name.clone())
            .collect::<Vec<_>>()
    };
    // An unknown project, or a project without the feature: nothing, not an error.
    for project in ["nope", "other"] {
        let data = admin
            .export(&caller, project, "development", &[])
            .await
            .unwrap();
        assert!(data.features.is_empty(), "{project}: {data:?}");
    }
    // An unknown name is left out.
    let data = admin
        .export(
            &caller,
            "default",
            "development",
            &["ghost".to_owned(), "a".to_owned()],
        )
        .await
        .unwrap();
    assert_eq!(names(&data), ["a"]);
    // Named features take precedence over the project, as in Unleash.
    let data = admin
        .export(&caller, "other", "development", &["a".to_owned()])
        .await
        .unwrap();
    assert_eq!(names(&data), ["a"]);
    assert_eq!(data.features[0].project.as_deref(), Some("default"));
    // An environment the project lacks: the features, without strategies or environments.
    let data = admin.export(&caller, "default", "nope", &[]).await.unwrap();
    assert_eq!(names(&data), ["a"]);
    assert!(data.feature_strategies.is_empty());
    assert_eq!(data.feature_environments, Some(vec![]));
    // No selection at all: every feature; a tag: the features carrying it.
    let query = ExportQuery {
        environment: "development".into(),
        ..ExportQuery::default()
    };
    assert_eq!(
        names(&admin.export_query(&caller, &query).await.unwrap()),
        ["a"]
    );
    let tagged = ExportQuery {
        tag: Some("simple:nobody-has-this".into()),
        ..query.clone()
    };
    assert!(
        admin
            .export_query(&caller, &tagged)
            .await
            .unwrap()
            .features
            .is_empty()
    );
    let bad = ExportQuery {
        tag: Some("no-colon".into()),
        ..query
    };
    assert_eq!(
        admin
            .export_query(&caller, &bad)
            .await
            .unwrap_err()
            .status(),
        400
    );
}

/// One generated feature: type, description, enabled, stale, strategies (kind, constraint,
/// segment, variants), environment variants (fixed?, weight), tags (type, value), whether
/// it depends on the first feature.
type FeatureSeed = (
    usize,
    bool,
    bool,
    bool,
    Vec<(usize, Option<usize>, Option<usize>, bool, u8)>,
    Vec<(bool, u32)>,
    Vec<(usize, usize)>,
    bool,
);

fn feature_seed() -> impl Strategy<Value = FeatureSeed> {
    (
        0..3usize,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(
            (
                0..4usize,
                prop::option::of(0..5usize),
                prop::option::of(0..2usize),
                any::<bool>(),
                0..=100u8,
            ),
            0..3,
        ),
        prop::collection::vec((any::<bool>(), 0..300u32), 0..3),
        prop::collection::vec((0..2usize, 0..3usize), 0..3),
        any::<bool>(),
    )
}

/// The import document a list of seeds describes.
fn document(seeds: &[FeatureSeed]) -> Value {
    let constraints = [
        json!({"contextName": "userId", "operator": "IN", "values": ["1", "2"]}),
        json!({"contextName": "region", "operator": "IN", "values": ["eu"], "inverted": true}),
        json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2024-01-01T00:00:00.000Z"}),
        json!({"contextName": "appName", "operator": "SEMVER_GT", "value": "1.0.0"}),
        json!({"contextName": "userId", "operator": "NUM_GT", "value": "5", "caseInsensitive": false}),
    ];
    let (mut features, mut strategies, mut environments, mut tags, mut deps) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (i, (kind, desc, enabled, stale, strats, variants, tag_seeds, depends)) in
        seeds.iter().enumerate()
    {
        let name = format!("feature-{i}");
        features.push(json!({"name": name, "type": (["release", "experiment", "kill-switch"][*kind]),
            "description": if *desc { json!(format!("about {name}")) } else { Value::Null }, "stale": stale}));
        for (kind, constraint, seg, with_variants, rollout) in strats {
            let (strategy, parameters) = match kind {
                0 => ("default", json!({})),
                1 => (
                    "flexibleRollout",
                    json!({"rollout": rollout.to_string(), "stickiness": if rollout % 2 == 0 { "default" } else { "region" }}),
                ),
                2 => ("userWithId", json!({"userIds": "a,b"})),
                _ => (
                    "gradualRolloutRandom",
                    json!({"percentage": rollout.to_string()}),
                ),
            };
            strategies.push(json!({"name": strategy, "featureName": name, "parameters": parameters,
                "constraints": constraint.map(|c| vec![constraints[c].clone()]).unwrap_or_default(),
                "segments": seg.map(|s| vec![s + 1]).unwrap_or_default(),
                "variants": if *with_variants { json!([{"name": "sv", "weight": 0, "weightType": "variable", "stickiness": "default"}]) } else { json!([]) }}));
        }
        let variants: Vec<Value> = variants.iter().enumerate().map(|(j, (fixed, weight))| {
            let fixed = *fixed && j > 0;
            json!({"name": format!("v{j}"), "weight": weight, "weightType": if fixed { "fix" } else { "variable" }, "stickiness": "default"})
        }).collect();
        environments.push(
            json!({"name": name, "featureName": name, "enabled": enabled, "variants": variants}),
        );
        for (tag_type, value) in tag_seeds {
            tags.push(json!({"featureName": name, "tagType": (["simple", "team"][*tag_type]), "tagValue": format!("tag-{value}")}));
        }
        if *depends && i > 0 {
            deps.push(json!({"feature": name, "dependencies": [{"feature": "feature-0"}]}));
        }
    }
    json!({
        "features": features, "featureStrategies": strategies, "featureEnvironments": environments,
        "featureTags": tags, "tagTypes": [{"name": "team", "description": "Team"}],
        "contextFields": [{"name": "region", "stickiness": true, "legalValues": [{"value": "eu"}, {"value": "us"}]}],
        "segments": [{"id": 1, "name": "seg-a"}, {"id": 2, "name": "seg-b"}],
        "dependencies": deps,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// export → import into an empty store → export gives the same document, for generated
    /// stores; and importing the export back into its own store changes nothing.
    #[test]
    fn export_import_export_is_identity(seeds in prop::collection::vec(feature_seed(), 1..5)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let (admin, caller) = setup().await;
            segment(&admin, &caller, "seg-a").await;
            segment(&admin, &caller, "seg-b").await;
            admin.import_toggles_json(&caller, &body(document(&seeds))).await.unwrap();
            let exported = round_trip(&admin, &caller).await;
            let before = state(&admin).await;
            admin.import_toggles_json(&caller, &body(serde_json::to_value(&exported).unwrap())).await.unwrap();
            assert_eq!(state(&admin).await, before);
        });
    }
}

#[tokio::test]
async fn export_by_tag_and_of_archived_names() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(data_with(&["a", "b", "c"])))
        .await
        .unwrap();
    for name in ["a", "c"] {
        let tag = toggle_admin::model::Tag {
            value: "team-x".into(),
            tag_type: "simple".into(),
        };
        admin
            .add_feature_tag(&caller, "default", name, &tag)
            .await
            .unwrap();
    }
    admin
        .archive_feature(&caller, "default", "c")
        .await
        .unwrap();
    let query = |tag: Option<&str>, features: &[&str]| ExportQuery {
        environment: "development".into(),
        tag: tag.map(str::to_owned),
        features: features.iter().map(|f| (*f).to_owned()).collect(),
        project: Some("default".into()),
        download_file: None,
    };
    let names = |data: ExportData| {
        data.features
            .into_iter()
            .map(|f| (f.name, f.archived == Some(true)))
            .collect::<Vec<_>>()
    };
    // A tag selects every feature carrying it, archived ones included, before the names.
    let data = admin
        .export_query(&caller, &query(Some("simple:team-x"), &["b"]))
        .await
        .unwrap();
    assert_eq!(names(data), [("a".into(), false), ("c".into(), true)]);
    // A named archived feature is exported, marked archived; the project's list omits it.
    let data = admin
        .export_query(&caller, &query(None, &["c"]))
        .await
        .unwrap();
    assert_eq!(names(data), [("c".into(), true)]);
    let data = admin
        .export_query(&caller, &query(None, &[]))
        .await
        .unwrap();
    assert_eq!(names(data), [("a".into(), false), ("b".into(), false)]);
}
