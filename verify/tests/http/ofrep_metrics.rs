//! OFREP's usage metrics through the router, over every store: bulk and single evaluations
//! counted with SDK reports of the same flags and application, readable at once, written in
//! one flush and never twice, and counted across a change of the flags between requests.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use test_support::store::TempDir;
use toggle_admin::{FileStore, MemoryStore, Store, ToggleAdmin};

const FLAGS: &str = "/ofrep/v1/evaluate/flags";
const FEATURE: &str = "/api/admin/projects/p/features/f";

async fn ok(t: &Setup, method: Method, path: &str, body: Option<&Value>) -> Value {
    let r = t.call(method, path, body).await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// `f` in production: on for everyone, variant `blue` for everyone; `h` off.
async fn flags(t: &Setup) -> String {
    ok(
        t,
        Method::POST,
        &format!("{FEATURE}/environments/production/strategies"),
        Some(&json!({"name": "default"})),
    )
    .await;
    ok(
        t,
        Method::PUT,
        &format!("{FEATURE}/environments/production/variants"),
        Some(
            &json!([{"name": "blue", "weight": 1000, "weightType": "variable",
            "stickiness": "default"}]),
        ),
    )
    .await;
    ok(
        t,
        Method::POST,
        &format!("{FEATURE}/environments/production/on"),
        None,
    )
    .await;
    ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features",
        Some(&json!({"name": "h"})),
    )
    .await;
    let token = ok(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(
            &json!({"tokenName": "sdk", "type": "client", "environment": "production",
            "projects": ["p"]}),
        ),
    )
    .await;
    token["secret"].as_str().unwrap().to_owned()
}

/// `shop`'s last-hour counts of `feature` in production: `(yes, no, variants)`.
async fn shop(t: &Setup, feature: &str) -> (u64, u64, Value) {
    let usage = ok(
        t,
        Method::GET,
        &format!("/api/admin/client-metrics/features/{feature}"),
        None,
    )
    .await;
    let found: Vec<&Value> = usage["lastHourUsage"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["appName"] == "shop" && m["environment"] == "production")
        .collect();
    match found.as_slice() {
        [] => (0, 0, json!({})),
        [m] => (
            m["yes"].as_u64().unwrap(),
            m["no"].as_u64().unwrap(),
            m["variants"].clone(),
        ),
        more => panic!("one bucket per application and hour, not {more:?}"),
    }
}

async fn evaluate_all(t: &Setup, key: &str) {
    let body = json!({"context": {"targetingKey": "u", "appName": "shop"}});
    let r = t.call_as(key, Method::POST, FLAGS, Some(&body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

async fn counting(t: &Setup) {
    t.admin
        .set_metrics_flush_interval(Duration::from_secs(3600));
    let key = flags(t).await;
    evaluate_all(t, &key).await;
    evaluate_all(t, &key).await;
    let body = json!({"context": {"targetingKey": "u", "appName": "shop"}});
    let r = t
        .call_as(&key, Method::POST, &format!("{FLAGS}/h"), Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    // An SDK's report of the same flag and application adds to the same counts.
    let report = json!({"appName": "shop", "instanceId": "i", "bucket": {
        "start": chrono::Utc::now().to_rfc3339(), "stop": chrono::Utc::now().to_rfc3339(),
        "toggles": {"f": {"yes": 5, "no": 1, "variants": {"blue": 4, "red": 1}}}}});
    let r = t
        .call_as(&key, Method::POST, "/api/client/metrics", Some(&report))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    assert_eq!(shop(t, "f").await, (7, 1, json!({"blue": 6, "red": 1})));
    assert_eq!(shop(t, "h").await, (0, 3, json!({})));

    // One flush writes them once; a second writes nothing.
    t.admin.flush_client_metrics().await.unwrap();
    let after = t.admin.store().revision().await.unwrap();
    assert_eq!(shop(t, "f").await, (7, 1, json!({"blue": 6, "red": 1})));
    t.admin.flush_client_metrics().await.unwrap();
    assert_eq!(t.admin.store().revision().await.unwrap(), after);

    // The flags change between two evaluations: both count, in the same bucket.
    evaluate_all(t, &key).await;
    ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features/h/environments/production/on",
        None,
    )
    .await;
    evaluate_all(t, &key).await;
    assert_eq!(shop(t, "f").await, (9, 1, json!({"blue": 8, "red": 1})));
    assert_eq!(shop(t, "h").await, (1, 4, json!({})));
    t.admin.flush_client_metrics().await.unwrap();
    assert_eq!(shop(t, "f").await, (9, 1, json!({"blue": 8, "red": 1})));
    assert_eq!(shop(t, "h").await, (1, 4, json!({})));
}

#[tokio::test]
async fn ofrep_counts_add_up_on_a_memory_store() {
    counting(&setup_on(ToggleAdmin::new(MemoryStore::new())).await).await;
}

#[tokio::test]
async fn ofrep_counts_add_up_on_a_file_store() {
    let dir = TempDir::new("ofrep-metrics");
    let store: Arc<dyn Store> = Arc::new(FileStore::open(dir.path()).unwrap());
    counting(&setup_on(ToggleAdmin::from_arc(store)).await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn ofrep_counts_add_up_on_a_postgres_store() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    let store: Arc<dyn Store> = Arc::new(schema.connect(4).await);
    counting(&setup_on(ToggleAdmin::from_arc(store)).await).await;
}
