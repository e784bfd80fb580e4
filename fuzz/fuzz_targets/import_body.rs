//! An import body, decoded and validated (the dry run), then imported into a fresh store:
//! nothing may panic, the dry run must agree with the import (no errors ⇔ the import
//! succeeds), and a failed import must change nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::{Caller, MemoryStore, ToggleAdmin};

async fn setup() -> (ToggleAdmin, Caller) {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("fuzz").await.expect("bootstrap");
    let caller = admin.authenticate(Some(&key.secret)).await.expect("authenticate");
    for name in ["development", "production"] {
        admin
            .create_environment(
                &caller,
                &Environment { name: name.into(), environment_type: name.into(), ..Default::default() },
            )
            .await
            .expect("environment");
    }
    admin
        .create_project(
            &caller,
            &Project {
                id: "default".into(),
                name: "Default".into(),
                environments: vec!["development".into(), "production".into()],
                ..Default::default()
            },
        )
        .await
        .expect("project");
    admin
        .create_feature(&caller, "default", &NewFeature { name: "existing".into(), ..Default::default() })
        .await
        .expect("feature");
    (admin, caller)
}

fuzz_target!(|data: &[u8]| {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    runtime.block_on(async {
        let (admin, caller) = setup().await;
        let before = admin.events(&caller, 0, usize::MAX).await.expect("events").len();
        let validation = admin.validate_import_json(&caller, &body).await;
        let imported = admin.import_toggles_json(&caller, &body).await;
        let after = admin.events(&caller, 0, usize::MAX).await.expect("events").len();
        match (&validation, &imported) {
            (Ok(v), Ok(_)) => assert!(v.errors.is_empty(), "validation found {:?} but the import succeeded", v.errors),
            (Ok(v), Err(e)) => {
                assert!(!v.errors.is_empty(), "validation found nothing but the import failed: {e:?}");
                assert_eq!(before, after, "a failed import wrote events");
            }
            (Err(_), Ok(_)) => panic!("validation failed but the import succeeded"),
            (Err(_), Err(_)) => assert_eq!(before, after, "a failed import wrote events"),
        }
    });
});
