//! A feature's links and its lifecycle through the router: links added, changed and removed
//! (seen in the feature's `links`), the stages a feature goes through as it is turned on,
//! completed, archived and revived, and the count per stage; with the events each change
//! writes; run over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const FEATURE: &str = "/api/admin/projects/p/features/f";

async fn events(t: &Setup, query: &str) -> Vec<Value> {
    let r = t
        .call(Method::GET, &format!("/api/admin/events?{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

async fn links(t: &Setup) -> Vec<Value> {
    let r = t.call(Method::GET, FEATURE, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["links"].as_array().cloned().unwrap()
}

async fn send(
    t: &Setup,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: StatusCode,
) -> Reply {
    let r = t.call(method.clone(), path, body.as_ref()).await;
    assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.text());
    r
}

fn detail_paths(r: &Reply) -> Vec<String> {
    r.json()["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn feature_links(t: &Setup) {
    let link = format!("{FEATURE}/link");
    assert_eq!(links(t).await, Vec::<Value>::new());
    let r = send(
        t,
        Method::POST,
        &link,
        Some(json!({"url": "https://example.com/issue/1", "title": "Issue"})),
        StatusCode::NO_CONTENT,
    )
    .await;
    assert_eq!(r.text(), "");
    // Without a scheme, https is assumed, as Unleash does.
    send(
        t,
        Method::POST,
        &link,
        Some(json!({"url": "example.org/dash"})),
        StatusCode::NO_CONTENT,
    )
    .await;
    let listed = links(t).await;
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!(listed[0]["url"], "https://example.com/issue/1");
    assert_eq!(listed[0]["title"], "Issue");
    assert_eq!(listed[1]["url"], "https://example.org/dash");
    assert_eq!(listed[1]["title"], Value::Null);
    let (first, second) = (
        listed[0]["id"].as_str().unwrap().to_owned(),
        listed[1]["id"].as_str().unwrap().to_owned(),
    );
    assert_ne!(first, second);
    let added = events(t, "type=feature-link-added&feature=f").await;
    assert_eq!(added.len(), 2);
    assert_eq!(added[1]["project"], "p");
    assert_eq!(
        added[1]["data"],
        json!({"url": "https://example.com/issue/1", "title": "Issue"})
    );

    // Change one.
    send(
        t,
        Method::PUT,
        &format!("{link}/{first}"),
        Some(json!({"url": "http://example.com/issue/2", "title": "Issue 2"})),
        StatusCode::NO_CONTENT,
    )
    .await;
    let listed = links(t).await;
    assert_eq!(listed[0]["id"], first.as_str());
    assert_eq!(listed[0]["url"], "http://example.com/issue/2");
    assert_eq!(listed[0]["title"], "Issue 2");
    let updated = events(t, "type=feature-link-updated&feature=f").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(
        updated[0]["preData"],
        json!({"url": "https://example.com/issue/1", "title": "Issue"})
    );
    assert_eq!(
        updated[0]["data"],
        json!({"url": "http://example.com/issue/2", "title": "Issue 2"})
    );

    // Refusals: each a 4xx naming what is wrong; nothing changes.
    let before = events(t, "feature=f").await.len();
    for bad in [
        "ftp://example.com",
        "javascript:alert(1)",
        "https://",
        "   ",
    ] {
        let r = send(
            t,
            Method::POST,
            &link,
            Some(json!({"url": bad})),
            StatusCode::BAD_REQUEST,
        )
        .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), ["url"], "{bad}");
    }
    send(
        t,
        Method::POST,
        &link,
        Some(json!({"title": "no url"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    send(
        t,
        Method::POST,
        &link,
        Some(json!({"url": 5})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    send(
        t,
        Method::PUT,
        &format!("{link}/{first}"),
        Some(json!({"url": "mailto:a@example.com"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    // A missing flag is a 404, not Unleash's 500.
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/features/nope/link",
        Some(json!({"url": "https://example.com"})),
        StatusCode::NOT_FOUND,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    send(
        t,
        Method::PUT,
        &format!("{link}/nope"),
        Some(json!({"url": "https://x.io"})),
        StatusCode::NOT_FOUND,
    )
    .await;
    send(
        t,
        Method::DELETE,
        &format!("{link}/nope"),
        None,
        StatusCode::NOT_FOUND,
    )
    .await;
    // A link of `f` is not one of `g`'s.
    send(
        t,
        Method::DELETE,
        &format!("/api/admin/projects/other/features/g/link/{first}"),
        None,
        StatusCode::NOT_FOUND,
    )
    .await;
    assert_eq!(links(t).await.len(), 2);
    assert_eq!(events(t, "feature=f").await.len(), before);

    // Remove one.
    send(
        t,
        Method::DELETE,
        &format!("{link}/{second}"),
        None,
        StatusCode::NO_CONTENT,
    )
    .await;
    let listed = links(t).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], first.as_str());
    let removed = events(t, "type=feature-link-removed&feature=f").await;
    assert_eq!(removed.len(), 1);
    assert_eq!(
        removed[0]["preData"],
        json!({"url": "https://example.org/dash", "title": null})
    );
    // The project's feature list shows links too.
    let r = send(
        t,
        Method::GET,
        "/api/admin/projects/p/features",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(r.json()["features"][0]["links"][0]["id"], first.as_str());
}

/// The stages, in order.
async fn stages(t: &Setup, feature_path: &str) -> Vec<String> {
    let r = send(
        t,
        Method::GET,
        &format!("{feature_path}/lifecycle"),
        None,
        StatusCode::OK,
    )
    .await;
    let stages: Vec<String> = r
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert!(
                s["enteredStageAt"]
                    .as_str()
                    .is_some_and(|at| at.ends_with('Z')),
                "{s}"
            );
            s["stage"].as_str().unwrap().to_owned()
        })
        .collect();
    stages
}

async fn count(t: &Setup) -> Value {
    send(
        t,
        Method::GET,
        "/api/admin/lifecycle/count",
        None,
        StatusCode::OK,
    )
    .await
    .json()
}

async fn lifecycle(t: &Setup) {
    assert_eq!(stages(t, FEATURE).await, ["initial"]);
    assert_eq!(
        count(t).await,
        json!({"initial": 2, "preLive": 0, "live": 0, "completed": 0, "archived": 0})
    );
    // On in a development environment: pre-live.
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/environments/development/on"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stages(t, FEATURE).await, ["initial", "pre-live"]);
    // On in production: live. Turned off again, it stays live.
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/environments/production/on"),
        None,
        StatusCode::OK,
    )
    .await;
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/environments/production/off"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stages(t, FEATURE).await, ["initial", "pre-live", "live"]);
    assert_eq!(
        count(t).await,
        json!({"initial": 1, "preLive": 0, "live": 1, "completed": 0, "archived": 0})
    );

    // Completed, kept.
    let complete = format!("{FEATURE}/lifecycle/complete");
    let r = send(
        t,
        Method::POST,
        &complete,
        Some(json!({"status": "kept", "statusValue": "v1"})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(r.text(), "");
    let r = send(
        t,
        Method::GET,
        &format!("{FEATURE}/lifecycle"),
        None,
        StatusCode::OK,
    )
    .await;
    let last = r.json().as_array().unwrap().last().cloned().unwrap();
    assert_eq!(last["stage"], "completed");
    assert_eq!(last["status"], "kept");
    let completed = events(t, "type=feature-completed&feature=f").await;
    assert_eq!(completed.len(), 1);
    assert_eq!(
        completed[0]["data"],
        json!({"status": "kept", "statusValue": "v1"})
    );
    assert_eq!(count(t).await["completed"], 1);

    // Bad bodies: 400 naming the member; nothing changes.
    let before = events(t, "feature=f").await.len();
    for bad in [
        json!({"status": "maybe"}),
        json!({}),
        json!({"status": "kept", "extra": 1}),
        json!({"status": "discarded", "statusValue": 3}),
    ] {
        let r = send(
            t,
            Method::POST,
            &complete,
            Some(bad.clone()),
            StatusCode::BAD_REQUEST,
        )
        .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
    let r = send(
        t,
        Method::GET,
        &format!("{FEATURE}/lifecycle"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        r.json().as_array().unwrap().last().unwrap()["status"],
        "kept"
    );
    assert_eq!(events(t, "feature=f").await.len(), before);
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/features/nope/lifecycle/complete",
        Some(json!({"status": "kept"})),
        StatusCode::NOT_FOUND,
    )
    .await;
    send(
        t,
        Method::GET,
        "/api/admin/projects/other/features/f/lifecycle",
        None,
        StatusCode::NOT_FOUND,
    )
    .await;

    // Taken back.
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/lifecycle/uncomplete"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stages(t, FEATURE).await, ["initial", "pre-live", "live"]);
    assert_eq!(
        events(t, "type=feature-uncompleted&feature=f").await.len(),
        1
    );
    // Again: nothing to take back, no event.
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/lifecycle/uncomplete"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        events(t, "type=feature-uncompleted&feature=f").await.len(),
        1
    );

    // Archived, then revived: the lifecycle starts again.
    send(t, Method::DELETE, FEATURE, None, StatusCode::ACCEPTED).await;
    assert_eq!(
        stages(t, FEATURE).await,
        ["initial", "pre-live", "live", "archived"]
    );
    assert_eq!(
        count(t).await,
        json!({"initial": 1, "preLive": 0, "live": 0, "completed": 0, "archived": 1})
    );
    send(
        t,
        Method::POST,
        "/api/admin/archive/revive/f",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stages(t, FEATURE).await, ["initial"]);
    assert_eq!(count(t).await["initial"], 2);
}

/// Deleting a feature for good deletes its links and lifecycle: a feature created again
/// under its name starts with neither.
async fn deleted_for_good(t: &Setup) {
    assert_eq!(links(t).await.len(), 1);
    send(
        t,
        Method::POST,
        &format!("{FEATURE}/lifecycle/complete"),
        Some(json!({"status": "discarded"})),
        StatusCode::OK,
    )
    .await;
    send(t, Method::DELETE, FEATURE, None, StatusCode::ACCEPTED).await;
    send(
        t,
        Method::DELETE,
        "/api/admin/archive/f",
        None,
        StatusCode::OK,
    )
    .await;
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/features",
        Some(json!({"name": "f"})),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(links(t).await, Vec::<Value>::new());
    assert_eq!(stages(t, FEATURE).await, ["initial"]);
}

async fn links_and_lifecycle(t: &Setup) {
    feature_links(t).await;
    lifecycle(t).await;
    deleted_for_good(t).await;
}

on_every_store!(
    links_and_lifecycle => links_and_lifecycle_on_a_memory_store,
    links_and_lifecycle_on_a_file_store,
    links_and_lifecycle_on_a_postgres_store
);
