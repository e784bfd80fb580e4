//! The HTTP contract of project access (SPEC §4.4) and application deletion (§4.3), with the
//! users, groups, roles and applications they need, through the router (`oneshot`).

use axum::http::{Method, StatusCode};
use serde_json::json;
use test_support::http::*;
use toggle_admin::{Grant, Permission};

const ACCESS: &str = "/api/admin/projects/p/access";

/// A user with root role `root_role` and the secret of a key acting as that user.
async fn user_key(t: &Setup, username: &str, root_role: i64) -> (i64, String) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/user-admin",
            Some(&json!({"username": username, "rootRole": root_role})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let r = t
        .call(
            Method::POST,
            &format!("/api/admin/user-admin/{id}/tokens"),
            Some(&json!({"description": format!("{username}'s key")})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let token = r.json();
    assert_eq!(token["userId"], id);
    (id, token["secret"].as_str().unwrap().to_owned())
}

// ---- PUT project access (SPEC §4.4) ----

#[tokio::test]
async fn put_access_200_no_body_and_reads_back() {
    let t = setup().await;
    let (alice, _) = user_key(&t, "alice", 3).await;
    let (bob, _) = user_key(&t, "bob", 3).await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/groups",
            Some(&json!({"name": "devs", "users": [{"user": {"id": bob}}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let group = r.json()["id"].as_i64().unwrap();
    assert_eq!(r.json()["users"], json!([bob]));
    let config = json!({"roles": [{"id": 4, "users": [alice]}, {"id": 5, "groups": [group]}]});
    let r = t.call(Method::PUT, ACCESS, Some(&config)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.body.is_empty(), "no body: {}", r.text());
    assert!(r.content_type().is_none());
    let back = t.call(Method::GET, ACCESS, None).await;
    assert_eq!(back.status, StatusCode::OK);
    let roles = back.json()["roles"].clone();
    assert_eq!(roles[0]["id"], 4);
    assert_eq!(roles[0]["users"], json!([alice]));
    assert_eq!(roles[1]["groups"], json!([group]));
    // Replaces everything: an empty configuration clears it.
    let r = t
        .call(Method::PUT, ACCESS, Some(&json!({"roles": []})))
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        t.call(Method::GET, ACCESS, None).await.json()["roles"],
        json!([])
    );
}

#[tokio::test]
async fn put_access_gives_the_user_the_role_s_permissions() {
    let t = setup().await;
    let (alice, key) = user_key(&t, "alice", 3).await;
    let variants = "/api/admin/projects/p/features/f/environments/production/variants";
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    let r = t.call_as(&key, Method::PATCH, variants, Some(&patch)).await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call(
            Method::PUT,
            ACCESS,
            Some(&json!({"roles": [{"id": 5, "users": [alice]}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t.call_as(&key, Method::PATCH, variants, Some(&patch)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

#[tokio::test]
async fn put_access_errors() {
    let t = setup().await;
    let (alice, viewer) = user_key(&t, "alice", 3).await;
    let body = json!({"roles": [{"id": 4, "users": [alice]}]});
    // 401
    let r = t
        .raw(
            Method::PUT,
            ACCESS,
            None,
            Some("application/json"),
            body.to_string().into_bytes(),
        )
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    // 403: a Viewer may not assign roles; nor may a key with unrelated grants.
    let r = t.call_as(&viewer, Method::PUT, ACCESS, Some(&body)).await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let limited = t
        .key_with(vec![Grant::everywhere(Permission::CreateFeature)])
        .await;
    let r = t.call_as(&limited, Method::PUT, ACCESS, Some(&body)).await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    // 404
    let r = t
        .call(Method::PUT, "/api/admin/projects/nope/access", Some(&body))
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    // 400: role id below 1, unknown role, unknown user, root role, wrong shape.
    for bad in [
        json!({"roles": [{"id": 0, "users": [alice]}]}),
        json!({"roles": [{"id": 999, "users": [alice]}]}),
        json!({"roles": [{"id": 4, "users": [424242]}]}),
        json!({"roles": [{"id": 1, "users": [alice]}]}),
        json!({"roles": {"id": 4}}),
        json!({"roles": [{"id": "four"}]}),
        json!({}),
    ] {
        let r = t.call(Method::PUT, ACCESS, Some(&bad)).await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
    // 415
    let r = t
        .raw(
            Method::PUT,
            ACCESS,
            Some(&t.secret),
            Some("text/plain"),
            body.to_string().into_bytes(),
        )
        .await;
    r.error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "ContentTypeError");
    // Nothing was written by the failures.
    assert_eq!(
        t.call(Method::GET, ACCESS, None).await.json()["roles"],
        json!([])
    );
}

#[tokio::test]
async fn custom_roles_and_listings() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/roles",
            Some(&json!({"name": "variant-editor", "permissions": [
                {"name": "UPDATE_FEATURE_ENVIRONMENT_VARIANTS", "environment": "development"}
            ]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let role = r.json()["id"].as_i64().unwrap();
    let (alice, key) = user_key(&t, "alice", 3).await;
    let r = t
        .call(
            Method::PUT,
            ACCESS,
            Some(&json!({"roles": [{"id": role, "users": [alice]}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    let dev = "/api/admin/projects/p/features/f/environments/development/variants";
    let r = t.call_as(&key, Method::PATCH, dev, Some(&patch)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let prod = dev.replace("development", "production");
    let r = t.call_as(&key, Method::PATCH, &prod, Some(&patch)).await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    for (path, member) in [
        ("/api/admin/user-admin", "users"),
        ("/api/admin/groups", "groups"),
        ("/api/admin/roles", "roles"),
    ] {
        let r = t.call(Method::GET, path, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text());
        assert!(r.json()[member].is_array(), "{path}: {}", r.text());
    }
    let r = t
        .call(Method::GET, &format!("/api/admin/roles/{role}"), None)
        .await;
    assert_eq!(r.json()["name"], "variant-editor");
    let r = t
        .call(Method::GET, &format!("/api/admin/user-admin/{alice}"), None)
        .await;
    assert_eq!(r.json()["username"], "alice");
}

// ---- DELETE application (SPEC §4.3) ----

#[tokio::test]
async fn delete_application_200_whether_or_not_it_exists() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/metrics/applications/billing",
            Some(&json!({"description": "Billing", "instances": [{"instanceId": "i-1"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let r = t
        .call(Method::GET, "/api/admin/metrics/applications/billing", None)
        .await;
    assert_eq!(r.json()["description"], "Billing");
    let r = t
        .call(Method::GET, "/api/admin/metrics/applications", None)
        .await;
    assert_eq!(r.json()["applications"][0]["appName"], "billing");
    for _ in 0..2 {
        let r = t
            .call(
                Method::DELETE,
                "/api/admin/metrics/applications/billing",
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        assert!(r.body.is_empty(), "no body: {}", r.text());
    }
    let r = t
        .call(Method::GET, "/api/admin/metrics/applications/billing", None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/metrics/applications/never-was",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.is_empty());
}

#[tokio::test]
async fn delete_application_401_and_403() {
    let t = setup().await;
    let path = "/api/admin/metrics/applications/billing";
    let r = t.raw(Method::DELETE, path, None, None, Vec::new()).await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    let r = t
        .raw(Method::DELETE, path, Some("unknown-key"), None, Vec::new())
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    let (_, viewer) = user_key(&t, "viewer", 3).await;
    let r = t.call_as(&viewer, Method::DELETE, path, None).await;
    let body = r.error(StatusCode::FORBIDDEN, "NoAccessError");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("UPDATE_APPLICATION"),
        "{body}"
    );
    let (_, editor) = user_key(&t, "editor", 2).await;
    let r = t.call_as(&editor, Method::DELETE, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let granted = t
        .key_with(vec![Grant::everywhere(Permission::UpdateApplication)])
        .await;
    let r = t.call_as(&granted, Method::DELETE, path, None).await;
    assert_eq!(r.status, StatusCode::OK);
}

// ---- order of checks: authentication → permission → body (BEHAVIOUR, errors) ----

#[tokio::test]
async fn permission_is_checked_before_the_body() {
    let t = setup().await;
    let (_, viewer) = user_key(&t, "viewer", 3).await;
    let variants = "/api/admin/projects/p/features/f/environments/production/variants";
    for (method, path) in [
        (Method::PATCH, variants),
        (Method::PUT, variants),
        (Method::PUT, ACCESS),
        (Method::POST, "/api/admin/metrics/applications/billing"),
    ] {
        // Malformed JSON, the wrong content type, the wrong shape: a Viewer gets 403.
        for (content_type, body) in [
            (Some("application/json"), b"[{\"op\": \"add\",".to_vec()),
            (Some("text/plain"), b"hello".to_vec()),
            (Some("application/json"), b"\"a string\"".to_vec()),
            (None, Vec::new()),
        ] {
            let r = t
                .raw(method.clone(), path, Some(&viewer), content_type, body)
                .await;
            r.error(StatusCode::FORBIDDEN, "NoAccessError");
        }
        // The admin gets the body's error.
        let secret = t.secret.clone();
        let r = t
            .raw(
                method.clone(),
                path,
                Some(&secret),
                Some("application/json"),
                b"[{\"op\": \"add\",".to_vec(),
            )
            .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
}
