//! The event log a page at a time: a page of 100, newest first, out of a log of
//! 1,000,000 events, unfiltered and filtered, on MemoryStore and FileStore (durability off;
//! the log is read from the journal segments), and through the HTTP route on FileStore.
//! See BENCHMARKS.md.
//!
//! The log: 10,000 commits of 100 events each. Event `n` is of one of 5 types (`n % 5`),
//! project `p{n % 10}` and feature `f{n % 1000}`: every filter's matches are spread evenly
//! over the whole log, the worst case for an index that skips what cannot match.
//!
//! `EVENTS_BENCH_COUNT` overrides the log's size (e.g. 10000 for a quick run).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toggle_admin::store::{ChangeSet, Collection, EventQuery, FileStore, Key, NewEvent};
use toggle_admin::{MemoryStore, Store};

const PER_COMMIT: u64 = 100;
const TYPES: [&str; 5] = [
    "feature-created",
    "feature-updated",
    "feature-environment-enabled",
    "feature-environment-disabled",
    "feature-strategy-update",
];

fn event_count() -> u64 {
    std::env::var("EVENTS_BENCH_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

fn event(n: u64) -> NewEvent {
    let feature = format!("f{}", n % 1000);
    NewEvent {
        event_type: TYPES[(n % 5) as usize].to_owned(),
        created_by: "bench".to_owned(),
        created_at: Utc::now(),
        project: Some(format!("p{}", n % 10)),
        feature_name: Some(feature.clone()),
        environment: Some("production".to_owned()),
        data: Some(json!({"name": feature, "enabled": n.is_multiple_of(2), "n": n}).into()),
        pre_data: None,
        created_by_user_id: None,
        tags: None,
    }
}

/// Commit `count` events to `store`, `PER_COMMIT` to a commit.
async fn fill(store: &dyn Store, count: u64) {
    let mut n = 0;
    while n < count {
        let mut changes = ChangeSet::new();
        changes.put(
            Key::new(Collection::Features, format!("f{}", n % 1000)),
            json!({"n": n}),
        );
        for _ in 0..PER_COMMIT.min(count - n) {
            changes.event(event(n));
            n += 1;
        }
        store.commit(changes).await.expect("commit");
    }
}

/// The queries every store answers.
fn queries() -> [(&'static str, EventQuery); 4] {
    [
        ("newest 100", EventQuery::newest(100)),
        ("project (1 in 10)", EventQuery::newest(100).project("p3")),
        (
            "type and project (1 in 10)",
            EventQuery::newest(100)
                .event_type("feature-updated")
                .project("p1"),
        ),
        (
            "feature (1 in 1000)",
            EventQuery::newest(100).feature("f421"),
        ),
    ]
}

fn temp_dir() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("toggle-admin-bench-events-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let count = event_count();
    let mut group = c.benchmark_group(format!("events page of {count}"));
    group.measurement_time(Duration::from_secs(5));

    let memory = MemoryStore::new();
    runtime.block_on(fill(&memory, count));
    for (name, query) in queries() {
        group.bench_function(format!("memory {name}"), |b| {
            b.to_async(&runtime)
                .iter(|| async { black_box(memory.query_events(&query).await.expect("query")) })
        });
    }
    drop(memory);

    let dir = temp_dir();
    {
        let store = FileStore::builder(&dir)
            .durable(false)
            .open()
            .expect("open");
        runtime.block_on(fill(&store, count));
    }
    // Reopened: the index is rebuilt from the segments, and nothing of the log is cached.
    let store = FileStore::builder(&dir)
        .durable(false)
        .open()
        .expect("reopen");
    for (name, query) in queries() {
        let page = runtime.block_on(store.query_events(&query)).expect("query");
        assert_eq!(page.events.len(), 100, "{name}");
        group.bench_function(format!("file {name}"), |b| {
            b.to_async(&runtime)
                .iter(|| async { black_box(store.query_events(&query).await.expect("query")) })
        });
    }
    group.finish();
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
