//! Shared set-up for the black-box tests: a store with a project, environments and a feature.

use serde_json::{Value, json};
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, FeatureVariants, Project};
use toggle_admin::store::Event;
use toggle_admin::{Caller, Error, MemoryStore, ToggleAdmin};

/// An admin core over a MemoryStore holding project `p` with environments `production` and
/// `development`, project `other` with `production`, environment `staging` (in no project),
/// and feature `f` in `p`, `g` in `other`. Returns the core and an admin caller.
pub async fn setup() -> (ToggleAdmin, Caller) {
    setup_on(ToggleAdmin::new(MemoryStore::new())).await
}

/// The same set-up on any admin core with an empty store.
pub async fn setup_on(admin: ToggleAdmin) -> (ToggleAdmin, Caller) {
    let key = admin.bootstrap_admin_key("test-admin").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for (name, kind) in [
        ("production", "production"),
        ("development", "development"),
        ("staging", "test"),
    ] {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: name.into(),
                    environment_type: kind.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    admin
        .create_project(
            &caller,
            &Project {
                id: "p".into(),
                name: "P".into(),
                environments: vec!["production".into(), "development".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_project(
            &caller,
            &Project {
                id: "other".into(),
                name: "Other".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_feature(
            &caller,
            "p",
            &NewFeature {
                name: "f".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_feature(
            &caller,
            "other",
            &NewFeature {
                name: "g".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    (admin, caller)
}

/// A patch from JSON.
pub fn patch(ops: Value) -> json_patch::Patch {
    serde_json::from_value(ops).unwrap()
}

/// Patch `f` in `p`/`production`.
pub async fn patch_f(
    admin: &ToggleAdmin,
    caller: &Caller,
    ops: Value,
) -> Result<FeatureVariants, Error> {
    admin
        .patch_variants(caller, "p", "f", "production", &patch(ops))
        .await
}

/// Add variants `(name, weightType, weight)` to `f` in `p`/`production`, in order.
pub async fn add_variants(
    admin: &ToggleAdmin,
    caller: &Caller,
    variants: &[(&str, &str, u32)],
) -> Result<FeatureVariants, Error> {
    let ops: Vec<Value> = variants
        .iter()
        .map(|(name, kind, weight)| {
            json!({"op": "add", "path": "/-", "value": {"name": name, "weightType": kind, "weight": weight}})
        })
        .collect();
    patch_f(admin, caller, Value::Array(ops)).await
}

/// Every event of the log.
pub async fn all_events(admin: &ToggleAdmin, caller: &Caller) -> Vec<Event> {
    admin.events(caller, 0, usize::MAX).await.unwrap()
}

/// `(name, weight)` pairs of a result.
pub fn weights(result: &FeatureVariants) -> Vec<(String, u32)> {
    result
        .variants
        .iter()
        .map(|v| (v.name.clone(), v.weight))
        .collect()
}
