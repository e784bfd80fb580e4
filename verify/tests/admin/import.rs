//! Importing the real Unleash 6.10.1 exports; re-importing; archived features; atomicity;
//! permissions.

use serde_json::{Value, json};
use test_support::import::*;
use toggle_admin::model::{Grant, KeyAccess, Permission};
use toggle_admin::model::{ImportBody, Operator};
use toggle_admin::{Caller, Error, ToggleAdmin};

/// The fixture as the export of the store it was imported into should read: strategy ids
/// blanked, segment ids mapped to the store's.
fn expected(mut fixture: Value, segments: &[(i64, i64)]) -> Value {
    let map = |id: &Value| {
        let id = id.as_i64().unwrap();
        json!(segments.iter().find(|(from, _)| *from == id).unwrap().1)
    };
    for strategy in fixture["featureStrategies"].as_array_mut().unwrap() {
        strategy["id"] = Value::Null;
        let mapped: Vec<Value> = strategy["segments"]
            .as_array()
            .unwrap()
            .iter()
            .map(map)
            .collect();
        strategy["segments"] = json!(mapped);
    }
    for segment in fixture["segments"].as_array_mut().unwrap() {
        segment["id"] = map(&segment["id"]);
    }
    fixture
}

#[tokio::test]
async fn fixture_strategies_and_constraints() {
    let (admin, caller) = setup().await;
    let data = fixture("export-strategies-constraints.json");
    let report = admin
        .import_toggles_json(&caller, &body(data.clone()))
        .await
        .unwrap();
    assert_eq!(report.created, ["im-strat"]);
    assert!(report.updated.is_empty() && report.skipped_archived.is_empty());

    let feature = admin.feature(&caller, "default", "im-strat").await.unwrap();
    assert_eq!(feature.feature_type.as_deref(), Some("release"));
    assert_eq!(feature.description, Some(None));
    let envs = feature.environments.unwrap();
    let dev = envs.iter().find(|e| e.name == "development").unwrap();
    assert!(dev.enabled);
    assert!(
        !envs
            .iter()
            .find(|e| e.name == "production")
            .unwrap()
            .enabled
    );

    let exported = admin
        .export(&caller, "default", "development", &[])
        .await
        .unwrap();
    let strategies = &exported.feature_strategies;
    assert_eq!(
        strategies
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["flexibleRollout", "userWithId", "default"]
    );
    assert_eq!(strategies[0].title, Some(Some("fifty".into())));
    assert_eq!(strategies[0].parameters["rollout"], "50");
    assert_eq!(strategies[0].parameters["stickiness"], "userId");
    assert_eq!(strategies[0].constraints[0].operator, Operator::In);
    assert_eq!(
        strategies[0].constraints[0].values,
        Some(vec!["1".into(), "2".into()])
    );
    assert_eq!(strategies[0].constraints[1].operator, Operator::DateAfter);
    assert_eq!(
        strategies[0].constraints[1].value.as_deref(),
        Some("2024-01-01T00:00:00.000Z")
    );
    assert_eq!(strategies[1].parameters["userIds"], "a,b");
    assert_eq!(strategies[2].variants[0].name, "sv");
    assert_eq!(strategies[2].variants[0].weight, 1000);
    assert!(
        strategies
            .iter()
            .all(|s| s.id.as_deref().is_some_and(|id| id.len() == 36))
    );
    // New ids: the payload's are not reused.
    assert!(
        !strategies
            .iter()
            .any(|s| s.id.as_deref() == Some("a24d4799-94d8-441e-a267-6e6b963542db"))
    );
    assert_eq!(without_ids(&exported), expected(data, &[]));
}

#[tokio::test]
async fn fixture_two_features() {
    let (admin, caller) = setup().await;
    let data = fixture("export-two-features.json");
    let report = admin
        .import_toggles_json(&caller, &body(data.clone()))
        .await
        .unwrap();
    assert_eq!(report.created, ["ex-a", "ex-b"]);

    let variants = admin
        .variants(&caller, "default", "ex-a", "development")
        .await
        .unwrap();
    let weights: Vec<_> = variants
        .variants
        .iter()
        .map(|v| (v.name.as_str(), v.weight))
        .collect();
    assert_eq!(weights, [("one", 900), ("two", 100)]);
    assert_eq!(variants.variants[1].payload.as_ref().unwrap().value, "p");
    let exported = admin
        .export(&caller, "default", "development", &[])
        .await
        .unwrap();
    let tags = exported.feature_tags.clone().unwrap();
    assert_eq!(tags.len(), 1);
    assert_eq!(
        (
            tags[0].feature_name.as_str(),
            tags[0].tag_type.as_deref(),
            tags[0].tag_value.as_str()
        ),
        ("ex-a", Some("simple"), "ex-tag")
    );
    assert_eq!(exported.tag_types[0].name, "simple");
    assert_eq!(
        exported.features[0].feature_type.as_deref(),
        Some("experiment")
    );
    assert_eq!(exported.features[0].description, Some(Some("A".into())));
    assert_eq!(without_ids(&exported), expected(data, &[]));
}

#[tokio::test]
async fn fixture_segment_context_dependency() {
    let (admin, caller) = setup().await;
    let seg = segment(&admin, &caller, "ex-seg").await;
    assert_eq!(seg, 1, "the fixture's segment 7 must be remapped by name");
    let data = fixture("export-segment-context-dependency.json");
    let report = admin
        .import_toggles_json(&caller, &body(data.clone()))
        .await
        .unwrap();
    assert_eq!(report.created, ["ex-rich", "ex-rich-parent"]);

    let fields = admin.context_fields(&caller).await.unwrap();
    let region = fields.iter().find(|f| f.name == "ex-region").unwrap();
    assert_eq!(region.description, Some(Some("region".into())));
    assert_eq!(region.stickiness, Some(true));
    let legal: Vec<_> = region
        .legal_values
        .as_ref()
        .unwrap()
        .iter()
        .map(|l| (l.value.as_str(), l.description.as_deref()))
        .collect();
    assert_eq!(legal, [("eu", Some("Europe")), ("us", None)]);

    let tag_type = admin.tag_type(&caller, "ex-team").await.unwrap();
    assert_eq!(tag_type.description.as_deref(), Some("Team tag"));
    let tags = admin
        .feature_tags(&caller, "default", "ex-rich")
        .await
        .unwrap();
    assert_eq!(tags.len(), 1);
    assert_eq!(
        (tags[0].tag_type.as_str(), tags[0].value.as_str()),
        ("ex-team", "alpha")
    );

    let deps = admin
        .feature_dependencies(&caller, "default", "ex-rich")
        .await
        .unwrap();
    assert_eq!(deps.len(), 1);
    assert_eq!(deps[0].feature, "ex-rich-parent");
    assert_eq!(deps[0].enabled, Some(true));

    let strategies = admin
        .strategies(&caller, "default", "ex-rich", "development")
        .await
        .unwrap();
    assert_eq!(strategies.len(), 1);
    assert_eq!(strategies[0].segments, [seg]);
    assert_eq!(strategies[0].constraints[0].context_name, "ex-region");
    assert_eq!(
        strategies[0].variants[0].payload.as_ref().unwrap().value,
        "x"
    );
    let variants = admin
        .variants(&caller, "default", "ex-rich", "development")
        .await
        .unwrap();
    assert_eq!(
        variants.variants[0].overrides.as_ref().unwrap()[0].values,
        ["us"]
    );
    assert_eq!(
        variants.variants[0].stickiness.as_deref(),
        Some("ex-region")
    );

    // The parent is enabled with no strategy: Unleash adds a default flexibleRollout 100 %.
    let parent = admin
        .strategies(&caller, "default", "ex-rich-parent", "development")
        .await
        .unwrap();
    assert_eq!(parent.len(), 1);
    assert_eq!(parent[0].name, "flexibleRollout");
    assert_eq!(parent[0].parameters["rollout"], "100");
    assert_eq!(parent[0].parameters["groupId"], "ex-rich-parent");
    assert_eq!(parent[0].parameters["stickiness"], "default");

    let exported = admin
        .export(&caller, "default", "development", &[])
        .await
        .unwrap();
    let mut want = expected(data, &[(7, seg)]);
    want["featureStrategies"]
        .as_array_mut()
        .unwrap()
        .push(json!({
            "name": "flexibleRollout", "id": null, "featureName": "ex-rich-parent", "title": null,
            "parameters": {"groupId": "ex-rich-parent", "rollout": "100", "stickiness": "default"},
            "constraints": [], "variants": [], "disabled": false, "segments": []
        }));
    assert_eq!(without_ids(&exported), want);
}

#[tokio::test]
async fn events_of_an_import() {
    let (admin, caller) = setup().await;
    segment(&admin, &caller, "ex-seg").await;
    let before = events(&admin, &caller).await.len();
    admin
        .import_toggles_json(
            &caller,
            &body(fixture("export-segment-context-dependency.json")),
        )
        .await
        .unwrap();
    let all = events(&admin, &caller).await;
    let types: Vec<&str> = all[before..]
        .iter()
        .map(|e| e.event.event_type.as_str())
        .collect();
    assert_eq!(
        types,
        [
            "feature-created",
            "feature-created",
            "feature-environment-variants-updated",
            "tag-type-created",
            "feature-tagged",
            "context-field-created",
            "feature-strategy-add",
            "feature-strategy-add",
            "feature-environment-enabled",
            "feature-environment-enabled",
            "feature-dependency-added",
            "features-imported",
        ]
    );
    let revisions: Vec<_> = all[before..].iter().map(|e| e.revision).collect();
    assert!(revisions.windows(2).all(|w| w[0] == w[1]), "one commit");
}

#[tokio::test]
async fn reimport_gives_the_same_state() {
    let (admin, caller) = setup().await;
    segment(&admin, &caller, "ex-seg").await;
    for name in [
        "export-segment-context-dependency.json",
        "export-two-features.json",
        "export-strategies-constraints.json",
    ] {
        admin
            .import_toggles_json(&caller, &body(fixture(name)))
            .await
            .unwrap();
        let once = state(&admin).await;
        let report = admin
            .import_toggles_json(&caller, &body(fixture(name)))
            .await
            .unwrap();
        assert!(report.created.is_empty());
        assert_eq!(state(&admin).await, once, "{name}");
    }
}

#[tokio::test]
async fn reimport_replaces_strategies_and_tags() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(fixture("export-two-features.json")))
        .await
        .unwrap();
    let mut data = fixture("export-two-features.json");
    data["features"][0]["type"] = json!("operational");
    data["featureStrategies"] = json!([{"name": "default", "featureName": "ex-a"}]);
    data["featureTags"] =
        json!([{"featureName": "ex-a", "tagType": "simple", "tagValue": "other"}]);
    let report = admin
        .import_toggles_json(&caller, &body(data))
        .await
        .unwrap();
    // ex-b loses its strategy to the default one the enabled state adds, which is the same
    // flexibleRollout at 100 %: nothing changes for it.
    assert_eq!(report.updated, ["ex-a"]);
    assert_eq!(report.unchanged, ["ex-b"]);
    let a = admin
        .strategies(&caller, "default", "ex-a", "development")
        .await
        .unwrap();
    assert_eq!(
        a.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["default"]
    );
    // ex-b's strategy was removed by the payload; enabled → the default strategy is added.
    let b = admin
        .strategies(&caller, "default", "ex-b", "development")
        .await
        .unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].parameters["rollout"], "100");
    let tags = admin
        .feature_tags(&caller, "default", "ex-a")
        .await
        .unwrap();
    assert_eq!(
        tags.iter().map(|t| t.value.as_str()).collect::<Vec<_>>(),
        ["other"]
    );
    let feature = admin.feature(&caller, "default", "ex-a").await.unwrap();
    assert_eq!(feature.feature_type.as_deref(), Some("operational"));
}

#[tokio::test]
async fn archived_features_are_skipped() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(fixture("export-two-features.json")))
        .await
        .unwrap();
    admin
        .archive_feature(&caller, "default", "ex-a")
        .await
        .unwrap();
    let before = state(&admin).await;
    let mut data = fixture("export-two-features.json");
    data["features"][0]["archived"] = json!(false);
    data["featureTags"] = json!([{"featureName": "ex-a", "tagType": "simple", "tagValue": "new"}]);
    data["featureStrategies"][0]["parameters"]["rollout"] = json!("5");
    data["featureEnvironments"][0]["enabled"] = json!(false);
    let report = admin
        .import_toggles_json(&caller, &body(data))
        .await
        .unwrap();
    assert_eq!(report.skipped_archived, ["ex-a"]);
    assert!(
        report.warnings.iter().any(
            |w| w.path.as_deref() == Some("data.features[0]") && w.message.contains("archived")
        )
    );
    // ex-a: nothing written (still archived, same strategies, tags, enabled state).
    let after = state(&admin).await;
    for collection in ["features", "feature-environments", "feature-tags"] {
        let pick = |s: &Value| -> Vec<Value> {
            s[collection]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r[0].as_str().unwrap().starts_with("ex-a"))
                .cloned()
                .collect()
        };
        assert_eq!(pick(&after), pick(&before), "{collection}");
    }
}

#[tokio::test]
async fn archived_is_never_written() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["fresh"]);
    data["features"][0]["archived"] = json!(true);
    admin
        .import_toggles_json(&caller, &body(data))
        .await
        .unwrap();
    let feature = admin.feature(&caller, "default", "fresh").await.unwrap();
    assert_eq!(feature.archived, Some(false));
}

#[tokio::test]
async fn typed_entry_and_unknown_keys_warn() {
    let (admin, caller) = setup().await;
    let mut data = fixture("export-two-features.json");
    data["features"][0]["createdBy"] = json!({"id": 1});
    data["links"] = json!([]);
    let typed: ImportBody = serde_json::from_value(body(data)).unwrap();
    let report = admin.import_toggles(&caller, &typed).await.unwrap();
    let paths: Vec<_> = report
        .warnings
        .iter()
        .filter_map(|w| w.path.as_deref())
        .collect();
    assert!(paths.contains(&"data.features[0].createdBy"), "{paths:?}");
    let validation = admin.validate_import(&caller, &typed).await.unwrap();
    assert!(validation.errors.is_empty() && validation.permissions.is_empty());
}

/// One invalid element anywhere: nothing changes, events included, and every problem is
/// listed.
#[tokio::test]
async fn atomic() {
    let (admin, caller) = setup().await;
    segment(&admin, &caller, "ex-seg").await;
    admin
        .import_toggles_json(&caller, &body(fixture("export-two-features.json")))
        .await
        .unwrap();
    let before = (state(&admin).await, events(&admin, &caller).await);
    type Spoil = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Spoil)> = vec![
        (
            "last strategy",
            Box::new(|d: &mut Value| {
                d["featureStrategies"][1]["constraints"] =
                    json!([{"contextName": "userId", "operator": "NUM_GT", "value": "x"}])
            }),
        ),
        (
            "last tag",
            Box::new(|d: &mut Value| d["featureTags"][0]["tagType"] = json!("nope")),
        ),
        (
            "dependency",
            Box::new(|d: &mut Value| {
                d["dependencies"] =
                    json!([{"feature": "ex-b", "dependencies": [{"feature": "ghost"}]}])
            }),
        ),
    ];
    for (what, spoil) in &cases {
        let mut data = fixture("export-two-features.json");
        data["features"][0]["type"] = json!("kill-switch");
        spoil(&mut data);
        let err = admin
            .import_toggles_json(&caller, &body(data))
            .await
            .unwrap_err();
        assert_eq!(err.status(), 400, "{what}: {err}");
        assert_eq!(err.details().len(), 1, "{what}: {:?}", err.details());
        assert_eq!(
            (state(&admin).await, events(&admin, &caller).await),
            before,
            "{what}"
        );
    }
    let mut data = fixture("export-two-features.json");
    for (_, spoil) in &cases {
        spoil(&mut data);
    }
    let err = admin
        .import_toggles_json(&caller, &body(data))
        .await
        .unwrap_err();
    let paths: Vec<_> = err
        .details()
        .iter()
        .filter_map(|d| d.path.clone())
        .collect();
    assert_eq!(
        paths,
        [
            "data.featureStrategies[1].constraints[0].value",
            "data.featureTags[0].tagType",
            "data.dependencies[0].dependencies[0].feature",
        ]
    );
}

async fn key_with(admin: &ToggleAdmin, caller: &Caller, permissions: &[Permission]) -> Caller {
    let grants = permissions
        .iter()
        .map(|p| Grant::in_project(*p, "default"))
        .collect();
    let key = admin
        .create_api_key(caller, "limited", KeyAccess::Grants { grants })
        .await
        .unwrap();
    admin.authenticate(Some(&key.secret)).await.unwrap()
}

#[tokio::test]
async fn permissions() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(data_with(&["existing"])))
        .await
        .unwrap();

    let updater = key_with(&admin, &caller, &[Permission::UpdateFeature]).await;
    let err = admin
        .import_toggles_json(&updater, &body(data_with(&["existing", "new-one"])))
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403);
    let Error::NoAccess {
        permissions,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(permissions, &["CREATE_FEATURE"]);
    assert!(message.contains("CREATE_FEATURE"), "{message}");

    let mut data = data_with(&["existing"]);
    data["features"][0]["description"] = json!("updated");
    admin
        .import_toggles_json(&updater, &body(data))
        .await
        .unwrap();
    let feature = admin.feature(&caller, "default", "existing").await.unwrap();
    assert_eq!(feature.description, Some(Some("updated".into())));

    // All missing permissions in one 403, and validate lists them without failing.
    let viewer = key_with(&admin, &caller, &[]).await;
    let full = body(fixture("export-two-features.json"));
    let err = admin.import_toggles_json(&viewer, &full).await.unwrap_err();
    let Error::NoAccess { permissions, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        permissions,
        &[
            "UPDATE_FEATURE",
            "CREATE_FEATURE",
            "CREATE_FEATURE_STRATEGY",
            "UPDATE_FEATURE_ENVIRONMENT_VARIANTS"
        ]
    );
    let validation = admin.validate_import_json(&viewer, &full).await.unwrap();
    assert_eq!(validation.permissions.len(), 1);
    assert_eq!(
        validation.permissions[0].affected_items,
        [
            "Update feature flags",
            "Create feature flags",
            "Create activation strategies",
            "Update variants"
        ]
    );
    assert!(validation.errors.is_empty());
}

#[tokio::test]
async fn delete_strategy_permission_when_replacing() {
    let (admin, caller) = setup().await;
    admin
        .import_toggles_json(&caller, &body(fixture("export-two-features.json")))
        .await
        .unwrap();
    let key = key_with(
        &admin,
        &caller,
        &[
            Permission::UpdateFeature,
            Permission::CreateFeatureStrategy,
            Permission::UpdateFeatureEnvironmentVariants,
        ],
    )
    .await;
    let err = admin
        .import_toggles_json(&key, &body(fixture("export-two-features.json")))
        .await
        .unwrap_err();
    let Error::NoAccess { permissions, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(permissions, &["DELETE_FEATURE_STRATEGY"]);
}
