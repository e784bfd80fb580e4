//! FileStore across processes: real crashes (SIGKILL) of a committing child, and the lock
//! held against a second process.
//!
//! The child is this test binary run again with `--exact child_process` and the role in an
//! environment variable; without it, `child_process` does nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;
use toggle_admin::store::{
    ChangeSet, Collection, FileStore, Key, NewEvent, Revision, Store, StoreError,
};

const ROLE: &str = "TOGGLE_ADMIN_FILE_STORE_CHILD";
const DIR: &str = "TOGGLE_ADMIN_FILE_STORE_DIR";

fn temp_dir(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "toggle-admin-{name}-{}-{}",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or_default()
    ));
    std::fs::create_dir_all(&path).unwrap();
    path
}

fn child(role: &str, dir: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "file_process::child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(DIR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command
}

/// The child's side; a no-op unless started by one of the tests below.
#[test]
fn child_process() {
    let (Ok(role), Some(dir)) = (std::env::var(ROLE), std::env::var_os(DIR)) else {
        return;
    };
    let dir = PathBuf::from(dir);
    match role.as_str() {
        "crash-writer" => crash_writer(&dir),
        "lock-probe" => {
            let outcome = match FileStore::open(&dir) {
                Ok(_) => "opened".to_owned(),
                Err(StoreError::Locked { path }) if Path::new(&path) == dir => "locked".to_owned(),
                Err(e) => format!("error {e}"),
            };
            // The test harness may have written "test child_process ... " on this line.
            println!("\nlock-probe={outcome}");
        }
        other => panic!("unknown role {other}"),
    }
}

/// Open the store, print `ready`, then commit forever from four tasks, printing
/// `ack <revision> <key>` once each commit is acknowledged. A small compaction threshold makes crashes hit compactions too.
fn crash_writer(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = std::sync::Arc::new(
            FileStore::builder(dir)
                .compact_after_bytes(16 * 1024)
                .open()
                .unwrap(),
        );
        println!("\nready");
        let tasks: Vec<_> = (0..4)
            .map(|task| {
                let store = store.clone();
                tokio::spawn(async move {
                    for i in 0.. {
                        let key = Key::new(
                            Collection::Features,
                            format!("p{}-t{task}-{i}", std::process::id()),
                        );
                        let mut changes = ChangeSet::new();
                        changes.put(key.clone(), json!({"i": i})).event(NewEvent {
                            event_type: "feature-created".to_owned(),
                            created_by: "crash-writer".to_owned(),
                            created_at: Utc::now(),
                            project: None,
                            feature_name: Some(key.id.clone()),
                            environment: None,
                            data: None,
                            pre_data: None,
                            created_by_user_id: None,
                            tags: None,
                        });
                        let revision = store.commit(changes).await.unwrap();
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "ack {} {}", revision.0, key.id).unwrap();
                        out.flush().unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
}

#[tokio::test]
async fn killed_writers_lose_no_acknowledged_commit() {
    const ROUNDS: u32 = 24;
    let dir = temp_dir("crash");
    let started = Instant::now();
    let mut seed = Utc::now().timestamp_nanos_opt().unwrap_or(1) as u64 | 1;
    let mut acknowledged: BTreeMap<String, u64> = BTreeMap::new();
    let mut rounds_with_acks = 0;
    for round in 0..ROUNDS {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut writer = child("crash-writer", &dir).spawn().unwrap();
        let mut stdout = BufReader::new(writer.stdout.take().unwrap());
        let mut out = String::new();
        // Every fourth round kills while the child starts and opens the store; the others
        // once it commits, after a random delay.
        let delay = Duration::from_millis(seed % 150);
        if round % 4 != 0 {
            while !out.contains("ready") && stdout.read_line(&mut out).unwrap() > 0 {}
        }
        std::thread::sleep(delay);
        writer.kill().unwrap();
        writer.wait().unwrap();
        stdout.read_to_string(&mut out).unwrap();
        let mut acks = 0;
        // A line cut by the kill has no newline and was not yet acknowledged to anyone.
        for line in out.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            // The harness writes "test child_process ... " before the first line.
            let line = line.find("ack ").map_or("", |at| &line[at..]);
            let mut words = line.split_whitespace();
            if words.next() == Some("ack") {
                let revision = words.next().unwrap().parse().unwrap();
                acknowledged.insert(words.next().unwrap().to_owned(), revision);
                acks += 1;
            }
        }
        if acks > 0 {
            rounds_with_acks += 1;
        }

        let store = FileStore::open(&dir).unwrap_or_else(|e| {
            panic!("round {round} (seed {seed}, delay {delay:?}): open failed: {e}")
        });
        let revision = store.revision().await.unwrap();
        // Revisions are contiguous: one event per commit, event n at revision n.
        let events = store.events(0, usize::MAX).await.unwrap();
        assert_eq!(events.len() as u64, revision.0, "round {round}");
        for (n, e) in events.iter().enumerate() {
            assert_eq!(e.revision, Revision(n as u64 + 1), "round {round}");
        }
        for (key, acked) in &acknowledged {
            let record = store
                .get(&Key::new(Collection::Features, key.clone()))
                .await
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: acknowledged {key} (r{acked}) lost"));
            assert_eq!(record.revision, Revision(*acked), "round {round}: {key}");
        }
        eprintln!(
            "round {round}: killed after {delay:?}, {acks} acknowledged, reopened at {revision}, {:?}",
            store.recovery()
        );
    }
    assert!(
        rounds_with_acks >= ROUNDS / 3,
        "only {rounds_with_acks} rounds got as far as committing"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_second_process_cannot_open_a_locked_directory() {
    let dir = temp_dir("lock-process");
    let probe = |dir: &Path| {
        let output = child("lock-probe", dir).output().unwrap();
        String::from_utf8(output.stdout).unwrap()
    };
    let store = FileStore::open(&dir).unwrap();
    let out = probe(&dir);
    assert!(out.lines().any(|l| l == "lock-probe=locked"), "{out}");
    drop(store);
    let out = probe(&dir);
    assert!(out.lines().any(|l| l == "lock-probe=opened"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
