//! FileStore's memory against the length of its event log: fill a store with N
//! events, then, in a fresh process, open it, read a page of the log, and print the
//! process's resident set size.
//!
//! ```text
//! cargo run --release -p toggle-admin-verify --example event_log_rss -- fill /tmp/log-1m 1000000
//! cargo run --release -p toggle-admin-verify --example event_log_rss -- open /tmp/log-1m
//! ```
//!
//! The events are those of `verify/benches/events.rs` (100 a commit, spread over 10 projects
//! and 1000 features).

use chrono::Utc;
use serde_json::json;
use toggle_admin::store::{ChangeSet, Collection, EventQuery, FileStore, Key, NewEvent, Store};

const TYPES: [&str; 5] = [
    "feature-created",
    "feature-updated",
    "feature-environment-enabled",
    "feature-environment-disabled",
    "feature-strategy-update",
];

fn event(n: u64) -> NewEvent {
    let feature = format!("f{}", n % 1000);
    NewEvent {
        event_type: TYPES[(n % 5) as usize].to_owned(),
        created_by: "rss".to_owned(),
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

/// This process's resident set size in KiB (Linux), with its peak.
fn rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .filter(|l| l.starts_with("VmRSS") || l.starts_with("VmHWM"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(", ")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1..) {
        Some([command, dir, count]) if command == "fill" => {
            let count: u64 = count.parse()?;
            let store = FileStore::builder(dir).durable(false).open()?;
            let mut n = 0;
            while n < count {
                let mut changes = ChangeSet::new();
                changes.put(
                    Key::new(Collection::Features, format!("f{}", n % 1000)),
                    json!({"n": n}),
                );
                for _ in 0..100.min(count - n) {
                    changes.event(event(n));
                    n += 1;
                }
                store.commit(changes).await?;
            }
            println!("filled {dir} with {count} events");
        }
        Some([command, dir]) if command == "open" => {
            let started = std::time::Instant::now();
            let store = FileStore::open(dir)?;
            let opened = started.elapsed();
            let page = store.query_events(&EventQuery::newest(100)).await?;
            let filtered = store
                .query_events(&EventQuery::newest(100).feature("f421"))
                .await?;
            println!(
                "opened {dir} in {opened:?}: {} events; pages of {} and {}; {}",
                page.total,
                page.events.len(),
                filtered.events.len(),
                rss()
            );
        }
        _ => {
            eprintln!("usage: event_log_rss fill <dir> <count> | open <dir>");
            std::process::exit(2);
        }
    }
    Ok(())
}
