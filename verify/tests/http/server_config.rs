//! The `toggle-admin` program's command line, as a process: `--version`, `serve --help`, usage
//! errors, the flags' environment variables, the bootstrap key's length, the operations
//! endpoints.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::server_binary::{serve_command, server_binary};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// `toggle-admin serve` with only `env` (no flags but `args`), as far as this test's
/// environment goes.
fn server(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut command = serve_command();
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
        "UNLEASH_URL",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command
}

/// `--help`'s entry of each flag: from its line (`  --flag <VALUE>  …`) to the next flag's.
fn help_entries(help: &str) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("--") || trimmed.starts_with("-h, ") || trimmed.starts_with("-V, ") {
            let flag = trimmed
                .trim_start_matches("-h, ")
                .trim_start_matches("-V, ")
                .split([' ', '='])
                .next()
                .unwrap_or_default()
                .to_owned();
            entries.push((flag, line.to_owned()));
        } else if let Some((_, text)) = entries.last_mut() {
            text.push('\n');
            text.push_str(line);
        }
    }
    entries
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_every_flag_with_its_environment_variable() {
    let output = server(
        &["--help"],
        &[("DATABASE_URL", "postgres://u:secret-pw@db/x")],
    )
    .output()
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(help.contains("Usage: toggle-admin serve"), "{help}");
    let entries = help_entries(&help);
    for (flag, var) in [
        ("--data", "TOGGLE_ADMIN_DATA"),
        ("--memory", "TOGGLE_ADMIN_MEMORY"),
        ("--postgres", "DATABASE_URL"),
        ("--postgres-schema", "DATABASE_SCHEMA"),
        ("--postgres-ssl-mode", "DATABASE_SSL_MODE"),
        ("--postgres-ssl-ca-file", "DATABASE_SSL_CA_FILE"),
        ("--postgres-connect-timeout", "DATABASE_CONNECT_TIMEOUT"),
        ("--postgres-statement-timeout", "DATABASE_STATEMENT_TIMEOUT"),
        ("--addr", "TOGGLE_ADMIN_ADDR"),
        ("--host", "HTTP_HOST"),
        ("--port", "HTTP_PORT"),
        ("--body-limit", "TOGGLE_ADMIN_BODY_LIMIT"),
        ("--headers-timeout", "SERVER_HEADERS_TIMEOUT"),
        ("--shutdown-timeout", "SERVER_GRACEFUL_SHUTDOWN_TIMEOUT"),
        ("--request-timeout", "TOGGLE_ADMIN_REQUEST_TIMEOUT"),
        ("--body-timeout", "TOGGLE_ADMIN_BODY_TIMEOUT"),
        ("--ui-path", "TOGGLE_ADMIN_UI_PATH"),
        ("--ui-secure-cookie", "TOGGLE_ADMIN_UI_SECURE_COOKIE"),
        (
            "--compression-min-size",
            "TOGGLE_ADMIN_COMPRESSION_MIN_SIZE",
        ),
        ("--max-streams", "TOGGLE_ADMIN_MAX_STREAMS"),
        ("--max-streams-per-key", "TOGGLE_ADMIN_MAX_STREAMS_PER_KEY"),
        ("--delta-history", "TOGGLE_ADMIN_DELTA_HISTORY"),
        ("--frontend-origins", "UNLEASH_FRONTEND_API_ORIGINS"),
        ("--unleash-url", "UNLEASH_URL"),
    ] {
        let (_, entry) = entries
            .iter()
            .find(|(name, _)| name == flag)
            .unwrap_or_else(|| panic!("{flag} missing from --help:\n{help}"));
        assert!(entry.contains(&format!("[env: {var}]")), "{entry}");
    }
    // The second variable of --port, and the defaults as the library has them.
    let entry = |flag: &str| &entries.iter().find(|(name, _)| name == flag).unwrap().1;
    assert!(
        entry("--port").contains("PORT is read too"),
        "{}",
        entry("--port")
    );
    assert!(
        entry("--addr").contains("[default: 127.0.0.1:4242]"),
        "{}",
        entry("--addr")
    );
    assert!(
        entry("--ui-path").contains("[default: /admin]"),
        "{}",
        entry("--ui-path")
    );
    assert!(
        entry("--body-limit").contains("[default: 16777216]"),
        "{}",
        entry("--body-limit")
    );
    // A variable's value is never shown: a database URL holds a password.
    assert!(!help.contains("secret-pw"), "{help}");
    assert!(help.contains("TOGGLE_ADMIN_BOOTSTRAP_KEY"), "{help}");
}

#[tokio::test(flavor = "multi_thread")]
async fn version_prints_the_package_version() {
    let output = Command::new(server_binary())
        .arg("--version")
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let manifest = include_str!("../../../server/Cargo.toml");
    let package_version = manifest
        .lines()
        .find_map(|line| line.strip_prefix("version = "))
        .expect("server/Cargo.toml names its version")
        .trim_matches('"');
    let version = String::from_utf8_lossy(&output.stdout);
    assert_eq!(version.trim(), format!("toggle-admin {package_version}"));
    // Each command says it too.
    let output = serve_command().arg("--version").output().await.unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        format!("toggle-admin-serve {package_version}")
    );
}

/// Every usage error exits 1 with a message on stderr and nothing on stdout (clap's own
/// status for them is 2, which a command may use for something else).
#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_1_with_a_message() {
    for (args, says) in [
        (
            &["serve", "--memory", "--no-such-flag"][..],
            "--no-such-flag",
        ),
        (&["serve", "--memory", "--port"][..], "--port"),
        (&["serve", "--memory", "--body-limit", "lots"][..], "lots"),
        (
            &["serve", "--memory", "--ui-secure-cookie", "sometimes"][..],
            "sometimes",
        ),
        (
            &[
                "serve",
                "--postgres",
                "x",
                "--postgres-connect-timeout",
                "0",
            ][..],
            "--postgres-connect-timeout",
        ),
        (
            &["serve", "--memory", "--compression-min-size", "big"][..],
            "bytes, or off",
        ),
        (
            &["serve", "--memory", "--unleash-url", "flags.example.com"][..],
            "http:// or https://",
        ),
        (
            &["serve", "--memory", "--unleash-url", "https:///flags"][..],
            "with a host",
        ),
        (&["no-such-command"][..], "no-such-command"),
        (&[][..], "Usage: toggle-admin"),
    ] {
        let output = Command::new(server_binary())
            .args(args)
            .env_remove("TOGGLE_ADMIN_MEMORY")
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}: {output:?}");
    }
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

/// A storage flag on the command line wins over every storage variable (here a data
/// directory that must stay untouched), and a variable set to the empty string counts as unset
/// (an empty body limit is no parse error).
#[tokio::test(flavor = "multi_thread")]
async fn the_command_line_storage_overrides_the_environment_and_empty_variables_are_unset() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("never-created");
    let mut child = server(
        &["--memory", "--addr", "127.0.0.1:0"],
        &[
            ("TOGGLE_ADMIN_DATA", data.to_str().unwrap()),
            ("TOGGLE_ADMIN_BODY_LIMIT", ""),
            (
                "TOGGLE_ADMIN_BOOTSTRAP_KEY",
                "an-operator-chosen-key-of-forty-characters",
            ),
        ],
    )
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("listening on http://") {
                return true;
            }
        }
        false
    })
    .await
    .expect("the server did not start listening in time");
    assert!(listening, "the server exited before listening");
    assert!(
        !data.exists(),
        "TOGGLE_ADMIN_DATA was used despite --memory"
    );
    child.start_kill().unwrap();
    let _ = child.wait().await;
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
            ("UNLEASH_URL", "https://example.com/flags/"),
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
    // The public URL the clients are told, and its path.
    let ui: Value = client
        .get(format!("{base}/api/admin/ui-config"))
        .header("Authorization", key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ui["unleashUrl"], "https://example.com/flags", "{ui}");
    assert_eq!(ui["baseUriPath"], "/flags", "{ui}");
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
