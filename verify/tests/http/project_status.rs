//! `GET /api/admin/projects/{projectId}/status` through the router: the project's events per
//! day, its keys, members and segments, its health and stale flags, where its flags are in
//! their lifecycle; Unleash's `projectStatusSchema` exactly; any admin-API key, 404 for an
//! unknown project; over every store.

use axum::http::{Method, StatusCode};
use chrono::Utc;
use serde_json::{Value, json};
use test_support::http::*;
use test_support::unleash_schema::assert_unleash_response;
use toggle_admin::access::OWNER_ROLE;
use toggle_admin::model::NewUser;

const STATUS: &str = "/api/admin/projects/p/status";

/// Make the feature `name` `days` old (the API sets the creation time to now).
async fn backdate(t: &Setup, name: &str, days: i64) {
    test_support::store::backdate_feature(t.admin.store().as_ref(), name, days).await;
}

/// The status of `p`, checked against Unleash's schema.
async fn status(t: &Setup, key: &str) -> Value {
    let r = t.call_as(key, Method::GET, STATUS, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let body = r.json();
    assert_unleash_response("getProjectStatus", 200, &body);
    body
}

async fn call_ok(t: &Setup, method: Method, path: &str, body: Value, expected: StatusCode) {
    let body = (!body.is_null()).then_some(body);
    let r = t.call(method.clone(), path, body.as_ref()).await;
    assert_eq!(r.status, expected, "{method} {path}: {}", r.text());
}

async fn scenario(t: &Setup) {
    let body = status(t, &t.secret).await;
    assert_eq!(
        body["resources"],
        json!({"apiTokens": 0, "members": 0, "segments": 0})
    );
    assert_eq!(body["health"], json!({"current": 100}));
    assert_eq!(body["staleFlags"], json!({"total": 0}));
    let none = |n: u64| json!({"averageDays": null, "currentFlags": n});
    assert_eq!(
        body["lifecycleSummary"],
        json!({"initial": none(1), "preLive": none(0), "live": none(0),
               "completed": none(0), "archived": {"currentFlags": 0, "last30Days": 0}})
    );

    // What the project holds: a client key naming it (one for every project does not
    // count), a member, a segment of its own (a global one does not count).
    for (name, projects) in [("p-sdk", json!(["p"])), ("all-sdk", json!(["*"]))] {
        call_ok(
            t,
            Method::POST,
            "/api/admin/api-tokens",
            json!({"tokenName": name, "type": "client", "projects": projects,
                   "environment": "production"}),
            StatusCode::CREATED,
        )
        .await;
    }
    let user = t
        .admin
        .create_user(
            &t.caller,
            &NewUser {
                username: Some("owner".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    call_ok(
        t,
        Method::PUT,
        "/api/admin/projects/p/access",
        json!({"roles": [{"id": OWNER_ROLE, "users": [user.id]}]}),
        StatusCode::OK,
    )
    .await;
    for (name, project) in [("p-segment", json!("p")), ("global", Value::Null)] {
        call_ok(
            t,
            Method::POST,
            "/api/admin/segments",
            json!({"name": name, "project": project, "constraints": []}),
            StatusCode::CREATED,
        )
        .await;
    }

    // Three flags: `f` marked stale, `old` older than a release's 40 days, `fresh` on in
    // production (live); then `old` archived.
    for name in ["old", "fresh"] {
        call_ok(
            t,
            Method::POST,
            "/api/admin/projects/p/features",
            json!({"name": name, "type": "release"}),
            StatusCode::CREATED,
        )
        .await;
    }
    call_ok(
        t,
        Method::PATCH,
        "/api/admin/projects/p/features/f",
        json!([{"op": "replace", "path": "/stale", "value": true}]),
        StatusCode::OK,
    )
    .await;
    backdate(t, "old", 41).await;
    call_ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features/fresh/environments/production/on",
        Value::Null,
        StatusCode::OK,
    )
    .await;

    let body = status(t, &t.secret).await;
    assert_eq!(
        body["resources"],
        json!({"apiTokens": 1, "members": 1, "segments": 1})
    );
    // 1 stale and 1 potentially stale of 3: 100 - 33.3 - 33.3.
    assert_eq!(body["health"], json!({"current": 33}));
    assert_eq!(body["staleFlags"], json!({"total": 2}));
    let summary = &body["lifecycleSummary"];
    assert_eq!(summary["initial"]["currentFlags"], 2);
    assert_eq!(summary["live"]["currentFlags"], 1);

    call_ok(
        t,
        Method::DELETE,
        "/api/admin/projects/p/features/old",
        Value::Null,
        StatusCode::ACCEPTED,
    )
    .await;
    let body = status(t, &t.secret).await;
    // `f` stale of 2.
    assert_eq!(body["health"], json!({"current": 50}));
    assert_eq!(body["staleFlags"], json!({"total": 1}));
    // `old` spent 41 days in initial before it was archived, `fresh` none before it went
    // live: 20.5 on average, rounded up; `fresh` entered pre-live and live at once, so
    // neither has a duration yet.
    assert_eq!(
        body["lifecycleSummary"],
        json!({"initial": {"averageDays": 21.0, "currentFlags": 1}, "preLive": none(0),
               "live": none(1), "completed": none(0),
               "archived": {"currentFlags": 1, "last30Days": 1}})
    );

    // Every event of the project, by day (all of them today or, past midnight, yesterday).
    let r = t
        .call(Method::GET, "/api/admin/events?project=p", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let total = r.json()["totalEvents"].as_u64().unwrap();
    let days = body["activityCountByDate"].as_array().unwrap();
    let counted: u64 = days.iter().map(|d| d["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, total, "{days:?}");
    assert!(total >= 8, "{total}");
    let today = Utc::now().date_naive();
    for day in days {
        let date = day["date"].as_str().unwrap();
        let date = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").unwrap();
        assert!(date == today || date == today.pred_opt().unwrap(), "{day}");
    }

    // Any admin-API key may read it, as any project read.
    let bare = t.key_with(Vec::new()).await;
    assert_eq!(status(t, &bare).await["health"], json!({"current": 50}));
    // An unknown project is a 404; a client key a 403; no key a 401.
    t.call(Method::GET, "/api/admin/projects/nowhere/status", None)
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
    t.call_as(&client, Method::GET, STATUS, None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    t.raw(Method::GET, STATUS, None, None, Vec::new())
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

on_every_store!(scenario => project_status_on_memory, project_status_on_file, project_status_on_postgres);
