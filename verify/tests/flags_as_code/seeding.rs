//! `serve --import-file`: seeded before the server answers, once (restarts with the same file
//! write nothing), a person's edit kept by create-missing and undone by replace, and a broken
//! file refused with its problems, the store untouched.

use serde_json::json;

use crate::support::{Server, arg, document, program, write};

async fn seeding_survives_restarts(store: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed.json");
    write(&file, &document());
    let seeded = ["--import-file", arg(&file)];

    // First start: seeded before "listening on" is printed.
    let server = Server::start(store, &seeded).await;
    assert!(server.enabled_in_development("checkout").await);
    let events = server.event_count().await;
    server.stop().await;

    // Restarted twice with the same file: no event more.
    for mode in ["create-missing", "replace"] {
        let flags = ["--import-file", arg(&file), "--import-mode", mode];
        let server = Server::start(store, &flags).await;
        assert_eq!(server.event_count().await, events, "restarted in {mode}");
        server.stop().await;
    }

    // A person's edit survives a restart in create-missing (the default)...
    let server = Server::start(store, &[]).await;
    server.turn_off("checkout").await;
    let edited = server.event_count().await;
    assert!(edited > events);
    server.stop().await;
    let server = Server::start(store, &seeded).await;
    assert!(!server.enabled_in_development("checkout").await);
    assert_eq!(server.event_count().await, edited);
    server.stop().await;

    // ... and replace restores the file (through the variables, Unleash's names).
    let server = Server::start_with_env(
        store,
        &[],
        &[("IMPORT_FILE", arg(&file)), ("IMPORT_MODE", "replace")],
    )
    .await;
    assert!(server.enabled_in_development("checkout").await);
    let restored = server.event_count().await;
    assert!(restored > edited);
    server.stop().await;

    // A broken file stops the start (exit 1, each problem named) and changes nothing.
    let broken = dir.path().join("broken.json");
    let mut bad = document();
    bad["featureStrategies"][0]["featureName"] = json!("no-such-feature");
    bad["features"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "", "type": "release"}));
    write(&broken, &bad);
    for (file, expected) in [
        (
            broken.clone(),
            vec![
                "\n  data.features[1].name: ",
                "\n  data.featureStrategies[0].featureName: ",
            ],
        ),
        (dir.path().join("missing.json"), vec!["cannot read it"]),
    ] {
        let output = program(&["serve"])
            .args(store)
            .args([
                "--addr",
                "127.0.0.1:0",
                "--import-file",
                arg(&file),
                "--import-mode",
                "replace",
            ])
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
        assert!(!stdout.contains("listening on"), "{stdout}");
        for part in &expected {
            assert!(stderr.contains(part), "{part:?} in {stderr}");
        }
        assert!(stderr.contains(arg(&file)), "{stderr}");
    }
    std::fs::write(&broken, "{not json").unwrap();
    let output = program(&["serve"])
        .args(store)
        .args(["--addr", "127.0.0.1:0", "--import-file", arg(&broken)])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("not a JSON document"),
        "{output:?}"
    );
    let server = Server::start(store, &[]).await;
    assert_eq!(server.event_count().await, restored);
    assert!(server.enabled_in_development("checkout").await);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seeding_over_a_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    seeding_survives_restarts(&["--data", arg(&dir.path().join("state"))]).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn seeding_over_postgres() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    seeding_survives_restarts(&["--postgres", &url, "--postgres-schema", &schema.name]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seeding_over_memory_into_another_project_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("seed.json");
    write(&file, &document());
    let server = Server::start(
        &["--memory"],
        &[
            "--import-file",
            arg(&file),
            "--import-environment",
            "production",
        ],
    )
    .await;
    let feature = server.feature("checkout").await;
    let production = feature["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "production")
        .unwrap();
    assert_eq!(production["enabled"], true, "{feature}");
    assert!(!server.enabled_in_development("checkout").await);
    server.stop().await;
}
