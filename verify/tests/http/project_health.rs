//! `GET /api/admin/projects/{projectId}/health-report` through the router: stale, potentially
//! stale (older than the feature type's lifetime) and active flags, Unleash's health rating,
//! Unleash's `healthReportSchema` exactly, and the project list rating the same way; any
//! admin-API key, 404 for an unknown project; over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use test_support::unleash_schema::assert_unleash_response;

const REPORT: &str = "/api/admin/projects/p/health-report";

/// Make the feature `name` `days` old (the API sets the creation time to now).
async fn backdate(t: &Setup, name: &str, days: i64) {
    test_support::store::backdate_feature(t.admin.store().as_ref(), name, days).await;
}

/// The report of `p`, checked against Unleash's schema.
async fn report(t: &Setup, key: &str) -> Value {
    let r = t.call_as(key, Method::GET, REPORT, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let body = r.json();
    assert_unleash_response("getProjectHealthReport", 200, &body);
    body
}

/// `(health, staleCount, potentiallyStaleCount, activeCount)` of a report.
fn counts(report: &Value) -> (Value, Value, Value, Value) {
    (
        report["health"].clone(),
        report["staleCount"].clone(),
        report["potentiallyStaleCount"].clone(),
        report["activeCount"].clone(),
    )
}

/// `p`'s entry in the project list: `(health, staleFeatureCount,
/// potentiallyStaleFeatureCount, featureCount)`.
async fn listed(t: &Setup) -> (Value, Value, Value, Value) {
    let r = t.call(Method::GET, "/api/admin/projects", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let projects = r.json()["projects"].as_array().unwrap().clone();
    let p = projects.iter().find(|p| p["id"] == "p").expect("p listed");
    (
        p["health"].clone(),
        p["staleFeatureCount"].clone(),
        p["potentiallyStaleFeatureCount"].clone(),
        p["featureCount"].clone(),
    )
}

async fn scenario(t: &Setup) {
    // Only `f`, new: healthy.
    let body = report(t, &t.secret).await;
    assert_eq!(counts(&body), (json!(100), json!(0), json!(0), json!(1)));
    assert_eq!(body["version"], 1);
    assert_eq!(body["name"], "P");
    assert_eq!(body["mode"], "open");
    assert_eq!(body["members"], 0);
    assert_eq!(
        body["environments"],
        json!([{"environment": "development"}, {"environment": "production"}])
    );

    // Four flags: `f` (new), one marked stale, a release older than its 40 days (potentially
    // stale), and a kill switch years old (no lifetime: never potentially stale).
    for (name, kind) in [
        ("stale-one", "release"),
        ("old-release", "release"),
        ("old-kill-switch", "kill-switch"),
    ] {
        let r = t
            .call(
                Method::POST,
                "/api/admin/projects/p/features",
                Some(&json!({"name": name, "type": kind})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    }
    let r = t
        .call(
            Method::PATCH,
            "/api/admin/projects/p/features/stale-one",
            Some(&json!([{"op": "replace", "path": "/stale", "value": true}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    backdate(t, "old-release", 41).await;
    backdate(t, "old-kill-switch", 1000).await;

    // 1 stale and 1 potentially stale of 4: 100 - 25 - 25.
    let body = report(t, &t.secret).await;
    assert_eq!(counts(&body), (json!(50), json!(1), json!(1), json!(3)));
    let names: Vec<&str> = body["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["f", "old-kill-switch", "old-release", "stale-one"],
        "by name"
    );
    assert_eq!(body["features"][3]["stale"], true);
    // The project list rates it the same way.
    assert_eq!(listed(t).await, (json!(50), json!(1), json!(1), json!(4)));

    // The lifetime is the feature type's now: none for releases, and the old release is
    // healthy again; one of 39 days is not old enough.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/feature-types/release/lifetime",
            Some(&json!({"lifetimeDays": 0})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        counts(&report(t, &t.secret).await),
        (json!(75), json!(1), json!(0), json!(3))
    );
    let r = t
        .call(
            Method::PUT,
            "/api/admin/feature-types/release/lifetime",
            Some(&json!({"lifetimeDays": 42})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        counts(&report(t, &t.secret).await),
        (json!(75), json!(1), json!(0), json!(3))
    );
    let r = t
        .call(
            Method::PUT,
            "/api/admin/feature-types/release/lifetime",
            Some(&json!({"lifetimeDays": 41})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        counts(&report(t, &t.secret).await),
        (json!(50), json!(1), json!(1), json!(3))
    );

    // Archived flags do not count: 1 potentially stale of 3.
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/projects/p/features/stale-one",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    assert_eq!(
        counts(&report(t, &t.secret).await),
        (json!(67), json!(0), json!(1), json!(3))
    );
    assert_eq!(listed(t).await, (json!(67), json!(0), json!(1), json!(3)));

    // Any admin-API key may read it, as any project read.
    let bare = t.key_with(Vec::new()).await;
    assert_eq!(report(t, &bare).await["health"], 67);
    // An unknown project is a 404; a client key a 403; no key a 401.
    t.call(
        Method::GET,
        "/api/admin/projects/nowhere/health-report",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "environment": "production"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let client = r.json()["secret"].as_str().unwrap().to_owned();
    t.call_as(&client, Method::GET, REPORT, None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    t.raw(Method::GET, REPORT, None, None, Vec::new())
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

on_every_store!(scenario => health_report_on_memory, health_report_on_file, health_report_on_postgres);
