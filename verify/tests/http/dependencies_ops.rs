//! Dependency operations through the router: removing every parent of a child, the
//! features and variants a child may depend on, whether a project has dependencies, and a
//! child's dependency going with its archive; with the client API's view and the events;
//! run over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const P: &str = "/api/admin/projects/p";

async fn events(t: &Setup, query: &str) -> Vec<Value> {
    let r = t
        .call(Method::GET, &format!("/api/admin/events?{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

async fn send(
    t: &Setup,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: StatusCode,
) -> Value {
    let r = t.call(method.clone(), path, body.as_ref()).await;
    assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

async fn get(t: &Setup, path: &str) -> Value {
    send(t, Method::GET, path, None, StatusCode::OK).await
}

/// The client API's view of `feature`'s dependencies (production).
async fn client_dependencies(t: &Setup, client: &str, feature: &str) -> Value {
    let r = t
        .call_as(client, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == feature)
        .map(|f| f.get("dependencies").cloned().unwrap_or(Value::Null))
        .unwrap_or(Value::Null)
}

async fn dependencies(t: &Setup) {
    for name in ["child", "parent-a", "parent-b"] {
        send(
            t,
            Method::POST,
            &format!("{P}/features"),
            Some(json!({"name": name})),
            StatusCode::CREATED,
        )
        .await;
    }
    let client = send(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "c", "type": "client", "environment": "production"})),
        StatusCode::CREATED,
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_owned();

    // No dependencies yet.
    assert_eq!(get(t, &format!("{P}/dependencies")).await, json!(false));
    assert_eq!(
        get(t, &format!("{P}/features/child/parents")).await,
        json!(["f", "parent-a", "parent-b"])
    );

    send(
        t,
        Method::POST,
        &format!("{P}/features/child/dependencies"),
        Some(json!({"feature": "parent-a"})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(get(t, &format!("{P}/dependencies")).await, json!(true));
    assert_eq!(
        get(t, "/api/admin/projects/other/dependencies").await,
        json!(false)
    );
    assert_eq!(
        client_dependencies(t, &client, "child").await,
        json!([{"feature": "parent-a", "enabled": true, "variants": []}])
    );
    // A child is no parent: `f` may depend on the parents only; archived features are none.
    assert_eq!(
        get(t, &format!("{P}/features/f/parents")).await,
        json!(["parent-a", "parent-b"])
    );
    send(
        t,
        Method::DELETE,
        &format!("{P}/features/parent-b"),
        None,
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(
        get(t, &format!("{P}/features/f/parents")).await,
        json!(["parent-a"])
    );
    assert_eq!(
        get(t, &format!("{P}/features/child/parents")).await,
        json!(["f", "parent-a"])
    );

    // The variant names of a parent, of every environment and strategy, each once, sorted.
    assert_eq!(
        get(t, &format!("{P}/features/parent-a/parent-variants")).await,
        json!([])
    );
    let variant = |name: &str| json!({"name": name, "weight": 0, "weightType": "variable", "stickiness": "default"});
    send(
        t,
        Method::PUT,
        &format!("{P}/features/parent-a/environments/production/variants"),
        Some(json!([variant("e"), variant("b")])),
        StatusCode::OK,
    )
    .await;
    send(
        t,
        Method::PUT,
        &format!("{P}/features/parent-a/environments/development/variants"),
        Some(json!([variant("b")])),
        StatusCode::OK,
    )
    .await;
    send(
        t,
        Method::POST,
        &format!("{P}/features/parent-a/environments/development/strategies"),
        Some(json!({
            "name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "parent-a"},
            "variants": [
                {"name": "c", "weight": 500, "weightType": "variable", "stickiness": "default"},
                {"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"}
            ]
        })),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        get(t, &format!("{P}/features/parent-a/parent-variants")).await,
        json!(["a", "b", "c", "e"])
    );

    // Remove every parent of the child: 200, an event, the client API sees none.
    send(
        t,
        Method::DELETE,
        &format!("{P}/features/child/dependencies"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        get(t, &format!("{P}/features/child/dependencies")).await,
        json!([])
    );
    assert_eq!(get(t, &format!("{P}/dependencies")).await, json!(false));
    let removed = events(t, "type=feature-dependencies-removed&feature=child").await;
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["project"], "p");
    assert_eq!(removed[0]["preData"][0]["feature"], "parent-a");
    let shown = client_dependencies(t, &client, "child").await;
    assert!(shown.is_null() || shown == json!([]), "{shown}");
    // Again: nothing to remove, no event.
    send(
        t,
        Method::DELETE,
        &format!("{P}/features/child/dependencies"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        events(t, "type=feature-dependencies-removed&feature=child")
            .await
            .len(),
        1
    );

    // 404s: a missing feature or project.
    for (method, path) in [
        (Method::DELETE, format!("{P}/features/nope/dependencies")),
        (Method::GET, format!("{P}/features/nope/parents")),
        (Method::GET, format!("{P}/features/nope/parent-variants")),
        (
            Method::GET,
            "/api/admin/projects/nope/dependencies".to_owned(),
        ),
        (
            Method::GET,
            "/api/admin/projects/other/features/f/parents".to_owned(),
        ),
    ] {
        let r = t.call(method.clone(), &path, None).await;
        r.error(StatusCode::NOT_FOUND, "NotFoundError");
    }

    // Archiving a child removes its dependency, with its event; reviving does not bring it
    // back.
    send(
        t,
        Method::POST,
        &format!("{P}/features/child/dependencies"),
        Some(json!({"feature": "parent-a", "variants": ["a"]})),
        StatusCode::OK,
    )
    .await;
    send(
        t,
        Method::DELETE,
        &format!("{P}/features/child"),
        None,
        StatusCode::ACCEPTED,
    )
    .await;
    let removed = events(t, "type=feature-dependencies-removed&feature=child").await;
    assert_eq!(removed.len(), 2);
    assert_eq!(removed[0]["preData"][0]["variants"], json!(["a"]));
    assert_eq!(get(t, &format!("{P}/dependencies")).await, json!(false));
    send(
        t,
        Method::POST,
        "/api/admin/archive/revive/child",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        get(t, &format!("{P}/features/child/dependencies")).await,
        json!([])
    );
}

on_every_store!(
    dependencies => dependency_operations_on_a_memory_store,
    dependency_operations_on_a_file_store,
    dependency_operations_on_a_postgres_store
);

/// Malformed input on every route this change adds is a 4xx in the error body, never a 5xx,
/// on any body and content type.
#[tokio::test]
async fn malformed_input_on_the_new_routes_is_never_a_server_error() {
    let t = setup().await;
    let routes = [
        (Method::POST, "/api/admin/tags"),
        (Method::PUT, "/api/admin/features/f/tags"),
        (Method::PUT, "/api/admin/projects/p/tags"),
        (Method::POST, "/api/admin/constraints/validate"),
        (Method::PUT, "/api/admin/feature-types/release/lifetime"),
        (Method::POST, "/api/admin/projects/p/features/f/link"),
        (Method::PUT, "/api/admin/projects/p/features/f/link/x"),
        (
            Method::POST,
            "/api/admin/projects/p/features/f/lifecycle/complete",
        ),
        (
            Method::PUT,
            "/api/admin/projects/p/features/f/variants-batch",
        ),
        (Method::PUT, "/api/admin/strategies/byTeam"),
        (Method::DELETE, "/api/admin/tags/simple/%00x"),
        (Method::GET, "/api/admin/segments/strategies/%ff"),
    ];
    let bodies: Vec<Vec<u8>> = [
        &b""[..],
        b"{}",
        b"[]",
        b"null",
        b"\xff\xfe\x00",
        br#"{"addedTags": "x", "removedTags": [null]}"#,
        br#"{"addedTags": [{"type": "\u0000", "value": "\u0000\u0000"}], "removedTags": []}"#,
        br#"{"features": [1, null, {}], "tags": []}"#,
        br#"{"contextName": 5, "operator": ["IN"], "values": {"a": 1}, "value": []}"#,
        br#"{"contextName": "userId", "operator": "NUM_GT", "value": 1e400}"#,
        br#"{"lifetimeDays": 1e30}"#,
        br#"{"lifetimeDays": -9223372036854775809}"#,
        br#"{"url": "\u0000", "title": "\u0000"}"#,
        br#"{"url": "https://exa\u0000mple.com"}"#,
        br#"{"status": "kept", "statusValue": "\u0000"}"#,
        br#"{"variants": [{"name": "a", "weight": 99999999999999999999}], "environments": ["\u0000"]}"#,
        br#"{"variants": {}, "environments": [1]}"#,
        br#"{"parameters": [{"name": "\u0000", "type": null}]}"#,
        br#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    ]
    .into_iter()
    .map(<[u8]>::to_vec)
    .collect();
    for (method, path) in routes {
        for body in &bodies {
            for content_type in [None, Some("application/json")] {
                let r = t
                    .raw(
                        method.clone(),
                        path,
                        Some(&t.secret),
                        content_type,
                        body.clone(),
                    )
                    .await;
                assert!(
                    !r.status.is_server_error(),
                    "{method} {path} {content_type:?} {:?}: {} {}",
                    String::from_utf8_lossy(body),
                    r.status,
                    r.text()
                );
                if !r.status.is_success() {
                    let name = r.json()["name"].as_str().unwrap_or_default().to_owned();
                    r.error(r.status, &name);
                }
            }
        }
    }
}
