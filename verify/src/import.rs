//! Shared set-up for the import and export tests: a store with project `default` on
//! `development` (and `production`), and helpers to read fixtures and compare exports.

use std::path::Path;

use serde_json::{Value, json};
use toggle_admin::model::{Environment, ExportData, NewSegment, Project};
use toggle_admin::store::Event;
use toggle_admin::{Caller, MemoryStore, ToggleAdmin};

/// An admin core with environments `development` and `production`, project `default` on
/// both, project `other` on `development`, and an admin caller.
pub async fn setup() -> (ToggleAdmin, Caller) {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("importer").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for name in ["development", "production"] {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: name.into(),
                    environment_type: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    for (id, envs) in [
        ("default", vec!["development", "production"]),
        ("other", vec!["development"]),
    ] {
        admin
            .create_project(
                &caller,
                &Project {
                    id: id.into(),
                    name: id.into(),
                    environments: envs.into_iter().map(String::from).collect(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    (admin, caller)
}

/// A global segment named `name`.
pub async fn segment(admin: &ToggleAdmin, caller: &Caller, name: &str) -> i64 {
    admin
        .create_segment(
            caller,
            &NewSegment {
                name: name.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .id
}

/// The fixture `name` of `tests/fixtures/unleash-6.10.1/`.
pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/unleash-6.10.1")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// An import body for `data` into `default`/`development`.
pub fn body(data: Value) -> Value {
    json!({"project": "default", "environment": "development", "data": data})
}

/// A minimal valid `data` with the given features (names) and nothing else.
pub fn data_with(features: &[&str]) -> Value {
    json!({
        "features": features.iter().map(|f| json!({"name": f})).collect::<Vec<_>>(),
        "featureStrategies": [],
        "tagTypes": [],
    })
}

/// Every event of the log.
pub async fn events(admin: &ToggleAdmin, caller: &Caller) -> Vec<Event> {
    admin.events(caller, 0, usize::MAX).await.unwrap()
}

/// An export as JSON with strategy ids blanked: ids are the one thing an import does not
/// carry over.
pub fn without_ids(data: &ExportData) -> Value {
    let mut value = serde_json::to_value(data).unwrap();
    for strategy in value["featureStrategies"].as_array_mut().unwrap() {
        strategy["id"] = Value::Null;
    }
    value
}

/// The whole store as JSON (every collection but API keys), to compare states.
pub async fn state(admin: &ToggleAdmin) -> Value {
    use toggle_admin::store::Collection;
    let mut out = serde_json::Map::new();
    for collection in Collection::ALL {
        if collection == Collection::ApiKeys {
            continue;
        }
        let listing = admin.store().list(collection, "").await.unwrap();
        let records: Vec<Value> = listing
            .records
            .iter()
            .map(|(id, r)| json!([id, r.value.to_value().unwrap()]))
            .collect();
        out.insert(collection.as_str().to_owned(), Value::Array(records));
    }
    Value::Object(out)
}
