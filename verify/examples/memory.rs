//! Resident memory of a MemoryStore holding 100,000 features with 4 variants each: prints
//! `VmRSS` from `/proc/self/status` (Linux) before and after filling it.
//!
//! ```text
//! cargo run --release -p toggle-admin-verify --example memory
//! ```

use serde_json::json;
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::{ChangeSet, Collection, Key};
use toggle_admin::{MemoryStore, ToggleAdmin};

const FEATURES: usize = 100_000;
const PER_PROJECT: usize = 1_000;

fn rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "VmRSS: unknown".to_owned())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("before: {}", rss());
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("memory").await?;
    let caller = admin.authenticate(Some(&key.secret)).await?;
    let env = Environment {
        name: "production".into(),
        environment_type: "production".into(),
        ..Default::default()
    };
    admin.create_environment(&caller, &env).await?;
    let variants = json!([
        {"name": "a", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "b", "weight": 250, "weightType": "variable", "stickiness": "default",
         "payload": {"type": "string", "value": "x"}},
        {"name": "c", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "d", "weight": 250, "weightType": "variable", "stickiness": "default"}
    ]);
    let created_at = chrono::Utc::now();
    for first in (0..FEATURES).step_by(PER_PROJECT) {
        let project = format!("p{}", first / PER_PROJECT);
        let new_project = Project {
            id: project.clone(),
            name: project.clone(),
            environments: vec!["production".into()],
            ..Default::default()
        };
        admin.create_project(&caller, &new_project).await?;
        let mut changes = ChangeSet::new();
        for i in first..first + PER_PROJECT {
            let name = format!("f{i}");
            changes
                .put(
                    Key::new(Collection::Features, name.clone()),
                    json!({"name": name, "project": project, "type": "release",
                           "createdAt": created_at}),
                )
                .put(
                    Key::new(
                        Collection::FeatureEnvironments,
                        format!("{name}\u{1f}production"),
                    ),
                    json!({"enabled": true, "variants": variants, "strategies": []}),
                );
        }
        admin.store().commit(changes).await?;
    }
    println!("after {FEATURES} features with 4 variants each: {}", rss());
    Ok(())
}
