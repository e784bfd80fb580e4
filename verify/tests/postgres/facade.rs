//! Two application instances (two `ToggleAdmin`s with separate pools) on one PostgreSQL
//! schema: concurrent `patch_variants` on one feature environment lose no update.

use serde_json::json;
use test_support::facade::{all_events, patch_f, setup_on};
use toggle_admin::ToggleAdmin;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_patching_one_feature_lose_no_update() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    let first = ToggleAdmin::new(schema.connect(8).await);
    let second = ToggleAdmin::new(schema.connect(8).await);
    let (first, caller) = setup_on(first).await;
    let before = all_events(&first, &caller).await.len();

    let mut tasks = Vec::new();
    for (instance, admin) in [(0, &first), (1, &second)] {
        for t in 0..8 {
            let (admin, caller) = (admin.clone(), caller.clone());
            tasks.push(tokio::spawn(async move {
                for i in 0..50 {
                    let name = format!("i{instance}-t{t}-v{i}");
                    let op =
                        json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 0}}]);
                    patch_f(&admin, &caller, op).await.unwrap();
                }
            }));
        }
    }
    for task in tasks {
        task.await.unwrap();
    }

    // Both instances see the same end state: all 800 variants, 800 events.
    for admin in [&first, &second] {
        let result = admin
            .variants(&caller, "p", "f", "production")
            .await
            .unwrap();
        assert_eq!(result.variants.len(), 800);
        assert_eq!(result.variants.iter().map(|v| v.weight).sum::<u32>(), 1000);
        let events = all_events(admin, &caller).await;
        let patches = events[before..]
            .iter()
            .filter(|e| e.event.event_type == "feature-environment-variants-updated")
            .count();
        assert_eq!(patches, 800);
    }
}
