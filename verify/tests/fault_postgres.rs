//! Fault: the PostgreSQL database goes away and comes back, under continuous writes.
//!
//! * A private cluster (its own `initdb` data directory and port, never the shared server)
//!   stopped (`pg_ctl stop -m fast`) and started again while writers create features through
//!   the server. Needs PostgreSQL's server binaries (`/usr/lib/postgresql/*/bin`); without
//!   them the test says it was skipped, and fails under `CI=true`. As root, the cluster runs
//!   as the `postgres` user (PostgreSQL refuses to run as root).
//! * On the shared server (`TOGGLE_ADMIN_TEST_POSTGRES`), the server's own sessions cut with
//!   `pg_terminate_backend`, found by an `application_name` of the test's own.
//!
//! Promised (ROBUSTNESS.md, "Faults"): every request is answered within 10 s (never a hang),
//! 503 `ServiceUnavailable` while the database is gone, writes succeed again within 10 s of
//! its return without a restart, and nothing acknowledged is lost.

use test_support as support;

mod faults_support;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use faults_support::{Answer, Server, cannot_stage, client, create_feature, feature_exists, ready};
use tokio::sync::Mutex;

/// The longest any request may take while the database is away.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// A PostgreSQL cluster of the test's own.
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    as_postgres: bool,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// `initdb` and start one on a free port, or say why not.
    fn start() -> Option<Cluster> {
        let Some(bin) = server_binaries() else {
            cannot_stage("PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are missing");
            return None;
        };
        let as_postgres = faults_support::is_root();
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        if as_postgres {
            let owned = std::process::Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(owned.success(), "chown of the cluster's directory failed");
        }
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let cluster = Cluster {
            bin,
            data,
            port,
            as_postgres,
            _dir: dir,
        };
        let data = cluster.data.to_str().unwrap().to_owned();
        cluster.run(
            "initdb",
            &["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync"],
        );
        cluster.pg_ctl_start();
        Some(cluster)
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn pg_ctl_start(&self) {
        let data = self.data.to_str().unwrap().to_owned();
        let log = self.data.parent().unwrap().join("postgres.log");
        let socket_dir = self.data.parent().unwrap().to_str().unwrap().to_owned();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &data,
                "-l",
                log.to_str().unwrap(),
                "-o",
                &format!(
                    "-p {} -k {socket_dir} -c listen_addresses=127.0.0.1",
                    self.port
                ),
                "-w",
                "start",
            ],
        );
    }

    fn pg_ctl_stop(&self, mode: &str) {
        let data = self.data.to_str().unwrap().to_owned();
        self.run("pg_ctl", &["-D", &data, "-m", mode, "-w", "stop"]);
    }

    /// Run one of the server binaries, as `postgres` when this process is root.
    fn run(&self, program: &str, args: &[&str]) {
        let program = self.bin.join(program);
        let output = if self.as_postgres {
            std::process::Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&program)
                .args(args)
                .output()
        } else {
            std::process::Command::new(&program).args(args).output()
        }
        .unwrap();
        assert!(
            output.status.success(),
            "{} {args:?}: {}{}",
            program.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.to_str().unwrap_or_default().to_owned();
        let program = self.bin.join("pg_ctl");
        let args = ["-D", data.as_str(), "-m", "immediate", "-w", "stop"];
        let _ = if self.as_postgres {
            std::process::Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&program)
                .args(args)
                .output()
        } else {
            std::process::Command::new(&program).args(args).output()
        };
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` with `initdb` and `pg_ctl`.
fn server_binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// What the writers saw.
#[derive(Default)]
struct Seen {
    /// Every answer, in the order they came.
    answers: Vec<(Instant, Answer)>,
    /// The features whose creation was acknowledged (201).
    acknowledged: Vec<String>,
}

/// `writers` tasks creating features (`<prefix>-<writer>-<n>`) one after another until
/// `stop` is set.
fn start_writers(
    server: &Server,
    writers: usize,
    prefix: &str,
    stop: &Arc<AtomicBool>,
    seen: &Arc<Mutex<Seen>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..writers)
        .map(|writer| {
            let (stop, seen) = (Arc::clone(stop), Arc::clone(seen));
            let prefix = prefix.to_owned();
            let base = server.base.clone();
            let log = server.log.clone();
            tokio::spawn(async move {
                // Generous: the assertion on answer times is the test's, not the client's.
                let http = client(Duration::from_secs(60));
                let server = Server::attach(base, log);
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let name = format!("{prefix}-{writer}-{n}");
                    let answer = create_feature(&http, &server, &name).await;
                    let mut seen = seen.lock().await;
                    if answer.status == 201 {
                        seen.acknowledged.push(name);
                    }
                    seen.answers.push((Instant::now(), answer));
                    drop(seen);
                    n += 1;
                }
            })
        })
        .collect()
}

/// Wait until `writers` answers with `status` came after `since`; returns when the last of
/// them came, or `None` after `limit`.
async fn wait_for(
    seen: &Arc<Mutex<Seen>>,
    status: u16,
    count: usize,
    since: Instant,
    limit: Duration,
) -> Option<Instant> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        {
            let seen = seen.lock().await;
            let matching: Vec<Instant> = seen
                .answers
                .iter()
                .filter(|(at, answer)| *at >= since && answer.status == status)
                .map(|(at, _)| *at)
                .collect();
            if matching.len() >= count {
                return matching.get(count - 1).copied();
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Every answer came within [`ANSWER_WITHIN`], and was a success or 503
/// `ServiceUnavailable`.
fn check_answers(seen: &Seen) {
    for (_, answer) in &seen.answers {
        assert!(
            answer.took < ANSWER_WITHIN,
            "a request took {:?}: {answer:?}",
            answer.took
        );
        match answer.status {
            201 => {}
            503 => assert_eq!(answer.body["name"], "ServiceUnavailable", "{answer:?}"),
            _ => panic!("unexpected answer {answer:?}"),
        }
    }
}

/// Every acknowledged feature is there.
async fn check_acknowledged(server: &Server, seen: &Seen) {
    let http = client(Duration::from_secs(30));
    for name in &seen.acknowledged {
        assert!(
            feature_exists(&http, server, name).await,
            "the acknowledged feature {name} was lost"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_restart_under_writes_costs_503s_only_while_it_is_down() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("server.log");
    let url = cluster.url();
    let server = Server::start(&["--postgres", &url], &log).await;
    let http = client(Duration::from_secs(30));
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let writers = start_writers(&server, 4, "restart", &stop, &seen);
    let started = Instant::now();
    assert!(
        wait_for(&seen, 201, 20, started, Duration::from_secs(30))
            .await
            .is_some(),
        "no writes before the restart"
    );

    cluster.pg_ctl_stop("fast");
    let stopped = Instant::now();
    assert!(
        wait_for(&seen, 503, 4, stopped, ANSWER_WITHIN)
            .await
            .is_some(),
        "no 503 while the database was down"
    );
    assert_eq!(ready(&http, &server).await, 503);

    cluster.pg_ctl_start();
    let back = Instant::now();
    let writing = wait_for(&seen, 201, 8, back, ANSWER_WITHIN).await;
    assert!(
        writing.is_some(),
        "writes did not succeed within {ANSWER_WITHIN:?} of the database's return; log:\n{}",
        server.log_text()
    );
    assert_eq!(ready(&http, &server).await, 200);
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let seen = seen.lock().await;
    check_answers(&seen);
    check_acknowledged(&server, &seen).await;
    // And after a restart of the database and of the server.
    cluster.pg_ctl_stop("fast");
    cluster.pg_ctl_start();
    server.kill().await;
    let server = Server::start(&["--postgres", &url], &log).await;
    check_acknowledged(&server, &seen).await;
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_cut_by_the_database_are_replaced_without_a_restart() {
    let Some(url) = support::postgres::database_url() else {
        return;
    };
    let schema = support::postgres::TestSchema::new(&url);
    // The sessions' name: only they are cut.
    let application = schema.name.clone();
    let separator = if url.contains('?') { '&' } else { '?' };
    let server_url = format!("{url}{separator}application_name={application}");
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("server.log");
    let server = Server::start(
        &["--postgres", &server_url, "--postgres-schema", &schema.name],
        &log,
    )
    .await;
    let admin = support::postgres::admin(&url).await;
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let writers = start_writers(&server, 4, "cut", &stop, &seen);
    let mut since = Instant::now();
    for _ in 0..3 {
        assert!(
            wait_for(&seen, 201, 10, since, Duration::from_secs(30))
                .await
                .is_some(),
            "writes did not go on after the sessions were cut; log:\n{}",
            server.log_text()
        );
        let cut = admin
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1 AND pid <> pg_backend_pid()",
                &[&application],
            )
            .await
            .unwrap();
        assert!(!cut.is_empty(), "no session of the server was found to cut");
        since = Instant::now();
    }
    assert!(
        wait_for(&seen, 201, 10, since, ANSWER_WITHIN)
            .await
            .is_some(),
        "writes did not succeed after the last cut"
    );
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let seen = seen.lock().await;
    check_answers(&seen);
    check_acknowledged(&server, &seen).await;
    server.kill().await;
}
