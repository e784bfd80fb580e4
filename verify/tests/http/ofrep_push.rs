//! OFREP's streams across instances sharing one PostgreSQL schema: a change through one
//! instance reaches the other's stream within a second, and idle instances with streams
//! open cost the database next to nothing.
#![cfg(feature = "postgres")]

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use test_support::postgres as pg;
use toggle_admin::admin::PushConfig;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::{Caller, KeyAccess, ToggleAdmin};
use tower::ServiceExt;

/// Environment `production`, project `p` with flag `f`; the admin caller and a frontend key
/// for `p`.
async fn populated(admin: &ToggleAdmin) -> (Caller, String) {
    let key = admin.bootstrap_admin_key("test-admin").await.unwrap();
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
    admin
        .create_project(
            &caller,
            &Project {
                id: "p".into(),
                name: "p".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_feature(
            &caller,
            "p",
            &NewFeature {
                name: "f".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let frontend = admin
        .create_api_key(
            &caller,
            "web",
            KeyAccess::frontend(vec!["p".to_owned()], "production"),
        )
        .await
        .unwrap()
        .secret;
    (caller, frontend)
}

/// The OFREP stream of `key` on `app` (its URL from a bulk evaluation), as a body to read.
async fn open_stream(app: &axum::Router, key: &str) -> Body {
    let request = Request::builder()
        .method(Method::POST)
        .uri("/ofrep/v1/evaluate/flags")
        .header("authorization", key)
        .header("host", "instance")
        .body(Body::from("{}"))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    let url = answer["eventStreams"][0]["url"].as_str().unwrap();
    let path = url.trim_start_matches("http://instance");
    let response = app
        .clone()
        .oneshot(Request::builder().uri(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body()
}

/// Wait for the next `refetchEvaluation` (keep-alives skipped), at most `patience`.
async fn refetch(body: &mut Body, patience: Duration) {
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .expect("no refetchEvaluation in time")
            .expect("the stream ended")
            .unwrap();
        if let Ok(data) = frame.into_data()
            && std::str::from_utf8(&data)
                .unwrap()
                .contains("refetchEvaluation")
        {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ofrep_a_change_on_one_instance_reaches_the_stream_on_another_within_a_second() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let schema = pg::TestSchema::new(&url);
    let a = ToggleAdmin::new(schema.connect(4).await);
    let b = ToggleAdmin::new(schema.connect(4).await);
    // B's catch-up is far beyond the test: only the notification can bring the change.
    b.set_push_config(PushConfig {
        catch_up: Duration::from_secs(3600),
        ..PushConfig::default()
    });
    let (caller, key) = populated(&a).await;
    let app = toggle_admin::http::router(b.clone());
    let mut stream = open_stream(&app, &key).await;
    refetch(&mut stream, Duration::from_secs(10)).await;
    for enabled in [true, false, true] {
        let started = Instant::now();
        a.set_feature_enabled(&caller, "p", "f", "production", enabled)
            .await
            .unwrap();
        refetch(&mut stream, Duration::from_secs(1)).await;
        eprintln!(
            "refetch on the other instance after {:?}",
            started.elapsed()
        );
    }
}

/// Transactions the database `name` has run (committed and rolled back), as the statistics
/// show them.
async fn transactions(watcher: &tokio_postgres::Client, name: &str) -> i64 {
    watcher
        .batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .unwrap();
    let row = watcher
        .query_one(
            "SELECT (xact_commit + xact_rollback)::bigint FROM pg_stat_database WHERE datname = $1",
            &[&name],
        )
        .await
        .unwrap();
    row.get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn ofrep_two_idle_instances_with_streams_open_cost_at_most_two_transactions_a_second() {
    let Some(url) = pg::database_url() else {
        return;
    };
    // A database of the test's own: its statistics count this test's transactions alone.
    let watcher = pg::admin(&url).await;
    let database = format!(
        "ta_idle_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    watcher
        .batch_execute(&format!("CREATE DATABASE \"{database}\""))
        .await
        .unwrap();
    if std::env::var("OFREP_IDLE_LOG").is_ok() {
        watcher
            .batch_execute(&format!(
                "ALTER DATABASE \"{database}\" SET log_statement = 'all'"
            ))
            .await
            .unwrap();
    }
    let own_url = match url.rsplit_once('/') {
        Some((server, _)) => format!("{server}/{database}"),
        None => panic!("{url} names no database"),
    };
    let measured = async {
        let schema = pg::TestSchema::new(&own_url);
        let a = ToggleAdmin::new(schema.connect(4).await);
        let b = ToggleAdmin::new(schema.connect(4).await);
        let (caller, key) = populated(&a).await;
        let apps = [
            toggle_admin::http::router(a.clone()),
            toggle_admin::http::router(b.clone()),
        ];
        let mut streams = Vec::new();
        for app in &apps {
            for _ in 0..3 {
                let mut stream = open_stream(app, &key).await;
                refetch(&mut stream, Duration::from_secs(10)).await;
                streams.push(stream);
            }
        }
        // Settle (an idle session reports its statistics up to 10 s late), then measure an
        // idle spell.
        tokio::time::sleep(Duration::from_secs(11)).await;
        let before = transactions(&watcher, &database).await;
        let spell = Duration::from_secs(12);
        tokio::time::sleep(spell).await;
        let after = transactions(&watcher, &database).await;
        let per_second = (after - before) as f64 / spell.as_secs_f64();
        eprintln!(
            "two idle instances, {} OFREP streams: {} transactions in {spell:?} ({per_second:.2}/s)",
            streams.len(),
            after - before
        );
        // Still live: a change reaches both instances' streams within a second.
        a.set_feature_enabled(&caller, "p", "f", "production", true)
            .await
            .unwrap();
        for stream in &mut streams {
            refetch(stream, Duration::from_secs(1)).await;
        }
        drop(streams);
        drop((a, b, apps));
        drop(schema);
        per_second
    };
    let per_second = measured.await;
    let _ = watcher
        .batch_execute(&format!(
            "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
        ))
        .await;
    assert!(
        per_second <= 2.0,
        "two idle instances cost {per_second:.2} transactions a second"
    );
}
