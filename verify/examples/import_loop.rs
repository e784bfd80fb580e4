//! Profiling aid: import N new features (default 10,000) into a MemoryStore (or, given a
//! second argument, a durable FileStore in that directory), then export them, printing the wall time of
//! each (e.g. under `perf record` or `valgrind --tool=callgrind`). The figures of record come from `verify/benches/import.rs`.

use std::time::Instant;

use serde_json::{Value, json};
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::FileStore;
use toggle_admin::{MemoryStore, ToggleAdmin};

/// The import body of `verify/benches/import.rs`: `features` new features with 2 strategies,
/// an environment entry with 2 variants and a tag each.
fn body(features: usize) -> Value {
    let mut list = Vec::with_capacity(features);
    let mut strategies = Vec::with_capacity(2 * features);
    let mut environments = Vec::with_capacity(features);
    let mut tags = Vec::with_capacity(features);
    for i in 0..features {
        let name = format!("imported-{i}");
        list.push(
            json!({"name": name, "type": "release", "project": "default",
                         "description": "benchmark", "stale": false, "impressionData": false,
                         "archived": false}),
        );
        strategies.push(json!({
            "name": "flexibleRollout", "featureName": name,
            "parameters": {"groupId": name, "rollout": "50", "stickiness": "default"},
            "constraints": [{"contextName": "userId", "operator": "IN",
                             "values": ["1", "2", "3"], "inverted": false,
                             "caseInsensitive": false}],
            "segments": [], "disabled": false
        }));
        strategies.push(json!({
            "name": "default", "featureName": name, "parameters": {},
            "constraints": [{"contextName": "environment", "operator": "IN",
                             "values": ["production"], "inverted": false,
                             "caseInsensitive": false}],
            "segments": [], "disabled": false
        }));
        environments.push(json!({
            "name": name, "featureName": name, "environment": "production", "enabled": true,
            "variants": [
                {"name": "on", "weight": 500, "weightType": "variable", "stickiness": "default",
                 "payload": {"type": "string", "value": "yes"}},
                {"name": "off", "weight": 500, "weightType": "variable", "stickiness": "default"}
            ]
        }));
        tags.push(json!({"featureName": name, "tagType": "simple", "tagValue": "bench"}));
    }
    json!({
        "project": "default",
        "environment": "production",
        "data": {
            "features": list, "featureStrategies": strategies,
            "featureEnvironments": environments, "featureTags": tags,
            "tagTypes": [{"name": "simple", "description": "Simple tag to get you started",
                          "icon": null}],
            "contextFields": [], "segments": [], "dependencies": []
        }
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let features = std::env::args()
        .nth(1)
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(10_000);
    let admin = match std::env::args().nth(2) {
        Some(dir) => ToggleAdmin::new(FileStore::open(dir)?),
        None => ToggleAdmin::new(MemoryStore::new()),
    };
    let key = admin.bootstrap_admin_key("loop").await?;
    let caller = admin.authenticate(Some(&key.secret)).await?;
    let environment = Environment {
        name: "production".into(),
        environment_type: "production".into(),
        ..Default::default()
    };
    admin.create_environment(&caller, &environment).await?;
    let project = Project {
        id: "default".into(),
        name: "Default".into(),
        environments: vec!["production".into()],
        ..Default::default()
    };
    admin.create_project(&caller, &project).await?;
    let document = body(features);
    let started = Instant::now();
    let report = admin.import_toggles_json(&caller, &document).await?;
    let imported = started.elapsed();
    let started = Instant::now();
    let data = admin.export(&caller, "default", "production", &[]).await?;
    let exported = started.elapsed();
    println!(
        "import of {features} features: {imported:?} ({} created); export of {}: {exported:?}",
        report.created.len(),
        data.features.len()
    );
    Ok(())
}
