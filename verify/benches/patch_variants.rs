//! `patch_variants` against its floors: the bare `json_patch::patch` of the same patch on the
//! same list, and (for the durable file store) an fsync of 200 bytes. See BENCHMARKS.md.
//!
//! Groups:
//! * `patch_variants`: the floor, MemoryStore, FileStore with durability off, FileStore
//!   durable, and the fsync floor;
//! * `patch_variants scaling`: MemoryStore and FileStore (durability off) holding 100, 10,000
//!   and 100,000 features, patching one of them;
//! * `patch_variants concurrency`: durable FileStore, 1 and 16 tasks each patching its own
//!   feature at once, and 16 tasks all patching one feature (throughput), twice: in waves
//!   (`tasks`: spawn, patch once each, await all) and as concurrent writers (`writers`: each
//!   task patches again as soon as its last patch is acknowledged); then the same writers
//!   on a MemoryStore, their ceiling;
//! * `patch_variants postgres` (feature `postgres`, only when `TOGGLE_ADMIN_TEST_POSTGRES`
//!   is set): PostgresStore in a schema of its own, dropped afterwards.

use std::hint::black_box;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use json_patch::Patch;
use serde_json::{Value, json};
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::{ChangeSet, Collection, FileStore, Key};
use toggle_admin::{Caller, MemoryStore, Store, ToggleAdmin};

/// The 4-variant list every case patches.
fn four_variants() -> Value {
    json!([
        {"name": "a", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "b", "weight": 250, "weightType": "variable", "stickiness": "default",
         "payload": {"type": "string", "value": "x"}},
        {"name": "c", "weight": 250, "weightType": "variable", "stickiness": "default"},
        {"name": "d", "weight": 250, "weightType": "variable", "stickiness": "default"}
    ])
}

/// The 3-op patch: replace a weight, a stickiness and a payload.
fn three_ops() -> Value {
    json!([
        {"op": "replace", "path": "/0/weight", "value": 100},
        {"op": "replace", "path": "/2/stickiness", "value": "userId"},
        {"op": "replace", "path": "/1/payload", "value": {"type": "string", "value": "y"}}
    ])
}

/// Features per project.
const PER_PROJECT: usize = 1000;

/// A fresh, empty directory under the system's temp dir (removed by [`TempDir`]'s drop).
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

/// A store holding `features` features (`f0`, `f1`, …) spread over projects of
/// [`PER_PROJECT`] each (`p0`, `p1`, …), each with the 4-variant list in `production`.
/// Projects go through the facade; features are committed straight to the store,
/// [`PER_PROJECT`] per commit, so that 100,000 of them take seconds.
async fn populated(store: impl Store, features: usize) -> (ToggleAdmin, Caller) {
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
    let variants = four_variants();
    let created_at = chrono::Utc::now();
    for first in (0..features).step_by(PER_PROJECT) {
        let project = project_of(first);
        admin
            .create_project(
                &caller,
                &Project {
                    id: project.clone(),
                    name: project.clone(),
                    environments: vec!["production".into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let mut changes = ChangeSet::new();
        for i in first..features.min(first + PER_PROJECT) {
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
        admin.store().commit(changes).await.unwrap();
    }
    (admin, caller)
}

fn project_of(feature: usize) -> String {
    format!("p{}", feature / PER_PROJECT)
}

/// One patch of feature `i`.
async fn patch_one(admin: &ToggleAdmin, caller: &Caller, i: usize, patch: &Patch) {
    let feature = format!("f{i}");
    black_box(
        admin
            .patch_variants(caller, &project_of(i), &feature, "production", patch)
            .await
            .unwrap(),
    );
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn bench_patch(c: &mut Criterion) {
    let runtime = current_thread();
    let patch = toggle_admin::variants::decode_patch(&three_ops()).unwrap();
    let list = four_variants();

    let mut group = c.benchmark_group("patch_variants");
    group.bench_function("bare json_patch::patch (floor)", |b| {
        b.iter(|| {
            let mut doc = list.clone();
            json_patch::patch(&mut doc, black_box(&patch)).unwrap();
            black_box(doc)
        })
    });
    let (admin, caller) = runtime.block_on(populated(MemoryStore::new(), 1));
    group.bench_function("MemoryStore", |b| {
        b.to_async(&runtime)
            .iter(|| patch_one(&admin, &caller, 0, &patch))
    });
    let dir = TempDir::new("nosync");
    let store = FileStore::builder(&dir.0).durable(false).open().unwrap();
    let (admin, caller) = runtime.block_on(populated(store, 1));
    group.bench_function("FileStore durability off", |b| {
        b.to_async(&runtime)
            .iter(|| patch_one(&admin, &caller, 0, &patch))
    });
    drop(admin);
    let dir = TempDir::new("durable");
    let store = FileStore::open(&dir.0).unwrap();
    let (admin, caller) = runtime.block_on(populated(store, 1));
    group.bench_function("FileStore durable", |b| {
        b.to_async(&runtime)
            .iter(|| patch_one(&admin, &caller, 0, &patch))
    });
    drop(admin);
    let fsync_dir = TempDir::new("fsync");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(fsync_dir.0.join("floor"))
        .unwrap();
    let bytes = [b'x'; 200];
    group.bench_function("fsync floor (append 200 bytes + sync_data)", |b| {
        b.iter(|| {
            file.write_all(black_box(&bytes)).unwrap();
            file.sync_data().unwrap();
        })
    });
    group.finish();
    drop(dir);
    drop(fsync_dir);
}

fn bench_scaling(c: &mut Criterion) {
    let runtime = current_thread();
    let patch = toggle_admin::variants::decode_patch(&three_ops()).unwrap();
    let mut group = c.benchmark_group("patch_variants scaling");
    for features in [100usize, 10_000, 100_000] {
        let (admin, caller) = runtime.block_on(populated(MemoryStore::new(), features));
        group.bench_with_input(
            BenchmarkId::new("MemoryStore", features),
            &features,
            |b, &n| {
                b.to_async(&runtime)
                    .iter(|| patch_one(&admin, &caller, n / 2, &patch))
            },
        );
        drop(admin);
        let dir = TempDir::new("scaling");
        let store = FileStore::builder(&dir.0).durable(false).open().unwrap();
        let (admin, caller) = runtime.block_on(populated(store, features));
        group.bench_with_input(
            BenchmarkId::new("FileStore durability off", features),
            &features,
            |b, &n| {
                b.to_async(&runtime)
                    .iter(|| patch_one(&admin, &caller, n / 2, &patch))
            },
        );
        drop(admin);
    }
    group.finish();
}

fn bench_concurrency(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let patch = toggle_admin::variants::decode_patch(&three_ops()).unwrap();
    let mut group = c.benchmark_group("patch_variants concurrency");
    let dir = TempDir::new("concurrency");
    let store = FileStore::open(&dir.0).unwrap();
    let durable = runtime.block_on(populated(store, 16));
    // Two shapes of the same load. In waves (`tasks`): the tasks are spawned, each patches
    // once, all are awaited, and again; every wave ends with a barrier (the last commit's
    // sync and every task's wake-up). As writers (`writers`): each task patches again as soon
    // as its previous patch is acknowledged, as a client on a keep-alive connection does (the
    // HTTP scenarios of scripts/http-bench.sh), with no barrier until the end.
    for (shape, in_waves) in [("tasks", true), ("writers", false)] {
        concurrency_cases(
            &mut group,
            &runtime,
            "FileStore durable",
            shape,
            in_waves,
            &durable,
            &patch,
        );
    }
    drop(durable);
    drop(dir);
    // The ceiling of the durable writers: the same writers on a MemoryStore, which never
    // syncs. On a machine whose sync is fast, the ratio of 16 durable writers to one is
    // bounded by the CPU a commit costs rather than by the sync; BENCHMARKS.md compares the
    // durable writers with these (as the HTTP acceptance compares the FileStore with the
    // MemoryStore).
    let memory = runtime.block_on(populated(MemoryStore::new(), 16));
    concurrency_cases(
        &mut group,
        &runtime,
        "MemoryStore",
        "writers",
        false,
        &memory,
        &patch,
    );
    group.finish();
}

/// The concurrency cases of one store in one shape: 1 task, 16 tasks on 16 features, 16
/// tasks on one feature, each patching through `(admin, caller)`.
fn concurrency_cases(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    runtime: &tokio::runtime::Runtime,
    store: &str,
    shape: &str,
    in_waves: bool,
    (admin, caller): &(ToggleAdmin, Caller),
    patch: &Patch,
) {
    // (tasks, whether they all patch the same feature)
    for (tasks, one_key) in [(1usize, false), (16, false), (16, true)] {
        group.throughput(Throughput::Elements(tasks as u64));
        let name = if one_key {
            format!("{store}, one feature, {shape}")
        } else {
            format!("{store}, {shape}")
        };
        group.bench_with_input(BenchmarkId::new(name, tasks), &tasks, |b, &tasks| {
            b.to_async(runtime).iter_custom(|iters| {
                let (admin, caller, patch) = (admin.clone(), caller.clone(), patch.clone());
                // `iters` patches per task: `iters` waves of one, or one run of `iters`.
                let (rounds, per_task) = if in_waves { (iters, 1) } else { (1, iters) };
                async move {
                    let start = Instant::now();
                    for _ in 0..rounds {
                        let handles: Vec<_> = (0..tasks)
                            .map(|i| {
                                let (admin, caller, patch) =
                                    (admin.clone(), caller.clone(), patch.clone());
                                let feature = if one_key { 0 } else { i };
                                tokio::spawn(async move {
                                    for _ in 0..per_task {
                                        patch_one(&admin, &caller, feature, &patch).await
                                    }
                                })
                            })
                            .collect();
                        for handle in handles {
                            handle.await.unwrap();
                        }
                    }
                    start.elapsed()
                }
            })
        });
    }
}

#[cfg(feature = "postgres")]
fn bench_postgres(c: &mut Criterion) {
    use toggle_admin::store::{PostgresConfig, PostgresStore};
    let Ok(url) = std::env::var("TOGGLE_ADMIN_TEST_POSTGRES") else {
        eprintln!("patch_variants postgres: skipped (TOGGLE_ADMIN_TEST_POSTGRES not set)");
        return;
    };
    let runtime = current_thread();
    let patch = toggle_admin::variants::decode_patch(&three_ops()).unwrap();
    let schema = format!("bench_patch_{}", std::process::id());
    let store = runtime
        .block_on(PostgresStore::connect(
            PostgresConfig::new(url.clone()).with_schema(schema.clone()),
        ))
        .unwrap();
    let (admin, caller) = runtime.block_on(populated(store, 1));
    let mut group = c.benchmark_group("patch_variants postgres");
    group.bench_function("PostgresStore", |b| {
        b.to_async(&runtime)
            .iter(|| patch_one(&admin, &caller, 0, &patch))
    });
    group.finish();
    drop(admin);
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
            .await
            .unwrap();
        drop(client);
        let _ = task.await;
    });
}

#[cfg(not(feature = "postgres"))]
fn bench_postgres(_: &mut Criterion) {}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_patch, bench_scaling, bench_concurrency, bench_postgres
}
criterion_main!(benches);
