//! `import_toggles` of 1,000 and 10,000 new features (2 strategies with a constraint each, an
//! environment entry with 2 variants, one tag) into MemoryStore and durable FileStore, and
//! `export` of the same. See BENCHMARKS.md.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::FileStore;
use toggle_admin::{Caller, MemoryStore, Store, ToggleAdmin};

/// A fresh, empty directory under the system's temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "toggle-admin-bench-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The import body: `features` new features in project `default`, environment `production`.
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
            "features": list,
            "featureStrategies": strategies,
            "featureEnvironments": environments,
            "featureTags": tags,
            "tagTypes": [{"name": "simple", "description": "Simple tag to get you started",
                          "icon": null}],
            "contextFields": [],
            "segments": [],
            "dependencies": []
        }
    })
}

/// An admin core over `store` with the `production` environment and the `default` project.
async fn prepared(store: impl Store) -> (ToggleAdmin, Caller) {
    let admin = ToggleAdmin::new(store);
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
    (admin, caller)
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench_import(c: &mut Criterion) {
    let runtime = current_thread();
    let mut group = c.benchmark_group("import");
    for features in [1_000usize, 10_000] {
        let document = body(features);
        group.bench_with_input(
            BenchmarkId::new("MemoryStore", features),
            &document,
            |b, document| {
                b.to_async(&runtime).iter_batched(
                    || {
                        std::thread::scope(|s| {
                            s.spawn(|| current_thread().block_on(prepared(MemoryStore::new())))
                                .join()
                                .unwrap()
                        })
                    },
                    |(admin, caller)| async move {
                        let report = admin.import_toggles_json(&caller, document).await.unwrap();
                        (admin, report)
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        group.bench_with_input(
            BenchmarkId::new("FileStore durable", features),
            &document,
            |b, document| {
                b.to_async(&runtime).iter_batched(
                    || {
                        let dir = TempDir::new("import");
                        let store = FileStore::open(&dir.0).unwrap();
                        let (admin, caller) = std::thread::scope(|s| {
                            s.spawn(|| current_thread().block_on(prepared(store)))
                                .join()
                                .unwrap()
                        });
                        (admin, caller, dir)
                    },
                    |(admin, caller, dir)| async move {
                        let report = admin.import_toggles_json(&caller, document).await.unwrap();
                        (admin, report, dir)
                    },
                    BatchSize::PerIteration,
                )
            },
        );
        let (admin, caller) = runtime.block_on(async {
            let (admin, caller) = prepared(MemoryStore::new()).await;
            admin.import_toggles_json(&caller, &document).await.unwrap();
            (admin, caller)
        });
        group.bench_with_input(
            BenchmarkId::new("export MemoryStore", features),
            &features,
            |b, _| {
                b.to_async(&runtime).iter(|| async {
                    admin
                        .export(&caller, "default", "production", &[])
                        .await
                        .unwrap()
                })
            },
        );
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_import
}
criterion_main!(benches);
