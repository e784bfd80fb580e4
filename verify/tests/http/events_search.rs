//! The event log's searches through the router: a feature's events, the body search, the
//! query search with Unleash's operators, dates and authors, event creators, and what a key
//! limited to some projects sees; over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::{Grant, Permission};

async fn get_as(t: &Setup, key: &str, path: &str) -> Value {
    let r = t.call_as(key, Method::GET, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "GET {path}: {}", r.text());
    r.json()
}

async fn post(t: &Setup, path: &str, body: Value) -> Value {
    let r = t.call(Method::POST, path, Some(&body)).await;
    assert!(r.status.is_success(), "POST {path} {body}: {}", r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

fn field(events: &Value, name: &str) -> Vec<String> {
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[name].as_str().unwrap_or("-").to_owned())
        .collect()
}

fn detail_paths(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn scenario(t: &Setup) {
    let admin = t.secret.clone();
    // Some history: f changed twice, g once, a key created (no project).
    post(
        t,
        "/api/admin/projects/p/features/f/environments/production/on",
        json!(null),
    )
    .await;
    post(
        t,
        "/api/admin/projects/p/stale",
        json!({"features": ["f"], "stale": true}),
    )
    .await;
    post(
        t,
        "/api/admin/projects/other/features/g/environments/production/on",
        json!(null),
    )
    .await;
    let limited = t
        .key_with(vec![Grant::in_project(Permission::UpdateFeature, "p")])
        .await;

    // A feature's events, newest first.
    let f = get_as(t, &admin, "/api/admin/events/f").await;
    assert_eq!(f["version"], 1);
    assert_eq!(f["toggleName"], "f");
    let types = field(&f["events"], "type");
    assert_eq!(
        types.first().map(String::as_str),
        Some("feature-stale-on"),
        "{types:?}"
    );
    assert_eq!(types.last().map(String::as_str), Some("feature-created"));
    assert!(field(&f["events"], "featureName").iter().all(|n| n == "f"));
    assert_eq!(f["totalEvents"], types.len());
    assert_eq!(
        get_as(t, &admin, "/api/admin/events/nothing").await["events"],
        json!([])
    );

    // The body search.
    let found = post(
        t,
        "/api/admin/events/search",
        json!({"feature": "f", "type": "feature-created"}),
    )
    .await;
    assert_eq!(found["totalEvents"], 1);
    assert_eq!(field(&found["events"], "type"), ["feature-created"]);
    let on = post(
        t,
        "/api/admin/events/search",
        json!({"query": "Environment-ENABLED", "limit": 1}),
    )
    .await;
    assert_eq!(on["totalEvents"], 2, "{on}");
    assert_eq!(
        field(&on["events"], "featureName"),
        ["g"],
        "newest first, one"
    );
    let second = post(
        t,
        "/api/admin/events/search",
        json!({"query": "environment-enabled", "limit": 1, "offset": 1}),
    )
    .await;
    assert_eq!(field(&second["events"], "featureName"), ["f"]);
    for body in [
        json!({"limit": "x"}),
        json!({"limit": -1}),
        json!({"colour": "red"}),
        json!([]),
    ] {
        t.call(Method::POST, "/api/admin/events/search", Some(&body))
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
    }

    // The query search, with operators.
    let created = get_as(
        t,
        &admin,
        "/api/admin/search/events?type=IS:feature-created",
    )
    .await;
    assert_eq!(created["total"], 2);
    let mut features = field(&created["events"], "featureName");
    features.sort();
    assert_eq!(features, ["f", "g"]);
    let both = get_as(
        t,
        &admin,
        "/api/admin/search/events?project=IS_ANY_OF:p,other&type=feature-environment-enabled",
    )
    .await;
    assert_eq!(both["total"], 2);
    let not_p = get_as(
        t,
        &admin,
        "/api/admin/search/events?project=IS_NOT:p&type=feature-environment-enabled",
    )
    .await;
    assert_eq!(field(&not_p["events"], "project"), ["other"]);
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today.succ_opt().unwrap();
    let all = get_as(t, &admin, "/api/admin/search/events?limit=1000").await;
    let total = all["total"].as_u64().unwrap();
    assert!(total >= 8, "{all}");
    assert_eq!(
        get_as(
            t,
            &admin,
            &format!("/api/admin/search/events?from=IS:{today}&to=IS:{today}")
        )
        .await["total"],
        total
    );
    assert_eq!(
        get_as(
            t,
            &admin,
            &format!("/api/admin/search/events?from={tomorrow}")
        )
        .await["total"],
        0
    );
    let paged = get_as(t, &admin, "/api/admin/search/events?limit=2&offset=1").await;
    assert_eq!(paged["events"].as_array().unwrap().len(), 2);
    assert_eq!(paged["total"], total);
    assert_eq!(paged["events"][0]["id"], all["events"][1]["id"]);
    for (query, path) in [
        ("from=yesterday", "/from"),
        ("to=2024-13-01", "/to"),
        ("limit=ten", "/limit"),
        ("offset=-1", "/offset"),
        ("type=MAYBE:x", "/type"),
    ] {
        let error = t
            .call(
                Method::GET,
                &format!("/api/admin/search/events?{query}"),
                None,
            )
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [path], "{query}: {error}");
    }
    t.call(Method::GET, "/api/admin/search/events?colour=red", None)
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");

    // Who made events, and searching by them.
    // By author id, as Unleash lists them: the service itself, and every key acting as no
    // user as Unleash's admin token user.
    let creators = get_as(t, &admin, "/api/admin/event-creators").await;
    assert_eq!(
        creators,
        json!([
            {"id": -1337, "name": "Unleash System"},
            {"id": -42, "name": "Unleash Admin Token"}
        ])
    );
    let id = -42;
    // The first key's creation is the bootstrap's; everything else is the admin key's.
    assert_eq!(
        get_as(
            t,
            &admin,
            &format!("/api/admin/search/events?createdBy=IS:{id}")
        )
        .await["total"],
        total - 1
    );
    assert_eq!(
        get_as(
            t,
            &admin,
            "/api/admin/search/events?createdBy=IS:test-admin"
        )
        .await["total"],
        total - 1
    );
    assert_eq!(
        get_as(
            t,
            &admin,
            "/api/admin/search/events?createdBy=IS_NOT:test-admin"
        )
        .await["total"],
        1
    );
    assert_eq!(
        get_as(
            t,
            &admin,
            "/api/admin/search/events?createdBy=IS:someone-else"
        )
        .await["total"],
        0
    );

    // A user's change is by the user: its id, its username as `createdBy`, its name among
    // the creators.
    let r = t
        .call(
            Method::POST,
            "/api/admin/user-admin",
            Some(&json!({"username": "ed", "name": "Ed", "rootRole": 2})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let ed = r.json()["id"].as_i64().unwrap();
    let expires = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let key = post(
        t,
        &format!("/api/admin/user-admin/{ed}/tokens"),
        json!({"description": "ed-key", "expiresAt": expires}),
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/off",
            None,
        )
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let newest = &get_as(t, &admin, "/api/admin/events/f").await["events"][0];
    assert_eq!(newest["createdByUserId"], ed, "{newest}");
    // Recorded by the user's username (it has no email), not by its key's name.
    assert_eq!(newest["createdBy"], "ed", "{newest}");
    let creators = get_as(t, &admin, "/api/admin/event-creators").await;
    assert!(
        creators
            .as_array()
            .unwrap()
            .contains(&json!({"id": ed, "name": "Ed"})),
        "{creators}"
    );
    let by_ed = get_as(
        t,
        &admin,
        &format!("/api/admin/search/events?createdBy=IS:{ed}"),
    )
    .await;
    assert_eq!(by_ed["total"], 1, "{by_ed}");
    assert_eq!(by_ed["events"][0]["label"], "Flag disabled", "{by_ed}");

    // A key limited to project p sees p's events only: nothing of `other`, nothing without a
    // project (keys, environments).
    let mine = get_as(t, &limited, "/api/admin/search/events?limit=1000").await;
    let projects = field(&mine["events"], "project");
    assert!(!projects.is_empty());
    assert!(projects.iter().all(|p| p == "p"), "{projects:?}");
    assert_eq!(mine["total"], projects.len());
    assert_eq!(
        get_as(t, &limited, "/api/admin/events/g").await["events"],
        json!([])
    );
    let r = t
        .call_as(
            &limited,
            Method::POST,
            "/api/admin/events/search",
            Some(&json!({"type": "api-token-created"})),
        )
        .await;
    assert_eq!(r.json()["totalEvents"], 0, "{}", r.text());
    let admin_view = post(
        t,
        "/api/admin/events/search",
        json!({"type": "api-token-created"}),
    )
    .await;
    assert!(
        admin_view["totalEvents"].as_u64().unwrap() >= 2,
        "{admin_view}"
    );
}

on_every_store!(scenario => event_searches_on_a_memory_store, event_searches_on_a_file_store, event_searches_on_a_postgres_store);

/// A search that walks the log (text, authors) over more than one store page of events
/// counts every match and pages right.
#[tokio::test]
async fn searches_walk_past_one_page_of_the_log() {
    let t = setup().await;
    for i in 0..1100 {
        let r = t
            .call(
                Method::POST,
                "/api/admin/tag-types",
                Some(&json!({"name": format!("tt-{i:04}")})),
            )
            .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    }
    let found = get_as(
        &t,
        &t.secret.clone(),
        "/api/admin/search/events?query=tt-0&limit=5&offset=998",
    )
    .await;
    assert_eq!(found["total"], 1000, "tt-0000 … tt-0999");
    let shown: Vec<String> = found["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        shown,
        ["tt-0001", "tt-0000"],
        "newest first, the page past 998"
    );
}
