//! `export` → `plan` → edit → `plan` → `apply` → `plan`, drift, and the failures that exit 1.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{KEY, Server, arg, document, run, write};

/// The lines of a plan that say what would change.
fn change_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("+ ") || l.starts_with("~ "))
        .collect()
}

async fn round_trip(store: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.json");
    write(&seed, &document());
    let server = Server::start(store, &["--import-file", arg(&seed)]).await;
    let target = ["--project", "default", "--environment", "development"];

    // Export, then plan the export against the server it came from: unchanged.
    let exported = dir.path().join("flags.json");
    let done = server
        .command(
            "export",
            &["--environment", "development", "--output", arg(&exported)],
        )
        .await;
    assert_eq!(done.code, Some(0), "{done:?}");
    let plan = |file: &std::path::Path| {
        let mut args = vec![arg(file).to_owned()];
        args.extend(target.iter().map(|s| (*s).to_owned()));
        args
    };
    let args = plan(&exported);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let done = server.command("plan", &args).await;
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(change_lines(&done.stdout).is_empty(), "{}", done.stdout);
    assert!(
        done.stdout.contains("= 1 unchanged: checkout"),
        "{}",
        done.stdout
    );
    assert!(
        !done.stdout.contains('\x1b'),
        "no colour off a terminal: {}",
        done.stdout
    );

    // Edit: the rollout, a new strategy, a removed constraint, a new flag.
    let mut edited: Value = serde_json::from_slice(&std::fs::read(&exported).unwrap()).unwrap();
    let strategies = edited["featureStrategies"].as_array_mut().unwrap();
    assert_eq!(strategies.len(), 1, "{edited}");
    strategies[0]["parameters"]["rollout"] = json!("50");
    strategies[0]["constraints"]
        .as_array_mut()
        .unwrap()
        .remove(0);
    strategies.push(
        json!({"name": "default", "featureName": "checkout", "parameters": {},
                           "constraints": [], "variants": [], "disabled": false, "segments": []}),
    );
    edited["features"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "search", "type": "experiment"}));
    edited["featureEnvironments"].as_array_mut().unwrap().push(
        json!({"name": "search", "featureName": "search", "environment": "development", "enabled": false}),
    );
    write(&exported, &edited);
    let done = server.command("plan", &args).await;
    assert_eq!(done.code, Some(2), "{done:?}");
    let lines = change_lines(&done.stdout);
    assert_eq!(lines.len(), 4, "exactly the four edits: {}", done.stdout);
    assert!(
        lines.contains(&r#"~ update checkout: /strategies/0/parameters/rollout "25" → "50""#),
        "{}",
        done.stdout
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with(r#"~ update checkout: /strategies/0/constraints/0 {"#)
                && l.contains(r#""contextName":"appName""#)
                && l.ends_with("→ (none)")
        ),
        "{}",
        done.stdout
    );
    assert!(
        lines.iter().any(
            |l| l.starts_with("~ update checkout: /strategies/1 (none) → {")
                && l.contains(r#""name":"default""#)
        ),
        "{}",
        done.stdout
    );
    assert!(lines.contains(&"+ create search"), "{}", done.stdout);

    // Apply, then the same file plans as unchanged.
    let done = server.command("apply", &args).await;
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(
        done.stdout
            .contains("Applied: 1 created, 1 updated, 0 unchanged"),
        "{}",
        done.stdout
    );
    assert!(
        done.stderr.contains("importing 2 flags…"),
        "{}",
        done.stderr
    );
    let done = server.command("plan", &args).await;
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(done.stdout.contains("= 2 unchanged"), "{}", done.stdout);
    let rollout = &server.feature("checkout").await["environments"];
    assert!(
        rollout.to_string().contains(r#""rollout":"50""#),
        "{rollout}"
    );

    // Drift: a person turns checkout off; the next plan says so.
    server.turn_off("checkout").await;
    let done = server.command("plan", &args).await;
    assert_eq!(done.code, Some(2), "{done:?}");
    assert_eq!(
        change_lines(&done.stdout),
        ["~ update checkout: /enabled false → true"],
        "{}",
        done.stdout
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn round_trip_over_memory() {
    round_trip(&["--memory"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn round_trip_over_a_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    round_trip(&["--data", arg(&dir.path().join("state"))]).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn round_trip_over_postgres() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    round_trip(&["--postgres", &url, "--postgres-schema", &schema.name]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_1() {
    for args in [
        &["plan"][..],
        &[
            "plan",
            "x.json",
            "--url",
            "http://127.0.0.1:9",
            "--key",
            KEY,
            "--mode",
            "merge",
        ],
        &["apply", "x.json", "--no-such-flag"],
        &["export", "--url", "http://127.0.0.1:9"],
    ] {
        let done = run(args, &[]).await;
        assert_eq!(done.code, Some(1), "{args:?}: {done:?}");
        assert!(done.stderr.contains("error"), "{args:?}: {done:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_server_and_a_bad_file_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flags.json");
    write(&file, &document());
    // Nothing listens there: a port bound and closed again.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let target = ["--project", "default", "--environment", "development"];
    for command in ["plan", "apply"] {
        let mut args = vec![command, arg(&file), "--url", url.as_str(), "--key", KEY];
        args.extend_from_slice(&target);
        let done = run(&args, &[]).await;
        assert_eq!(done.code, Some(1), "{done:?}");
        assert!(done.stderr.contains("cannot reach"), "{done:?}");
    }
    // The variables stand for --url and --key.
    let done = run(
        &[
            "plan",
            arg(&file),
            "--project",
            "default",
            "--environment",
            "development",
        ],
        &[
            ("TOGGLE_ADMIN_URL", url.as_str()),
            ("TOGGLE_ADMIN_KEY", KEY),
        ],
    )
    .await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert!(done.stderr.contains("cannot reach"), "{done:?}");
    // Not JSON.
    std::fs::write(&file, "{not json").unwrap();
    let done = run(
        &[
            "plan",
            arg(&file),
            "--url",
            url.as_str(),
            "--key",
            KEY,
            "--project",
            "default",
            "--environment",
            "development",
        ],
        &[],
    )
    .await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert!(done.stderr.contains("not a JSON document"), "{done:?}");
}

/// A server that answers 404 to everything, as one without the plan route does.
async fn answering_404() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = vec![0; 65536];
                let _ = socket.read(&mut buffer).await;
                let body = "Cannot POST";
                let _ = socket
                    .write_all(
                        format!(
                            "HTTP/1.1 404 Not Found\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    )
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_the_plan_route_exits_1_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flags.json");
    write(&file, &document());
    let url = answering_404().await;
    let done = run(
        &[
            "plan",
            arg(&file),
            "--url",
            url.as_str(),
            "--key",
            KEY,
            "--project",
            "default",
            "--environment",
            "development",
        ],
        &[],
    )
    .await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert!(done.stderr.contains("cannot plan"), "{done:?}");
    assert!(
        done.stderr.contains("/api/admin/features-batch/plan"),
        "{done:?}"
    );
    // A path under which the real server has no such route: its JSON 404 names the path.
    let server = Server::start(&["--memory"], &[]).await;
    let done = run(
        &[
            "plan",
            arg(&file),
            "--url",
            format!("{}/nothing-here", server.url).as_str(),
            "--key",
            KEY,
            "--project",
            "default",
            "--environment",
            "development",
        ],
        &[],
    )
    .await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert!(done.stderr.contains("cannot plan"), "{done:?}");
    // A missing project is the server's 404, told as such, not a missing route.
    let done = server
        .command(
            "plan",
            &[
                arg(&file),
                "--project",
                "nope",
                "--environment",
                "development",
            ],
        )
        .await;
    assert_eq!(done.code, Some(1), "{done:?}");
    assert!(!done.stderr.contains("cannot plan"), "{done:?}");
    assert!(done.stderr.contains("NotFoundError"), "{done:?}");
    server.stop().await;
}
