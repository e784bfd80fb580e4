//! Fault: the FileStore's disk fills up, to the last byte, and space comes back.
//!
//! A real full disk: a small tmpfs mounted by the test (root only: CI runs as root; elsewhere
//! the tests say they were skipped, and fail under `CI=true`), filled by a file written until
//! the file system refuses another byte. Promised (ROBUSTNESS.md, "Faults"): commits are
//! refused with an error naming the full disk (507 `InsufficientStorage` over HTTP), changing
//! nothing; reads go on; `/ready` is 503 with the cause in the log; once space is freed the
//! very next commit goes through, without a restart; every acknowledged commit is there
//! after a restart.

use test_support as support;

mod faults_support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use faults_support::{Server, call, cannot_stage, client, create_feature, ready, variants};
use reqwest::Method;
use serde_json::json;
use toggle_admin::store::{ChangeSet, Collection, FileStore, Key, Revision, Store};

/// A tmpfs of a few MiB, mounted for one test and unmounted after it.
struct Tmpfs {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount one of `size` (as `mount -o size=` takes it), or say why not.
    fn mount(size: &str) -> Option<Tmpfs> {
        if !faults_support::is_root() {
            cannot_stage("mounting a tmpfs needs root");
            return None;
        }
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("disk");
        std::fs::create_dir(&dir).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(Tmpfs {
                dir,
                _parent: parent,
            }),
            Ok(out) => {
                cannot_stage(&format!(
                    "mount -t tmpfs failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
                None
            }
            Err(e) => {
                cannot_stage(&format!("mount could not run: {e}"));
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a server killed a moment ago may still hold a file open.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.dir)
            .status();
    }
}

/// Fill the file system of `dir` to its last byte with one file, and return its path.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![0x55u8; 1 << 20];
    for size in [1 << 20, 64 << 10, 4 << 10, 512, 1] {
        loop {
            match file.write(&chunk[..size]) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
    }
    // Not one more byte fits.
    let refused = std::fs::write(dir.join("one-more"), b"x");
    assert!(
        refused.is_err() || std::fs::metadata(dir.join("one-more")).unwrap().len() == 0,
        "the disk is not full"
    );
    let _ = std::fs::remove_file(dir.join("one-more"));
    path
}

fn key(i: u64) -> Key {
    Key::new(Collection::Features, format!("f{i:06}"))
}

fn put(i: u64) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key(i), Revision::ABSENT)
        .put(key(i), json!({ "i": i, "pad": "p".repeat(200) }));
    changes
}

/// The library's FileStore on a full disk: refused with `OutOfSpace`, reads answer, the
/// first commit after space is freed goes through, everything acknowledged survives a
/// reopen.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_store_on_a_full_disk_refuses_commits_and_takes_them_again_once_space_returns() {
    let Some(disk) = Tmpfs::mount("2m") else {
        return;
    };
    let dir = disk.dir.join("store");
    let store = FileStore::open(&dir).unwrap();
    let mut acknowledged = BTreeMap::new();
    // A few commits first: the journal has room made ready past them.
    for i in 0..10 {
        acknowledged.insert(i, store.commit(put(i)).await.unwrap());
    }
    let filler = fill(&disk.dir);
    let mut i = 10;
    let refused = loop {
        match store.commit(put(i)).await {
            Ok(revision) => {
                acknowledged.insert(i, revision);
                i += 1;
            }
            Err(error) => break error,
        }
        assert!(i < 100_000, "the disk never filled up");
    };
    assert!(refused.is_out_of_space(), "{refused}");
    assert!(
        refused.to_string().contains("the disk is full"),
        "{refused}"
    );
    // It stays refused while the disk is full, and nothing refused is there.
    for attempt in 0..3 {
        let error = store.commit(put(i)).await.unwrap_err();
        assert!(error.is_out_of_space(), "attempt {attempt}: {error}");
    }
    assert_eq!(store.get(&key(i)).await.unwrap(), None);
    assert_eq!(
        store.revision().await.unwrap(),
        Revision(acknowledged.len() as u64)
    );
    for (n, revision) in &acknowledged {
        assert_eq!(
            store.get(&key(*n)).await.unwrap().unwrap().revision,
            *revision
        );
    }
    // Space returns: the very next commit goes through.
    std::fs::remove_file(filler).unwrap();
    acknowledged.insert(i, store.commit(put(i)).await.unwrap());
    acknowledged.insert(i + 1, store.commit(put(i + 1)).await.unwrap());
    drop(store);
    let store = FileStore::open(&dir).unwrap();
    assert_eq!(
        store.revision().await.unwrap(),
        Revision(acknowledged.len() as u64)
    );
    for (n, revision) in &acknowledged {
        assert_eq!(
            store.get(&key(*n)).await.unwrap().unwrap().revision,
            *revision
        );
    }
}

/// The server on a full disk: writes 507 naming the cause, reads 200, `/ready` 503 with the
/// cause in the log; space freed, the next write goes through without a restart; every
/// acknowledged write is there after a SIGKILL and a restart.
#[tokio::test(flavor = "multi_thread")]
async fn the_server_on_a_full_disk_answers_507_and_carries_on_once_space_returns() {
    let Some(disk) = Tmpfs::mount("3m") else {
        return;
    };
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("server.log");
    let data = disk.dir.join("store");
    let data_arg = data.to_str().unwrap().to_owned();
    let http = client(std::time::Duration::from_secs(30));
    let server = Server::start(&["--data", &data_arg], &log).await;
    let features: Vec<String> = (0..8).map(|f| format!("full-disk-{f}")).collect();
    for feature in &features {
        assert_eq!(create_feature(&http, &server, feature).await.status, 201);
    }
    let filler = fill(&disk.dir);

    // Variant PUTs, round the features, until one is refused.
    let mut last = BTreeMap::new();
    let mut n = 0u64;
    let refusal = loop {
        let feature = &features[(n % 8) as usize];
        let answer = call(
            &http,
            Method::PUT,
            faults_support::variants_url(&server, feature),
            Some(variants(n, 300)),
        )
        .await;
        match answer.status {
            200 => {
                last.insert(feature.clone(), n);
                n += 1;
            }
            _ => break answer,
        }
        assert!(n < 50_000, "the disk never filled up");
    };
    assert_eq!(refusal.status, 507, "{}", refusal.body);
    assert_eq!(
        refusal.body["name"], "InsufficientStorage",
        "{}",
        refusal.body
    );
    let message = refusal.body["message"].as_str().unwrap();
    assert!(message.contains("out of disk space"), "{message}");
    // Still refused, and PATCH too; nothing refused is visible.
    let refused_feature = features[(n % 8) as usize].clone();
    let patch = call(
        &http,
        Method::PATCH,
        faults_support::variants_url(&server, &refused_feature),
        Some(json!([{"op": "replace", "path": "/0/name", "value": "patched"}])),
    )
    .await;
    assert_eq!(patch.status, 507, "{}", patch.body);
    // Reads answer, and show the last acknowledged write of each feature.
    for feature in &features {
        let answer = call(
            &http,
            Method::GET,
            faults_support::variants_url(&server, feature),
            None,
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        if let Some(n) = last.get(feature) {
            assert_eq!(answer.body["variants"][0]["name"], format!("v{n}"));
        }
    }
    assert_eq!(ready(&http, &server).await, 503);
    let logged = server.log_text();
    assert!(
        logged.contains("the disk is full"),
        "the log does not name the cause:\n{logged}"
    );

    // Space returns: the next write goes through, without a restart.
    std::fs::remove_file(filler).unwrap();
    let answer = call(
        &http,
        Method::PUT,
        faults_support::variants_url(&server, &refused_feature),
        Some(variants(n, 300)),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    last.insert(refused_feature, n);
    assert_eq!(ready(&http, &server).await, 200);

    // Every acknowledged write survives a SIGKILL and a restart.
    server.kill().await;
    let server = Server::start(&["--data", &data_arg], &log).await;
    for feature in &features {
        let answer = call(
            &http,
            Method::GET,
            faults_support::variants_url(&server, feature),
            None,
        )
        .await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        if let Some(n) = last.get(feature) {
            assert_eq!(
                answer.body["variants"][0]["name"],
                format!("v{n}"),
                "{feature} lost its last acknowledged write"
            );
        }
    }
    server.kill().await;
}
