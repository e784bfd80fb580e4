//! The `server` example's configuration, as a process: flags, their environment variables,
//! `--help`, the bootstrap key's length, the operations endpoints.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::server_binary::server_binary;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// The server with only `env` (no flags but `args`), as far as this test's environment goes.
fn server(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(server_binary());
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true);
    for var in [
        "TOGGLE_ADMIN_DATA",
        "TOGGLE_ADMIN_MEMORY",
        "TOGGLE_ADMIN_ADDR",
        "TOGGLE_ADMIN_BOOTSTRAP_KEY",
        "DATABASE_URL",
        "HTTP_HOST",
        "HTTP_PORT",
        "PORT",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_every_flag_with_its_environment_variable() {
    let output = server(&["--help"], &[]).output().await.unwrap();
    assert!(output.status.success(), "{output:?}");
    let help = String::from_utf8_lossy(&output.stdout);
    for (flag, var) in [
        ("--data", "TOGGLE_ADMIN_DATA"),
        ("--memory", "TOGGLE_ADMIN_MEMORY"),
        ("--postgres", "DATABASE_URL"),
        ("--postgres-ssl-mode", "DATABASE_SSL_MODE"),
        ("--postgres-ssl-ca-file", "DATABASE_SSL_CA_FILE"),
        ("--postgres-connect-timeout", "DATABASE_CONNECT_TIMEOUT"),
        ("--postgres-statement-timeout", "DATABASE_STATEMENT_TIMEOUT"),
        ("--port", "HTTP_PORT, PORT"),
        ("--headers-timeout", "SERVER_HEADERS_TIMEOUT"),
        ("--shutdown-timeout", "SERVER_GRACEFUL_SHUTDOWN_TIMEOUT"),
        ("--request-timeout", "TOGGLE_ADMIN_REQUEST_TIMEOUT"),
        ("--body-timeout", "TOGGLE_ADMIN_BODY_TIMEOUT"),
        (
            "--compression-min-size",
            "TOGGLE_ADMIN_COMPRESSION_MIN_SIZE",
        ),
    ] {
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{flag} ")))
            .unwrap_or_else(|| panic!("{flag} missing from --help:\n{help}"));
        assert!(line.contains(&format!("[{var}]")), "{line}");
    }
    assert!(help.contains("TOGGLE_ADMIN_BOOTSTRAP_KEY"), "{help}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_bootstrap_key_stops_the_server_with_a_clear_message() {
    let output = server(
        &["--memory", "--addr", "127.0.0.1:0"],
        &[("TOGGLE_ADMIN_BOOTSTRAP_KEY", "only-twenty-characte")],
    )
    .output()
    .await
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("TOGGLE_ADMIN_BOOTSTRAP_KEY") && stderr.contains("at least 32 characters"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_storages_are_refused() {
    let output = server(&["--memory"], &[])
        .arg("--data")
        .arg("/tmp/never-used")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("choose one of --data, --memory"),
        "{stderr}"
    );
}

/// Configured by the environment alone (storage, host and port), the server serves the
/// admin API, `/health`, `/ready` and the Prometheus endpoint.
#[tokio::test(flavor = "multi_thread")]
async fn the_environment_alone_configures_the_server() {
    let key = "an-operator-chosen-key-of-forty-characters";
    let mut child = server(
        &[],
        &[
            ("TOGGLE_ADMIN_MEMORY", "true"),
            ("HTTP_HOST", "127.0.0.1"),
            ("PORT", "0"),
            ("SERVER_HEADERS_TIMEOUT", "5"),
            ("TOGGLE_ADMIN_BOOTSTRAP_KEY", key),
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the server exited");
            if let Some(addr) = line.strip_prefix("listening on ") {
                break addr.to_owned();
            }
        }
    })
    .await
    .expect("the server did not start listening in time");
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    let client = reqwest::Client::new();
    let health: Value = client
        .get(format!("{base}/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({"health": "GOOD"}));
    let ready = client.get(format!("{base}/ready")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let projects = client
        .get(format!("{base}/api/admin/projects/default"))
        .header("Authorization", key)
        .send()
        .await
        .unwrap();
    assert_eq!(projects.status(), 200);
    let scrape = client
        .get(format!("{base}/internal-backstage/prometheus"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        scrape.lines().any(|l| l.starts_with("http_requests_total{")
            && l.contains("path=\"/api/admin/projects/{projectId}\"")
            && l.contains("status=\"200\"")),
        "{scrape}"
    );
    child.start_kill().unwrap();
    let _ = child.wait().await;
}
