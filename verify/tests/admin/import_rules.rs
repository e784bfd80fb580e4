//! Every validation rule of BEHAVIOUR §2, one test each: the import fails with the right
//! status and path, and `validate_import` reports the same problem without writing.

use serde_json::{Value, json};
use test_support::import::*;
use toggle_admin::model::{ContextField, FeatureNaming, LegalValue, Project, TagType};
use toggle_admin::{Caller, Error, ToggleAdmin};

/// Import `body`, expect a 400, and return the detail paths; `validate_import` must list the
/// same problems, and nothing may have been written.
async fn rejected(admin: &ToggleAdmin, caller: &Caller, body: Value) -> Vec<(String, String)> {
    let before = state(admin).await;
    let err = admin.import_toggles_json(caller, &body).await.unwrap_err();
    assert_eq!(err.status(), 400, "{err}");
    assert_eq!(state(admin).await, before);
    // The dry run reports it too: under Unleash's message where Unleash has one, else each
    // problem as an item naming its path.
    let validation = admin.validate_import_json(caller, &body).await.unwrap();
    assert!(!validation.errors.is_empty(), "{err}");
    let unleash_kind = |m: &str| {
        ["We detected", "You cannot import", "Features imported into"]
            .iter()
            .any(|p| m.starts_with(p))
    };
    if !validation.errors.iter().any(|e| unleash_kind(&e.message)) {
        let ours: Vec<(String, Vec<String>)> = err
            .details()
            .iter()
            .map(|d| (d.message.clone(), d.path.clone().into_iter().collect()))
            .collect();
        let reported: Vec<(String, Vec<String>)> = validation
            .errors
            .iter()
            .map(|e| (e.message.clone(), e.affected_items.clone()))
            .collect();
        assert_eq!(reported, ours);
    }
    err.details()
        .iter()
        .map(|d| (d.path.clone().unwrap_or_default(), d.message.clone()))
        .collect()
}

fn paths(problems: &[(String, String)]) -> Vec<&str> {
    problems.iter().map(|(p, _)| p.as_str()).collect()
}

#[tokio::test]
async fn missing_project_is_404() {
    let (admin, caller) = setup().await;
    let mut b = body(data_with(&["a"]));
    b["project"] = json!("nope");
    let err = admin.import_toggles_json(&caller, &b).await.unwrap_err();
    assert_eq!(err.status(), 404);
    assert!(err.to_string().contains("nope"));
    // With another problem it is listed in a 400.
    let mut b = body(data_with(&["a b"]));
    b["project"] = json!("nope");
    let problems = rejected(&admin, &caller, b).await;
    assert_eq!(paths(&problems), ["project", "data.features[0].name"]);
}

#[tokio::test]
async fn missing_or_disabled_environment() {
    let (admin, caller) = setup().await;
    let mut b = body(data_with(&["a"]));
    b["environment"] = json!("nope");
    let err = admin.import_toggles_json(&caller, &b).await.unwrap_err();
    assert_eq!(err.status(), 404);
    let mut b = body(data_with(&["a"]));
    b["project"] = json!("other");
    b["environment"] = json!("production");
    let problems = rejected(&admin, &caller, b).await;
    assert_eq!(paths(&problems), ["environment"]);
    assert!(problems[0].1.contains("not enabled"));
}

#[tokio::test]
async fn duplicate_and_invalid_names() {
    let (admin, caller) = setup().await;
    let problems = rejected(
        &admin,
        &caller,
        body(data_with(&["a", "b", "a", "no spaces", ""])),
    )
    .await;
    assert_eq!(
        paths(&problems),
        [
            "data.features[2].name",
            "data.features[3].name",
            "data.features[4].name"
        ]
    );
    assert!(problems[0].1.contains("duplicate"));
}

#[tokio::test]
async fn features_in_another_project() {
    let (admin, caller) = setup().await;
    let mut b = body(data_with(&["theirs"]));
    b["project"] = json!("other");
    admin.import_toggles_json(&caller, &b).await.unwrap();
    let problems = rejected(&admin, &caller, body(data_with(&["mine", "theirs"]))).await;
    assert_eq!(paths(&problems), ["data.features[1].name"]);
    assert!(problems[0].1.contains("\"other\""));
}

#[tokio::test]
async fn unknown_strategy() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["featureStrategies"] = json!([{"name": "default", "featureName": "a"}, {"name": "customStrategy", "featureName": "a"}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(paths(&problems), ["data.featureStrategies[1].name"]);
    assert!(problems[0].1.contains("customStrategy"));
}

#[tokio::test]
async fn unknown_segment_and_segment_not_listed() {
    let (admin, caller) = setup().await;
    segment(&admin, &caller, "known").await;
    let mut data = data_with(&["a"]);
    data["segments"] = json!([{"id": 1, "name": "known"}, {"id": 2, "name": "customSegment"}]);
    data["featureStrategies"] =
        json!([{"name": "default", "featureName": "a", "segments": [1, 2, 3]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        [
            "data.segments[1]",
            "data.featureStrategies[0].segments[1]",
            "data.featureStrategies[0].segments[2]",
        ]
    );
    assert!(problems[0].1.contains("customSegment"));
    assert!(problems[2].1.contains("not listed in data.segments"));
}

#[tokio::test]
async fn segment_of_another_project_is_unknown() {
    let (admin, caller) = setup().await;
    admin
        .create_segment(
            &caller,
            &toggle_admin::model::NewSegment {
                name: "theirs".into(),
                project: Some("other".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut data = data_with(&["a"]);
    data["segments"] = json!([{"id": 9, "name": "theirs"}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(paths(&problems), ["data.segments[0]"]);
}

#[tokio::test]
async fn context_field_legal_value_conflict() {
    let (admin, caller) = setup().await;
    admin
        .create_context_field(
            &caller,
            &ContextField {
                name: "ContextField1".into(),
                legal_values: Some(vec![LegalValue {
                    value: "Value1".into(),
                    description: None,
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut data = data_with(&["a"]);
    data["contextFields"] = json!([
        {"name": "ContextField1", "legalValues": [{"value": "Value1"}]},
        {"name": "ContextField1x", "legalValues": [{"value": "new"}]},
        {"name": "userId", "legalValues": [{"value": "x"}]},
    ]);
    let problems = rejected(&admin, &caller, body(data.clone())).await;
    assert_eq!(paths(&problems), ["data.contextFields[2].legalValues"]);
    data["contextFields"][0]["legalValues"] = json!([{"value": "Value2", "description": ""}]);
    data["contextFields"].as_array_mut().unwrap().pop();
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(paths(&problems), ["data.contextFields[0].legalValues"]);
    assert!(problems[0].1.contains("ContextField1") && problems[0].1.contains("Value2"));
}

#[tokio::test]
async fn unknown_tag_type() {
    let (admin, caller) = setup().await;
    admin
        .create_tag_type(
            &caller,
            &TagType {
                name: "stored".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut data = data_with(&["a"]);
    data["tagTypes"] = json!([{"name": "special_tag"}, {"name": "special_tag"}]);
    data["featureTags"] = json!([
        {"featureName": "a", "tagType": "simple", "tagValue": "tag1"},
        {"featureName": "a", "tagType": "stored", "tagValue": "tag2"},
        {"featureName": "a", "tagType": "special_tag", "tagValue": "tag3"},
        {"featureName": "a", "tagType": "bestt", "tagValue": "tag4"},
        {"featureName": "a", "tagType": "simple", "tagValue": "x"},
    ]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        [
            "data.featureTags[3].tagType",
            "data.featureTags[4].tagValue"
        ]
    );
}

#[tokio::test]
async fn dependencies() {
    let (admin, caller) = setup().await;
    let mut other = body(data_with(&["elsewhere"]));
    other["project"] = json!("other");
    admin.import_toggles_json(&caller, &other).await.unwrap();
    let mut data = data_with(&["a", "b", "c"]);
    data["dependencies"] = json!([
        {"feature": "a", "dependencies": [{"feature": "ghost"}, {"feature": "a"}, {"feature": "elsewhere"}]},
        {"feature": "b", "dependencies": [{"feature": "c"}]},
        {"feature": "c", "dependencies": [{"feature": "a"}]},
    ]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        [
            "data.dependencies[0].dependencies[0].feature",
            "data.dependencies[0].dependencies[1].feature",
            "data.dependencies[0].dependencies[2].feature",
            "data.dependencies[1].dependencies[0].feature",
            "data.dependencies[2].dependencies[0].feature",
        ]
    );
    assert!(problems[0].1.contains("ghost"));
    assert!(problems[1].1.contains("itself"));
    assert!(problems[2].1.contains("same project"));
    assert!(problems[3].1.contains("transitive"));
}

#[tokio::test]
async fn sub_lists_naming_features_outside_data() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["featureStrategies"] =
        json!([{"name": "default", "featureName": "x"}, {"name": "default"}]);
    data["featureEnvironments"] = json!([{"name": "y", "enabled": true}]);
    data["featureTags"] = json!([{"featureName": "z", "tagType": "simple", "tagValue": "tag"}]);
    data["dependencies"] = json!([{"feature": "w", "dependencies": [{"feature": "a"}]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        [
            "data.featureStrategies[0].featureName",
            "data.featureStrategies[1].featureName",
            "data.featureEnvironments[0].featureName",
            "data.featureTags[0].featureName",
            "data.dependencies[0].feature",
        ]
    );
}

#[tokio::test]
async fn invalid_constraints() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["featureStrategies"] = json!([{"name": "default", "featureName": "a", "constraints": [
        {"contextName": "userId", "operator": "IN", "values": []},
        {"contextName": "userId", "operator": "IN", "value": "1", "values": ["1"]},
        {"contextName": "userId", "operator": "NUM_GT", "value": "ten"},
        {"contextName": "currentTime", "operator": "DATE_AFTER", "value": "yesterday"},
        {"contextName": "appName", "operator": "SEMVER_EQ", "value": "1.2"},
        {"contextName": "nowhere", "operator": "STR_CONTAINS", "values": ["x"]},
        {"contextName": "userId", "operator": "LIKE", "values": ["x"]},
        {"contextName": "userId", "operator": "NUM_EQ", "value": "1", "values": ["1"]},
        {"contextName": "appName", "operator": "SEMVER_GT", "value": "1.2.3-beta.1"},
        {"contextName": "currentTime", "operator": "DATE_BEFORE", "value": "2024-01-01T00:00:00.000Z", "values": []},
    ]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    let prefix = "data.featureStrategies[0].constraints";
    // [1] (`value` beside `values` for IN) and [7] (`values` beside `value` for NUM_EQ) are
    // accepted and kept, as Unleash 6.10.1 accepts them.
    let expected: Vec<String> = [
        "[0].values",
        "[2].value",
        "[3].value",
        "[4].value",
        "[5].contextName",
        "[6].operator",
    ]
    .iter()
    .map(|s| format!("{prefix}{s}"))
    .collect();
    assert_eq!(paths(&problems), expected);
}

#[tokio::test]
async fn legal_values_of_constraints() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["contextFields"] = json!([{"name": "region", "legalValues": [{"value": "eu"}]}]);
    data["featureStrategies"] = json!([{"name": "default", "featureName": "a", "constraints": [
        {"contextName": "region", "operator": "IN", "values": ["eu", "us"]},
    ]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        ["data.featureStrategies[0].constraints[0].values[1]"]
    );
}

#[tokio::test]
async fn invalid_variants() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["featureEnvironments"] = json!([{"featureName": "a", "enabled": false, "variants": [
        {"name": "x", "weight": 100, "weightType": "fix"},
    ]}]);
    data["featureStrategies"] = json!([{"name": "flexibleRollout", "featureName": "a", "variants": [
        {"name": "v", "weight": 2000, "weightType": "variable", "stickiness": "default"},
        {"name": "w", "weight": 0, "weightType": "variable"},
    ]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        [
            "data.featureEnvironments[0].variants",
            "data.featureStrategies[0].variants/0/weight",
            "data.featureStrategies[0].variants/1/stickiness",
        ]
    );
}

#[tokio::test]
async fn invalid_rollout_parameter() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["a"]);
    data["featureStrategies"] =
        json!([{"name": "flexibleRollout", "featureName": "a", "parameters": {"rollout": "150"}}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(
        paths(&problems),
        ["data.featureStrategies[0].parameters.rollout"]
    );
}

async fn project_with(admin: &ToggleAdmin, caller: &Caller, project: Project) {
    admin
        .create_project(
            caller,
            &Project {
                environments: vec!["development".into()],
                ..project
            },
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn naming_pattern() {
    let (admin, caller) = setup().await;
    let naming = FeatureNaming {
        pattern: "testpattern.+".into(),
        example: Some("testpattern-x".into()),
        description: None,
    };
    project_with(
        &admin,
        &caller,
        Project {
            id: "named".into(),
            name: "n".into(),
            feature_naming: Some(naming),
            ..Default::default()
        },
    )
    .await;
    let mut b = body(data_with(&[
        "testpattern-ok",
        "unusedfeaturenamethatdoesntmatchpattern",
    ]));
    b["project"] = json!("named");
    let problems = rejected(&admin, &caller, b).await;
    assert_eq!(paths(&problems), ["data.features[1].name"]);
    assert!(problems[0].1.contains("testpattern.+"));
}

#[tokio::test]
async fn feature_limit() {
    let (admin, caller) = setup().await;
    project_with(
        &admin,
        &caller,
        Project {
            id: "small".into(),
            name: "s".into(),
            feature_limit: Some(1),
            ..Default::default()
        },
    )
    .await;
    let mut b = body(data_with(&["first_feature", "second_feature"]));
    b["project"] = json!("small");
    let problems = rejected(&admin, &caller, b.clone()).await;
    assert_eq!(paths(&problems), ["data.features"]);
    b["data"] = data_with(&["first_feature"]);
    admin.import_toggles_json(&caller, &b).await.unwrap();
    // Re-importing an existing feature creates nothing, so the limit does not apply.
    admin.import_toggles_json(&caller, &b).await.unwrap();
}

#[tokio::test]
async fn body_shape() {
    let (admin, caller) = setup().await;
    let problems = rejected(&admin, &caller, json!({"project": "default", "environment": "development", "data": {"features": [{"nom": 1}]}})).await;
    assert_eq!(
        paths(&problems),
        [
            "data.features[0]",
            "data.featureStrategies",
            "data.tagTypes"
        ]
    );
    let err = admin
        .import_toggles_json(&caller, &json!([]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Validation { .. }));
}

#[tokio::test]
async fn every_problem_at_once() {
    let (admin, caller) = setup().await;
    let mut data = data_with(&["first_feature", "first_feature", "second_feature"]);
    data["featureStrategies"] = json!([{"name": "customStrategy", "featureName": "first_feature"}]);
    data["segments"] = json!([{"id": 1, "name": "customSegment"}]);
    data["dependencies"] =
        json!([{"feature": "second_feature", "dependencies": [{"feature": "parentFeature"}]}]);
    let problems = rejected(&admin, &caller, body(data)).await;
    assert_eq!(problems.len(), 4, "{problems:?}");
}
