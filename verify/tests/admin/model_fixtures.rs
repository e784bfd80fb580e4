//! The wire model against checked-in JSON: real Unleash 6.10.1 exports and one hand-written
//! document per quirk. Every document that parses must re-serialise to the same JSON.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toggle_admin::model::{ExportData, ImportBody, Operator};

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(dir);
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {}", dir.display());
    paths
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn model_fixture(name: &str) -> Value {
    read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/model")
            .join(name),
    )
}

/// Parses `original` as export data, asserts the exact round trip (also wrapped in an import
/// body), and returns the parsed data.
fn assert_round_trip(original: &Value, what: &str) -> ExportData {
    let data: ExportData = serde_json::from_value(original.clone())
        .unwrap_or_else(|err| panic!("{what}: does not parse: {err}"));
    assert_eq!(
        &serde_json::to_value(&data).unwrap(),
        original,
        "{what}: export data"
    );

    let body_json = json!({"project": "default", "environment": "development", "data": original});
    let body: ImportBody = serde_json::from_value(body_json.clone())
        .unwrap_or_else(|err| panic!("{what}: import body does not parse: {err}"));
    assert_eq!(body.project, "default");
    assert_eq!(body.environment, "development");
    assert_eq!(body.data, data);
    assert_eq!(
        serde_json::to_value(&body).unwrap(),
        body_json,
        "{what}: import body"
    );

    let built = ImportBody {
        project: "default".to_owned(),
        environment: "development".to_owned(),
        data: data.clone(),
    };
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        body_json,
        "{what}: built body"
    );
    data
}

#[test]
fn unleash_exports_round_trip() {
    for path in fixtures("unleash-6.10.1") {
        assert_round_trip(&read(&path), &path.display().to_string());
    }
}

#[test]
fn hand_written_documents_round_trip_or_fail_as_documented() {
    for path in fixtures("model") {
        let original = read(&path);
        let parsed = serde_json::from_value::<ExportData>(original.clone());
        if path.ends_with("unknown-operator.json") {
            assert!(parsed.is_err(), "{} should not parse", path.display());
        } else {
            assert_round_trip(&original, &path.display().to_string());
        }
    }
}

#[test]
fn export_members_are_read() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/unleash-6.10.1/export-segment-context-dependency.json");
    let data = assert_round_trip(&read(&path), "segment/context/dependency");
    assert_eq!(data.features[1].description, Some(None));
    let strategy = &data.feature_strategies[0];
    assert_eq!(strategy.title, Some(Some("t1".to_owned())));
    assert_eq!(strategy.segments, [7]);
    assert_eq!(strategy.constraints[0].operator, Operator::In);
    assert_eq!(strategy.parameters["rollout"], "50");
    let segments = data.segments.as_deref().unwrap();
    assert_eq!((segments[0].id, segments[0].name.as_str()), (7, "ex-seg"));
    let dependency = &data.dependencies.as_deref().unwrap()[0];
    assert_eq!(dependency.feature, "ex-rich");
    assert_eq!(dependency.dependencies[0].feature, "ex-rich-parent");
    assert!(dependency.dependencies[0].is_enabled());
    let tag_type = &data.tag_types[0];
    assert_eq!(
        (tag_type.icon.clone(), tag_type.color.clone()),
        (Some(None), Some(None))
    );
    let legal = data.context_fields.as_deref().unwrap()[0]
        .legal_values
        .as_deref()
        .unwrap();
    assert_eq!(legal[0].description.as_deref(), Some("Europe"));
    assert_eq!(legal[1].description, None);
}

#[test]
fn deprecated_feature_fields_are_kept() {
    let data = assert_round_trip(
        &model_fixture("deprecated-feature-fields.json"),
        "deprecated",
    );
    let feature = &data.features[0];
    assert!(feature.last_seen_at.flatten().is_some());
    assert_eq!(feature.archived_at, Some(None));
    assert_eq!(feature.variants.as_deref().map(<[_]>::len), Some(2));
    assert_eq!(feature.strategies.as_deref().map(<[_]>::len), Some(2));
    assert!(feature.extra.is_empty());
}

#[test]
fn feature_tag_deprecated_type_and_value_are_kept() {
    let data = assert_round_trip(
        &model_fixture("feature-tag-deprecated-type-value.json"),
        "deprecated tag",
    );
    let tags = data.feature_tags.as_deref().unwrap();
    assert_eq!(tags[0].deprecated_type.as_deref(), Some("team"));
    assert_eq!(tags[0].deprecated_value.as_deref(), Some("alpha"));
    assert_eq!(tags[0].created_by_user_id, Some(None));
    assert_eq!(tags[1].tag_type, None);
    assert_eq!(tags[1].created_by_user_id, Some(Some(3)));
    let feature_tags = data.features[0].tags.clone().flatten().unwrap();
    assert_eq!(feature_tags[0].tag_type, "team");
}

#[test]
fn unknown_operator_is_refused() {
    let err =
        serde_json::from_value::<ExportData>(model_fixture("unknown-operator.json")).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("REGEX_MATCH"), "{message}");
    assert!(message.contains("unknown variant"), "{message}");
}

#[test]
fn unknown_keys_are_preserved() {
    let data = assert_round_trip(&model_fixture("feature-unknown-key.json"), "unknown keys");
    let feature = &data.features[0];
    assert_eq!(feature.extra["createdBy"]["name"], "admin");
    assert!(feature.extra.contains_key("lifecycle"));
    assert!(data.feature_strategies[0].extra.contains_key("milestoneId"));
    let environment = &data.feature_environments.as_deref().unwrap()[0];
    assert!(environment.extra.contains_key("releasePlans"));
    assert_eq!(
        data.context_fields.as_deref().unwrap()[0].extra["project"],
        "default"
    );
    assert!(
        data.feature_tags.as_deref().unwrap()[0]
            .extra
            .contains_key("createdAt")
    );
    assert_eq!(data.tag_types[0].extra["isBuiltIn"], true);
}

#[test]
fn every_operator_parses() {
    let data = assert_round_trip(&model_fixture("all-operators.json"), "operators");
    let operators: Vec<_> = data.feature_strategies[0]
        .constraints
        .iter()
        .map(|c| c.operator)
        .collect();
    assert_eq!(operators, Operator::ALL);
    let ci = &data.feature_strategies[0].constraints[2];
    assert!(ci.is_case_insensitive() && !ci.is_inverted());
}
