//! The facade over a durable FileStore under real concurrency (a multi-threaded runtime):
//! writers of one hot feature environment and of many, and exports while clients patch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use test_support::facade::{all_events, setup_on};
use toggle_admin::model::NewFeature;
use toggle_admin::store::FileStore;
use toggle_admin::{Caller, ToggleAdmin};

fn add(name: &str) -> json_patch::Patch {
    serde_json::from_value(
        json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 0}}]),
    )
    .unwrap()
}

async fn create_features(admin: &ToggleAdmin, caller: &Caller, n: usize) {
    for i in 0..n {
        admin
            .create_feature(
                caller,
                "p",
                &NewFeature {
                    name: format!("g{i:04}"),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
}

/// 16 tasks patch concurrently, each its feature (`own`) or all the same one; every
/// acknowledged patch is in the final list, and there is exactly one event per patch, each
/// holding one more variant than the one before on that feature.
async fn patch_concurrently(own: bool) {
    const TASKS: usize = 16;
    const EACH: usize = 25;
    let dir = tempfile::tempdir().unwrap();
    let admin = ToggleAdmin::new(FileStore::open(dir.path()).unwrap());
    let (admin, caller) = setup_on(admin).await;
    create_features(&admin, &caller, TASKS).await;
    let before = all_events(&admin, &caller).await.len();
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (admin, caller) = (admin.clone(), caller.clone());
            tokio::spawn(async move {
                let feature = if own {
                    format!("g{t:04}")
                } else {
                    "g0000".to_owned()
                };
                let mut acked = Vec::new();
                for i in 0..EACH {
                    let name = format!("t{t}-v{i}");
                    admin
                        .patch_variants(&caller, "p", &feature, "production", &add(&name))
                        .await
                        .unwrap();
                    acked.push((feature.clone(), name));
                }
                acked
            })
        })
        .collect();
    let mut acked = Vec::new();
    for task in tasks {
        acked.extend(task.await.unwrap());
    }
    let features: std::collections::BTreeSet<&String> = acked.iter().map(|(f, _)| f).collect();
    for feature in &features {
        let stored = admin
            .variants(&caller, "p", feature, "production")
            .await
            .unwrap();
        let names: std::collections::BTreeSet<&str> =
            stored.variants.iter().map(|v| v.name.as_str()).collect();
        let expected: Vec<&str> = acked
            .iter()
            .filter(|(f, _)| f == *feature)
            .map(|(_, n)| n.as_str())
            .collect();
        assert_eq!(names.len(), expected.len(), "{feature}");
        for name in expected {
            assert!(
                names.contains(name),
                "{feature}: acknowledged {name} is missing"
            );
        }
        assert_eq!(stored.variants.iter().map(|v| v.weight).sum::<u32>(), 1000);
    }
    let events = all_events(&admin, &caller).await;
    let patches: Vec<_> = events[before..]
        .iter()
        .filter(|e| e.event.event_type == "feature-environment-variants-updated")
        .collect();
    assert_eq!(patches.len(), TASKS * EACH);
    for feature in features {
        let lengths: Vec<usize> = patches
            .iter()
            .filter(|e| e.event.feature_name.as_deref() == Some(feature.as_str()))
            .map(|e| {
                e.event.data.as_ref().unwrap().to_value().unwrap()["variants"]
                    .as_array()
                    .unwrap()
                    .len()
            })
            .collect();
        let expected: Vec<usize> = (1..=lengths.len()).collect();
        assert_eq!(
            lengths, expected,
            "{feature}: events out of step with the data"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_writers_of_one_feature_on_a_durable_file_store_lose_nothing() {
    patch_concurrently(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_writers_of_sixteen_features_on_a_durable_file_store_lose_nothing() {
    patch_concurrently(true).await;
}

/// An export of 3,000 features reads one consistent view: while four clients keep patching,
/// every export answers with all the features, and no patch fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn exports_succeed_while_clients_keep_patching() {
    const FEATURES: usize = 3_000;
    let dir = tempfile::tempdir().unwrap();
    let admin = ToggleAdmin::new(
        FileStore::builder(dir.path())
            .durable(false)
            .open()
            .unwrap(),
    );
    let (admin, caller) = setup_on(admin).await;
    create_features(&admin, &caller, FEATURES).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let patchers: Vec<_> = (0..4)
        .map(|t| {
            let (admin, caller, stop) = (admin.clone(), caller.clone(), stop.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let feature = format!("g{:04}", (t * 7 + n) % FEATURES);
                    admin
                        .patch_variants(
                            &caller,
                            "p",
                            &feature,
                            "production",
                            &add(&format!("v{n}")),
                        )
                        .await
                        .unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    for _ in 0..5 {
        let data = admin.export(&caller, "p", "production", &[]).await.unwrap();
        // The set-up's feature `f` and ours.
        assert_eq!(data.features.len(), FEATURES + 1);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut patched = 0;
    for patcher in patchers {
        patched += patcher.await.unwrap();
    }
    assert!(patched > 0);
}
