//! The benches' data set of many flags: `features` features in project `default`, each a
//! `flexibleRollout` of 50 % with a constraint on `userId` and two environment variants in
//! `production`, and one key of a given kind to read them with.

use serde_json::{Value, json};
use toggle_admin::model::{Environment, Project};
use toggle_admin::{KeyAccess, MemoryStore, ToggleAdmin};

/// The import document of the data set (`import_toggles_json`'s body).
pub fn import_document(features: usize) -> Value {
    let mut list = Vec::new();
    let mut strategies = Vec::new();
    let mut environments = Vec::new();
    for i in 0..features {
        let name = format!("feature-{i}");
        list.push(json!({"name": name, "type": "release", "project": "default"}));
        strategies.push(json!({
            "name": "flexibleRollout", "featureName": name,
            "parameters": {"groupId": name, "rollout": "50", "stickiness": "default"},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}],
            "segments": [], "disabled": false
        }));
        environments.push(json!({
            "name": name, "featureName": name, "environment": "production", "enabled": true,
            "variants": [
                {"name": "on", "weight": 500, "weightType": "variable", "stickiness": "default"},
                {"name": "off", "weight": 500, "weightType": "variable", "stickiness": "default"}
            ]
        }));
    }
    json!({"project": "default", "environment": "production", "data": {
        "features": list, "featureStrategies": strategies, "featureEnvironments": environments,
        "featureTags": [], "tagTypes": [], "contextFields": [], "segments": [], "dependencies": []
    }})
}

/// An admin core over a MemoryStore holding the data set of `features` flags, and the
/// secret of a key named `key_name` with `access` (a client or a frontend key of
/// `production`, say).
pub async fn admin_with_rollouts(
    features: usize,
    key_name: &str,
    access: KeyAccess,
) -> (ToggleAdmin, String) {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("bench").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    admin
        .create_environment(
            &caller,
            &Environment {
                name: "production".into(),
                environment_type: "production".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_project(
            &caller,
            &Project {
                id: "default".into(),
                name: "Default".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .import_toggles_json(&caller, &import_document(features))
        .await
        .unwrap();
    let reader = admin
        .create_api_key(&caller, key_name, access)
        .await
        .unwrap();
    (admin, reader.secret)
}
