//! Profiling aid: 2,000 `patch_variants` on a MemoryStore (e.g. under `valgrind --tool=callgrind`).

use serde_json::json;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::{MemoryStore, ToggleAdmin};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("loop").await?;
    let caller = admin.authenticate(Some(&key.secret)).await?;
    let env = Environment {
        name: "production".into(),
        environment_type: "production".into(),
        ..Default::default()
    };
    admin.create_environment(&caller, &env).await?;
    let project = Project {
        id: "p".into(),
        name: "p".into(),
        environments: vec!["production".into()],
        ..Default::default()
    };
    admin.create_project(&caller, &project).await?;
    let feature = NewFeature {
        name: "f".into(),
        ..Default::default()
    };
    admin.create_feature(&caller, "p", &feature).await?;
    let list = json!([
        {"name": "a", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "b", "weight": 250, "weightType": "variable", "stickiness": "default",
         "payload": {"type": "string", "value": "x"}},
        {"name": "c", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "d", "weight": 250, "weightType": "variable", "stickiness": "default"}
    ]);
    admin
        .set_variants_json(&caller, "p", "f", "production", &list)
        .await?;
    let patch = toggle_admin::variants::decode_patch(&json!([
        {"op": "replace", "path": "/0/weight", "value": 100},
        {"op": "replace", "path": "/2/stickiness", "value": "userId"},
        {"op": "replace", "path": "/1/payload", "value": {"type": "string", "value": "y"}}
    ]))?;
    for _ in 0..2000 {
        admin
            .patch_variants(&caller, "p", "f", "production", &patch)
            .await?;
    }
    Ok(())
}
