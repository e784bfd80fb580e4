//! The client API's reports: `POST /api/client/register` and
//! `POST /api/client/metrics`, and what the admin side shows of them.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

/// A client key created through the admin API: `(secret, created token)`.
async fn client_key(t: &Setup, body: Value) -> (String, Value) {
    let r = t
        .call(Method::POST, "/api/admin/api-tokens", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let token = r.json();
    (token["secret"].as_str().unwrap().to_owned(), token)
}

// ---------------------------------------------------------------- 4. registration

#[tokio::test]
async fn registration_shows_the_application_and_its_instances() {
    let t = setup().await;
    let (key, _) = client_key(
        &t,
        json!({"tokenName": "sdk", "type": "client", "environment": "production"}),
    )
    .await;
    let registration = json!({
        "appName": "checkout",
        "instanceId": "pod-1",
        "sdkVersion": "unleash-client-node:6.1.0",
        "strategies": ["default", "flexibleRollout"],
        "started": "2026-01-01T00:00:00.000Z",
        "interval": 10000,
        "platformName": "node",
        "specVersion": "5.1.0"
    });
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/client/register",
            Some(&registration),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    assert!(r.body.is_empty());
    let mut second = registration.clone();
    second["instanceId"] = json!("pod-2");
    let r = t
        .call_as(&key, Method::POST, "/api/client/register", Some(&second))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());

    let r = t
        .call(
            Method::GET,
            "/api/admin/metrics/applications/checkout",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let app = r.json();
    assert_eq!(app["appName"], "checkout");
    assert_eq!(app["sdkVersion"], "unleash-client-node:6.1.0");
    assert_eq!(app["strategies"], json!(["default", "flexibleRollout"]));
    let instances = app["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 2, "{app}");
    assert_eq!(instances[0]["instanceId"], "pod-1");
    assert!(instances[0]["lastSeen"].is_string(), "{app}");
    assert_eq!(instances[0]["environment"], "production");
    // Listed among the applications (metrics records are not applications).
    let r = t
        .call(Method::GET, "/api/admin/metrics/applications", None)
        .await;
    assert_eq!(r.json()["total"], 1, "{}", r.text());

    // Instances that stopped reporting drop out of the listing.
    t.admin
        .set_instance_timeout(Some(std::time::Duration::from_millis(1)));
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let app = t
        .call(
            Method::GET,
            "/api/admin/metrics/applications/checkout",
            None,
        )
        .await
        .json();
    assert_eq!(app["instances"], json!([]), "{app}");

    // A body without the required fields: 400.
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/client/register",
            Some(&json!({"appName": "x"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}

// ---------------------------------------------------------------- 5. metrics

fn report(app: &str, yes: u32, no: u32) -> Value {
    let now = chrono::Utc::now().to_rfc3339();
    json!({
        "appName": app,
        "instanceId": "pod-1",
        "bucket": {
            "start": now,
            "stop": now,
            "toggles": {"f": {"yes": yes, "no": no, "variants": {"blue": yes}}}
        }
    })
}

#[tokio::test]
async fn metrics_are_buffered_aggregated_and_readable() {
    let t = setup().await;
    let (key, _) = client_key(
        &t,
        json!({"tokenName": "sdk", "type": "client", "environment": "production"}),
    )
    .await;
    t.admin
        .set_metrics_flush_interval(std::time::Duration::from_secs(3600));
    let before = t.admin.store().revision().await.unwrap();
    for app in ["web", "web", "web", "batch"] {
        let r = t
            .call_as(
                &key,
                Method::POST,
                "/api/client/metrics",
                Some(&report(app, 3, 1)),
            )
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
        assert!(r.body.is_empty());
    }
    assert_eq!(
        t.admin.store().revision().await.unwrap(),
        before,
        "no commit per report"
    );
    // Readable at once, buffer included.
    let r = t
        .call(Method::GET, "/api/admin/client-metrics/features/f", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let usage = r.json();
    assert_eq!(usage["version"], 1);
    assert_eq!(usage["featureName"], "f");
    assert_eq!(usage["seenApplications"], json!(["batch", "web"]));
    let web = usage["lastHourUsage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["appName"] == "web")
        .unwrap()
        .clone();
    assert_eq!(web["yes"], 9);
    assert_eq!(web["no"], 3);
    assert_eq!(web["variants"]["blue"], 9);
    assert_eq!(web["environment"], "production");

    // One flush, one commit; the same counts afterwards.
    t.admin.flush_client_metrics().await.unwrap();
    let after = t.admin.store().revision().await.unwrap();
    assert_eq!(after.0, before.0 + 1);
    t.admin.flush_client_metrics().await.unwrap();
    assert_eq!(
        t.admin.store().revision().await.unwrap(),
        after,
        "nothing to write"
    );
    let again = t
        .call(Method::GET, "/api/admin/client-metrics/features/f", None)
        .await
        .json();
    assert_eq!(again, usage);
    let stored = t.admin.feature_metrics(&t.caller, "f").await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored.iter().map(|m| m.yes).sum::<u64>(), 12);

    // With a zero interval every report is written.
    t.admin
        .set_metrics_flush_interval(std::time::Duration::ZERO);
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/client/metrics",
            Some(&report("web", 1, 0)),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert_eq!(t.admin.store().revision().await.unwrap().0, after.0 + 1);

    // A client key cannot read the admin side; a malformed report is a 400.
    let r = t
        .call_as(
            &key,
            Method::GET,
            "/api/admin/client-metrics/features/f",
            None,
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/client/metrics",
            Some(&json!({"bucket": 1})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}

#[tokio::test]
async fn metrics_for_names_that_cannot_be_features_are_ignored() {
    let t = setup().await;
    let (key, _) = client_key(
        &t,
        json!({"tokenName": "sdk", "type": "client", "environment": "production"}),
    )
    .await;
    t.admin
        .set_metrics_flush_interval(std::time::Duration::ZERO);
    let now = chrono::Utc::now().to_rfc3339();
    let long = "x".repeat(10_000);
    let body = json!({
        "appName": "web",
        "bucket": {"start": now, "stop": now, "toggles": {
            "f": {"yes": 1, "no": 0},
            "bad\u{1}name": {"yes": 1, "no": 0},
            long.clone(): {"yes": 1, "no": 0}
        }}
    });
    let r = t
        .call_as(&key, Method::POST, "/api/client/metrics", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    assert_eq!(
        t.admin.feature_metrics(&t.caller, "f").await.unwrap().len(),
        1
    );
    assert!(
        t.admin
            .feature_metrics(&t.caller, &long)
            .await
            .unwrap()
            .is_empty()
    );
    // An application name that cannot be one: 400.
    let mut bad = body.clone();
    bad["appName"] = json!("a\nb");
    let r = t
        .call_as(&key, Method::POST, "/api/client/metrics", Some(&bad))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}
