//! Keys through the router: a project's keys, keys by name, a key's expiry; every revoked or
//! expired key refused at the next call, over every store. The caller and users are in
//! `users_admin.rs`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

fn names(tokens: &Value) -> Vec<String> {
    tokens
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tokenName"].as_str().unwrap().to_owned())
        .collect()
}

/// No token of a listing shows a secret.
fn no_secrets(tokens: &Value) {
    for token in tokens.as_array().unwrap() {
        assert!(token.get("secret").is_none(), "a secret is listed: {token}");
    }
}

async fn event_count(t: &Setup, event_type: &str) -> usize {
    let log = expect(
        t,
        Method::GET,
        &format!("/api/admin/events?type={event_type}&limit=1000"),
        None,
        StatusCode::OK,
    )
    .await;
    log["events"].as_array().map_or(0, Vec::len)
}

fn in_an_hour() -> String {
    (chrono::Utc::now() + chrono::TimeDelta::hours(1)).to_rfc3339()
}

/// A project's keys: created for the project alone, listed without secrets, revoked at once.
async fn project_keys(t: &Setup) {
    const KEYS: &str = "/api/admin/projects/p/api-tokens";
    let created = expect(
        t,
        Method::POST,
        KEYS,
        Some(json!({"tokenName": "pk", "type": "client", "environment": "production"})),
        StatusCode::CREATED,
    )
    .await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert_eq!(created["projects"], json!(["p"]));
    let seen = expect_as(
        t,
        &secret,
        Method::GET,
        "/api/client/features",
        None,
        StatusCode::OK,
    )
    .await;
    let features: Vec<&str> = seen["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(features, ["f"], "the project's features only");
    // Keys that are not the project's are not listed.
    expect(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "everywhere", "type": "client", "environment": "production"})),
        StatusCode::CREATED,
    )
    .await;
    let shared = expect(t, Method::POST, "/api/admin/api-tokens", Some(json!({"tokenName": "shared", "type": "client", "projects": ["p", "other"], "environment": "production"})), StatusCode::CREATED).await;
    let listed = expect(t, Method::GET, KEYS, None, StatusCode::OK).await;
    assert_eq!(names(&listed["tokens"]), ["pk", "shared"]);
    no_secrets(&listed["tokens"]);
    assert!(!listed.to_string().contains(&secret), "the secret leaked");

    // A key for another project, for several, or an admin key: 400 naming the field, none made.
    for (body, path) in [
        (
            json!({"tokenName": "x", "type": "client", "projects": ["other"]}),
            "/projects",
        ),
        (
            json!({"tokenName": "x", "type": "client", "projects": ["p", "other"]}),
            "/projects",
        ),
        (
            json!({"tokenName": "x", "type": "client", "project": "*"}),
            "/projects",
        ),
        (json!({"tokenName": "x", "type": "admin"}), "/type"),
        (json!({"type": "client"}), "/tokenName"),
        (
            json!({"tokenName": "x", "type": "client", "expiresAt": "soon"}),
            "/expiresAt",
        ),
    ] {
        let error = t
            .call(Method::POST, KEYS, Some(&body))
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [path], "{body}: {error}");
    }
    t.call(
        Method::POST,
        KEYS,
        Some(&json!({"tokenName": "x", "type": "client", "bogus": 1})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::POST,
        "/api/admin/projects/nope/api-tokens",
        Some(&json!({"tokenName": "x", "type": "client"})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(
        names(&expect(t, Method::GET, KEYS, None, StatusCode::OK).await["tokens"]),
        ["pk", "shared"]
    );

    // Revoking: only the project's own keys, then refused at once.
    let shared_id = shared["id"].as_str().unwrap();
    t.call(Method::DELETE, &format!("{KEYS}/{shared_id}"), None)
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::DELETE,
        &format!(
            "/api/admin/projects/other/api-tokens/{}",
            created["id"].as_str().unwrap()
        ),
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    expect(
        t,
        Method::DELETE,
        &format!("{KEYS}/{secret}"),
        None,
        StatusCode::OK,
    )
    .await;
    t.call_as(&secret, Method::GET, "/api/client/features", None)
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    assert_eq!(
        names(&expect(t, Method::GET, KEYS, None, StatusCode::OK).await["tokens"]),
        ["shared"]
    );
}

/// Keys by name, and a key's expiry: a date in the past stops it at once.
async fn names_and_expiry(t: &Setup) {
    let a = expect(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "dup", "type": "admin"})),
        StatusCode::CREATED,
    )
    .await;
    expect(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "dup", "type": "client", "environment": "production"})),
        StatusCode::CREATED,
    )
    .await;
    let named = expect(
        t,
        Method::GET,
        "/api/admin/api-tokens/dup",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(names(&named["tokens"]), ["dup", "dup"]);
    no_secrets(&named["tokens"]);
    assert_eq!(
        expect(
            t,
            Method::GET,
            "/api/admin/api-tokens/nobody",
            None,
            StatusCode::OK
        )
        .await["tokens"],
        json!([])
    );

    let secret = a["secret"].as_str().unwrap().to_owned();
    let id = a["id"].as_str().unwrap().to_owned();
    let path = format!("/api/admin/api-tokens/{id}");
    for (body, field) in [
        (json!({}), "/expiresAt"),
        (json!({"expiresAt": "tomorrow"}), "/expiresAt"),
        (json!({"expiresAt": 7}), "/expiresAt"),
    ] {
        let error = t
            .call(Method::PUT, &path, Some(&body))
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [field], "{body}: {error}");
    }
    t.call(
        Method::PUT,
        &path,
        Some(&json!({"expiresAt": in_an_hour(), "extra": true})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    expect_as(
        t,
        &secret,
        Method::GET,
        "/api/admin/projects",
        None,
        StatusCode::OK,
    )
    .await;
    let before = event_count(t, "api-token-updated").await;
    expect(
        t,
        Method::PUT,
        &path,
        Some(json!({"expiresAt": in_an_hour()})),
        StatusCode::OK,
    )
    .await;
    let listed = expect(
        t,
        Method::GET,
        "/api/admin/api-tokens/dup",
        None,
        StatusCode::OK,
    )
    .await;
    assert!(
        listed["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == id && k["expiresAt"].is_string()),
        "{listed}"
    );
    expect_as(
        t,
        &secret,
        Method::GET,
        "/api/admin/projects",
        None,
        StatusCode::OK,
    )
    .await;
    // By its secret, to a date past: refused from the next call on.
    expect(
        t,
        Method::PUT,
        &format!("/api/admin/api-tokens/{secret}"),
        Some(json!({"expiresAt": "2020-01-01T00:00:00Z"})),
        StatusCode::OK,
    )
    .await;
    t.call_as(&secret, Method::GET, "/api/admin/projects", None)
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    assert_eq!(event_count(t, "api-token-updated").await, before + 2);
    t.call(
        Method::PUT,
        &format!("/api/admin/api-tokens/{}", uuid::Uuid::new_v4()),
        Some(&json!({"expiresAt": in_an_hour()})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
}

async fn scenario(t: &Setup) {
    project_keys(t).await;
    names_and_expiry(t).await;
}

on_every_store!(scenario => keys_on_a_memory_store, keys_on_a_file_store, keys_on_a_postgres_store);

/// A project member manages the project's keys; a viewer may not, whatever the body.
#[tokio::test]
async fn project_keys_follow_project_roles() {
    let t = setup().await;
    let user = expect(
        &t,
        Method::POST,
        "/api/admin/user-admin",
        Some(json!({"username": "m", "rootRole": 3})),
        StatusCode::CREATED,
    )
    .await;
    let id = user["id"].as_i64().unwrap();
    let key = expect(
        &t,
        Method::POST,
        &format!("/api/admin/user-admin/{id}/tokens"),
        Some(json!({"description": "m"})),
        StatusCode::CREATED,
    )
    .await;
    let member = key["secret"].as_str().unwrap().to_owned();
    t.call_as(
        &member,
        Method::POST,
        "/api/admin/projects/p/api-tokens",
        Some(&json!({"bad": true})),
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
    t.call_as(
        &member,
        Method::GET,
        "/api/admin/projects/p/api-tokens",
        None,
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
    expect(
        &t,
        Method::PUT,
        "/api/admin/projects/p/access",
        Some(json!({"roles": [{"id": 5, "users": [id]}]})),
        StatusCode::OK,
    )
    .await;
    expect_as(
        &t,
        &member,
        Method::POST,
        "/api/admin/projects/p/api-tokens",
        Some(json!({"tokenName": "mine", "type": "frontend", "environment": "production"})),
        StatusCode::CREATED,
    )
    .await;
    let listed = expect_as(
        &t,
        &member,
        Method::GET,
        "/api/admin/projects/p/api-tokens",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(names(&listed["tokens"]), ["mine"]);
    t.call_as(
        &member,
        Method::GET,
        "/api/admin/projects/other/api-tokens",
        None,
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
}
