//! Users through the router: the caller (`/api/admin/user`, its profile and its own keys),
//! and changing, finding and deleting users; every deleted key or user refused at the next
//! call, over every store.

use axum::http::{Method, StatusCode};
use serde_json::json;
use test_support::http::*;

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

/// The caller, its profile and its own keys; changing, finding and deleting users.
async fn users(t: &Setup) {
    let user = expect(t, Method::POST, "/api/admin/user-admin", Some(json!({"username": "alice", "email": "alice@example.com", "name": "Alice Smith", "rootRole": 2})), StatusCode::CREATED).await;
    let id = user["id"].as_i64().unwrap();
    let key = expect(
        t,
        Method::POST,
        &format!("/api/admin/user-admin/{id}/tokens"),
        Some(json!({"description": "alice-key"})),
        StatusCode::CREATED,
    )
    .await;
    let alice = key["secret"].as_str().unwrap().to_owned();

    // Who is calling, never with a secret.
    let r = t
        .call_as(&alice, Method::GET, "/api/admin/user", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(!r.text().contains(&alice), "the secret leaked");
    assert_eq!(r.json()["user"]["id"], id);
    assert_eq!(r.json()["user"]["isAPI"], false);
    assert_eq!(r.json()["user"]["rootRole"], 2);
    assert!(
        r.json()["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["permission"] == "CREATE_FEATURE")
    );
    let me = expect(t, Method::GET, "/api/admin/user", None, StatusCode::OK).await;
    assert_eq!(me["user"]["isAPI"], true);
    assert_eq!(me["user"]["username"], "test-admin");
    assert_eq!(me["permissions"], json!([{"permission": "ADMIN"}]));
    assert!(!me.to_string().contains(&t.secret));

    let profile = expect_as(
        t,
        &alice,
        Method::GET,
        "/api/admin/user/profile",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(profile["rootRole"]["name"], "Editor");
    assert_eq!(profile["projects"], json!([]));
    expect(
        t,
        Method::PUT,
        "/api/admin/projects/p/access",
        Some(json!({"roles": [{"id": 5, "users": [id]}]})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        expect_as(
            t,
            &alice,
            Method::GET,
            "/api/admin/user/profile",
            None,
            StatusCode::OK
        )
        .await["projects"],
        json!(["p"])
    );

    // Her own keys.
    let own = expect_as(
        t,
        &alice,
        Method::POST,
        "/api/admin/user/tokens",
        Some(json!({"description": "cli", "expiresAt": in_an_hour()})),
        StatusCode::CREATED,
    )
    .await;
    let cli = own["secret"].as_str().unwrap().to_owned();
    assert_eq!(own["userId"], id);
    let listed = expect_as(
        t,
        &alice,
        Method::GET,
        "/api/admin/user/tokens",
        None,
        StatusCode::OK,
    )
    .await;
    let descriptions: Vec<&str> = listed["pats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["description"].as_str().unwrap())
        .collect();
    assert_eq!(descriptions, ["alice-key", "cli"]);
    // Numbered as Unleash numbers personal access tokens; the number revokes the key.
    let number = own["id"].as_i64().unwrap();
    assert!(
        listed["pats"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["id"] == number),
        "{listed}"
    );
    assert!(
        listed["pats"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k.get("secret").is_none()),
        "{listed}"
    );
    expect_as(
        t,
        &cli,
        Method::GET,
        "/api/admin/user",
        None,
        StatusCode::OK,
    )
    .await;
    for (body, path) in [
        (json!({"description": "x"}), "/expiresAt"),
        (
            json!({"description": "x", "expiresAt": "2020-01-01T00:00:00Z"}),
            "/expiresAt",
        ),
        (
            json!({"description": " ", "expiresAt": in_an_hour()}),
            "/description",
        ),
    ] {
        let error = t
            .call_as(&alice, Method::POST, "/api/admin/user/tokens", Some(&body))
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [path], "{body}: {error}");
    }
    t.call_as(
        &alice,
        Method::POST,
        "/api/admin/user/tokens",
        Some(&json!({"description": "cli", "expiresAt": in_an_hour()})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    t.call(Method::GET, "/api/admin/user/tokens", None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    expect_as(
        t,
        &alice,
        Method::DELETE,
        &format!("/api/admin/user/tokens/{number}"),
        None,
        StatusCode::OK,
    )
    .await;
    t.call_as(&cli, Method::GET, "/api/admin/user", None)
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    for other in [uuid::Uuid::new_v4().to_string(), number.to_string()] {
        t.call_as(
            &alice,
            Method::DELETE,
            &format!("/api/admin/user/tokens/{other}"),
            None,
        )
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    }

    // Search: not taken for an id.
    expect(
        t,
        Method::POST,
        "/api/admin/user-admin",
        Some(json!({"username": "bob", "name": "Bob"})),
        StatusCode::CREATED,
    )
    .await;
    let found = expect(
        t,
        Method::GET,
        "/api/admin/user-admin/search?q=SMI",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["id"], id);
    assert_eq!(
        expect(
            t,
            Method::GET,
            "/api/admin/user-admin/search?q=bo",
            None,
            StatusCode::OK
        )
        .await[0]["username"],
        "bob"
    );
    assert_eq!(
        expect(
            t,
            Method::GET,
            "/api/admin/user-admin/search?q=a",
            None,
            StatusCode::OK
        )
        .await,
        json!([])
    );

    // Changing a user: bad bodies change nothing; a new root role holds at once.
    let path = format!("/api/admin/user-admin/{id}");
    for (body, field) in [
        (json!({"rootRole": 4}), "/rootRole"),
        (json!({"rootRole": "Owner"}), "/rootRole"),
        (json!({"email": "not-an-address"}), "/email"),
    ] {
        let error = t
            .call(Method::PUT, &path, Some(&body))
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [field], "{body}: {error}");
    }
    t.call(Method::PUT, &path, Some(&json!({"nickname": "al"})))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(
        expect(t, Method::GET, &path, None, StatusCode::OK).await["rootRole"],
        2
    );
    expect_as(
        t,
        &alice,
        Method::POST,
        "/api/admin/projects/other/features",
        Some(json!({"name": "by-alice"})),
        StatusCode::CREATED,
    )
    .await;
    let changed = expect(
        t,
        Method::PUT,
        &path,
        Some(json!({"name": "Alice Jones", "rootRole": "Viewer"})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(changed["name"], "Alice Jones");
    assert_eq!(changed["email"], "alice@example.com", "kept");
    assert_eq!(
        expect(t, Method::GET, &path, None, StatusCode::OK).await["rootRole"],
        3
    );
    t.call_as(
        &alice,
        Method::POST,
        "/api/admin/projects/other/features",
        Some(&json!({"name": "by-alice-2"})),
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
    let overview = expect(
        t,
        Method::GET,
        &format!("{path}/permissions?project=p&environment=production"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(overview["rootRole"]["name"], "Viewer");
    assert_eq!(overview["projectRoles"][0]["name"], "Member");
    let held = |group: &str, name: &str| {
        overview["overview"][group]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["hasPermission"]
            .clone()
    };
    assert_eq!(held("project", "CREATE_FEATURE"), true);
    assert_eq!(held("root", "CREATE_PROJECT"), false);
    assert_eq!(held("environment", "UPDATE_FEATURE_ENVIRONMENT"), true);
    t.call(Method::GET, "/api/admin/user-admin/999/permissions", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Deleting her: her key is refused at once, she leaves the project.
    let before = event_count(t, "user-deleted").await;
    expect(t, Method::DELETE, &path, None, StatusCode::OK).await;
    t.call_as(&alice, Method::GET, "/api/admin/user", None)
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    t.call(Method::GET, &path, None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(
        expect(
            t,
            Method::GET,
            "/api/admin/projects/p/access",
            None,
            StatusCode::OK
        )
        .await["roles"][0]["users"],
        json!([])
    );
    assert_eq!(event_count(t, "user-deleted").await, before + 1);
    t.call(Method::DELETE, &path, None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

on_every_store!(users => users_on_a_memory_store, users_on_a_file_store, users_on_a_postgres_store);
