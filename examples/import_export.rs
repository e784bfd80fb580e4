//! Import a real Unleash 6.10.1 export into a fresh MemoryStore, export it again and print
//! the document.
//!
//! ```text
//! cargo run --example import_export
//! ```

use serde_json::{Value, json};
use toggle_admin::model::{Environment, NewSegment, Project};
use toggle_admin::{MemoryStore, ToggleAdmin};

/// An export made by Unleash 6.10.1: two features, a strategy with a segment, constraints and
/// strategy variants, environment variants, a custom context field, a tag and a dependency.
const EXPORT: &str =
    include_str!("../tests/fixtures/unleash-6.10.1/export-segment-context-dependency.json");

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("import-export").await?;
    let caller = admin.authenticate(Some(&key.secret)).await?;

    // The target: environment, project, and the segment the export refers to by name.
    admin
        .create_environment(
            &caller,
            &Environment {
                name: "development".into(),
                environment_type: "development".into(),
                ..Default::default()
            },
        )
        .await?;
    admin
        .create_project(
            &caller,
            &Project {
                id: "default".into(),
                name: "Default".into(),
                environments: vec!["development".into()],
                ..Default::default()
            },
        )
        .await?;
    admin
        .create_segment(
            &caller,
            &NewSegment {
                name: "ex-seg".into(),
                ..Default::default()
            },
        )
        .await?;

    let data: Value = serde_json::from_str(EXPORT)?;
    let body = json!({"project": "default", "environment": "development", "data": data});
    let report = admin.import_toggles_json(&caller, &body).await?;
    eprintln!(
        "created {:?}, updated {:?}, {} warning(s)",
        report.created,
        report.updated,
        report.warnings.len()
    );

    let exported = admin.export(&caller, "default", "development", &[]).await?;
    println!("{}", serde_json::to_string_pretty(&exported)?);
    Ok(())
}
