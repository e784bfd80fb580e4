//! Keys and hostile names over HTTP: `expiresAt` honoured,
//! listings that show each key as it is, revoking twice, and names that cannot be names
//! refused with 400 on every route that takes one, never stored, never a 500.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use chrono::{SecondsFormat, Utc};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::{Grant, KeyAccess, Permission};

const TOKENS: &str = "/api/admin/api-tokens";

fn at(offset: chrono::Duration) -> String {
    (Utc::now() + offset).to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn listed(t: &Value, id: &str) -> Value {
    t["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == json!(id))
        .cloned()
        .unwrap_or_else(|| panic!("{id} not listed in {t}"))
}

// ---------------------------------------------------------------- 1. expiry

#[tokio::test]
async fn expires_at_is_honoured_at_creation_in_listings_and_at_use() {
    let t = setup().await;
    // In the past: 400, nothing created.
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "late", "type": "admin", "expiresAt": at(-chrono::Duration::seconds(5))})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(body.to_string().contains("expiresAt"), "{body}");
    let r = t.call(Method::GET, TOKENS, None).await;
    assert_eq!(r.json()["tokens"].as_array().unwrap().len(), 1);
    // Not a date: 400.
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "odd", "type": "admin", "expiresAt": "tomorrow"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");

    // Soon: works until then, listed with its expiry, then 401.
    let expires = at(chrono::Duration::milliseconds(800));
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "soon", "type": "admin", "expiresAt": expires})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let created = r.json();
    assert_eq!(created["expiresAt"], json!(expires));
    let secret = created["secret"].as_str().unwrap().to_owned();
    let r = t
        .call_as(&secret, Method::GET, "/api/admin/projects/p", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let list = t.call(Method::GET, TOKENS, None).await.json();
    assert_eq!(
        listed(&list, created["id"].as_str().unwrap())["expiresAt"],
        json!(expires)
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    let r = t
        .call_as(&secret, Method::GET, "/api/admin/projects/p", None)
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    // An expired key can still be revoked by its secret.
    let r = t
        .call(Method::DELETE, &format!("{TOKENS}/{secret}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

#[tokio::test]
async fn user_tokens_honour_expires_at() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/user-admin",
            Some(&json!({"username": "dev", "rootRole": 2})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let path = format!("/api/admin/user-admin/{id}/tokens");
    let r = t
        .call(
            Method::POST,
            &path,
            Some(&json!({"description": "old", "expiresAt": at(-chrono::Duration::days(1))})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let expires = at(chrono::Duration::days(30));
    let r = t
        .call(
            Method::POST,
            &path,
            Some(&json!({"description": "pat", "expiresAt": expires})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert_eq!(r.json()["expiresAt"], json!(expires));
    let token = r.json();
    assert!(
        token["id"].is_i64(),
        "numbered as Unleash numbers them: {token}"
    );
    let list = t.call(Method::GET, TOKENS, None).await.json();
    let it = list["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["tokenName"] == "pat" && k["userId"] == json!(id))
        .cloned()
        .unwrap_or_else(|| panic!("the user's key is not listed in {list}"));
    assert_eq!(it["type"], "user");
    assert_eq!(it["userId"], json!(id));
    assert_eq!(it["expiresAt"], json!(expires));
    // Revoked by its number, as Unleash names it, under its user only.
    let number = token["id"].as_i64().unwrap();
    t.call(Method::DELETE, &format!("{path}/{number}0"), None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(Method::DELETE, &format!("{path}/{number}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let list = t.call(Method::GET, TOKENS, None).await.json();
    assert!(
        !list["tokens"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["userId"] == json!(id)),
        "{list}"
    );
    t.call(Method::DELETE, &format!("{path}/{number}"), None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

// ---------------------------------------------------------------- 2. listings

#[tokio::test]
async fn listings_show_each_keys_type_scope_and_expiry_but_no_secret() {
    let t = setup().await;
    let limited = t
        .admin
        .create_api_key(
            &t.caller,
            "limited",
            KeyAccess::Grants {
                grants: vec![
                    Grant::in_environment(
                        Permission::UpdateFeatureEnvironmentVariants,
                        "p",
                        "production",
                    ),
                    Grant::in_environment(
                        Permission::UpdateFeatureEnvironment,
                        "other",
                        "production",
                    ),
                ],
            },
        )
        .await
        .unwrap();
    let r = t.call(Method::GET, TOKENS, None).await;
    assert_eq!(r.status, StatusCode::OK);
    let list = r.json();
    assert!(!r.text().contains(&limited.secret));
    assert!(!r.text().contains(&t.secret));
    for token in list["tokens"].as_array().unwrap() {
        assert!(token.get("secret").is_none(), "{token}");
    }
    let it = listed(&list, &limited.info.id.to_string());
    assert_eq!(it["type"], "grants");
    assert_eq!(it["projects"], json!(["other", "p"]));
    assert_eq!(it["project"], "other,p");
    assert_eq!(it["environment"], "production");
    assert_eq!(it["expiresAt"], Value::Null);
    let admin = listed(&list, &t.caller.key().id.to_string());
    assert_eq!(admin["type"], "admin");
    assert_eq!(admin["projects"], json!(["*"]));
    assert_eq!(admin["environment"], "*");
}

// ---------------------------------------------------------------- 5. revoking twice

#[tokio::test]
async fn revoking_twice_is_a_404_without_an_event() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "k", "type": "admin"})),
        )
        .await;
    let id = r.json()["id"].as_str().unwrap().to_owned();
    let r = t
        .call(Method::DELETE, &format!("{TOKENS}/{id}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let events = t
        .admin
        .events(&t.caller, 0, usize::MAX)
        .await
        .unwrap()
        .len();
    let r = t
        .call(Method::DELETE, &format!("{TOKENS}/{id}"), None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(
        t.admin
            .events(&t.caller, 0, usize::MAX)
            .await
            .unwrap()
            .len(),
        events
    );
}

// ---------------------------------------------------------------- 7. hostile names

fn hostile() -> Vec<(&'static str, String)> {
    vec![
        ("NUL", "a\u{0}b".to_owned()),
        ("newline", "a\nb".to_owned()),
        ("escape", "\u{1b}[31mred".to_owned()),
        ("10,000 characters", "a".repeat(10_000)),
    ]
}

/// Every create route that takes a name, with `name` put where the name goes.
fn bodies(name: &str) -> Vec<(&'static str, String, Value)> {
    vec![
        (
            "user username",
            "/api/admin/user-admin".into(),
            json!({"username": name}),
        ),
        (
            "user name",
            "/api/admin/user-admin".into(),
            json!({"username": "u1", "name": name}),
        ),
        (
            "user email",
            "/api/admin/user-admin".into(),
            json!({"email": format!("{name}@x.io")}),
        ),
        (
            "group",
            "/api/admin/groups".into(),
            json!({"name": name, "users": []}),
        ),
        (
            "role",
            "/api/admin/roles".into(),
            json!({"name": name, "permissions": []}),
        ),
        (
            "token",
            TOKENS.into(),
            json!({"tokenName": name, "type": "admin"}),
        ),
        (
            "tag type",
            "/api/admin/tag-types".into(),
            json!({"name": name}),
        ),
        (
            "tag value",
            "/api/admin/features/f/tags".into(),
            json!({"value": name, "type": "simple"}),
        ),
        (
            "tag's type",
            "/api/admin/features/f/tags".into(),
            json!({"value": "v1", "type": name}),
        ),
        (
            "segment",
            "/api/admin/segments".into(),
            json!({"name": name, "constraints": []}),
        ),
        (
            "segment's project",
            "/api/admin/segments".into(),
            json!({"name": "s1", "project": name, "constraints": []}),
        ),
        (
            "segment constraint",
            "/api/admin/segments".into(),
            json!({"name": "s2", "constraints": [{"contextName": name, "operator": "IN", "values": ["a"]}]}),
        ),
        (
            "context field",
            "/api/admin/context".into(),
            json!({"name": name}),
        ),
        (
            "strategy",
            "/api/admin/strategies".into(),
            json!({"name": name, "parameters": []}),
        ),
        (
            "project",
            "/api/admin/projects".into(),
            json!({"id": name, "name": "P"}),
        ),
        (
            "project name",
            "/api/admin/projects".into(),
            json!({"id": "p2", "name": name}),
        ),
        (
            "environment",
            "/api/admin/environments".into(),
            json!({"name": name, "type": "test"}),
        ),
        (
            "feature",
            "/api/admin/projects/p/features".into(),
            json!({"name": name}),
        ),
    ]
}

#[tokio::test]
async fn hostile_names_in_bodies_are_400_and_not_stored() {
    let t = setup().await;
    let before = t
        .admin
        .events(&t.caller, 0, usize::MAX)
        .await
        .unwrap()
        .len();
    for (what, name) in hostile() {
        for (route, path, body) in bodies(&name) {
            let r = t.call(Method::POST, &path, Some(&body)).await;
            assert_eq!(
                r.status,
                StatusCode::BAD_REQUEST,
                "{what} as {route} at {path}: {}",
                r.text().chars().take(300).collect::<String>()
            );
            assert_error_body(&r.json(), "ValidationError");
            assert!(
                !r.text().contains("expected shape"),
                "{what} as {route}: refused for its shape, not its name: {}",
                r.text()
            );
        }
    }
    assert_eq!(
        t.admin
            .events(&t.caller, 0, usize::MAX)
            .await
            .unwrap()
            .len(),
        before,
        "nothing was written"
    );
}

/// Fields that name something else must name something that exists: a path-like name is a
/// 400, not stored.
#[tokio::test]
async fn references_to_nothing_are_400() {
    let t = setup().await;
    for (route, path, body) in [
        (
            "tag's type",
            "/api/admin/features/f/tags",
            json!({"value": "v1", "type": "nope"}),
        ),
        (
            "segment's project",
            "/api/admin/segments",
            json!({"name": "s1", "project": "../../x", "constraints": []}),
        ),
        (
            "segment constraint",
            "/api/admin/segments",
            json!({"name": "s2", "constraints": [{"contextName": "../../x", "operator": "IN", "values": ["a"]}]}),
        ),
        (
            "role permission environment",
            "/api/admin/roles",
            json!({"name": "r", "permissions": [{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "../../x"}]}),
        ),
        (
            "role permission name",
            "/api/admin/roles",
            json!({"name": "r2", "permissions": [{"name": "../../x"}]}),
        ),
        (
            "project environments",
            "/api/admin/projects",
            json!({"id": "p3", "name": "P", "environments": ["../../x"]}),
        ),
    ] {
        let r = t.call(Method::POST, path, Some(&body)).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{route}: {}", r.text());
        if route != "role permission name" {
            assert!(
                !r.text().contains("expected shape"),
                "{route}: {}",
                r.text()
            );
        }
    }
    // Library-made keys: grants must name existing projects and environments.
    let err = t
        .admin
        .create_api_key(
            &t.caller,
            "k",
            KeyAccess::Grants {
                grants: vec![Grant::in_environment(
                    Permission::UpdateFeature,
                    "../../x",
                    "production",
                )],
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), 400, "{err:?}");
    assert_eq!(
        err.details()[0].path.as_deref(),
        Some("access.grants[0].project")
    );
}

#[tokio::test]
async fn hostile_names_in_paths_are_400() {
    let t = setup().await;
    for (what, name) in [
        ("NUL", "a%00b"),
        ("newline", "a%0Ab"),
        ("escape", "%1B%5B31m"),
    ] {
        let long = "a".repeat(10_000);
        for name in [name, long.as_str()] {
            for path in [
                format!("/api/admin/projects/{name}"),
                format!("/api/admin/projects/p/features/{name}"),
                format!("/api/admin/tag-types/{name}"),
                format!("/api/admin/context/{name}"),
                format!("/api/admin/strategies/{name}"),
                format!("/api/admin/projects/p/features/f/environments/{name}/variants"),
            ] {
                let r = t.call(Method::GET, &path, None).await;
                assert_eq!(
                    r.status,
                    StatusCode::BAD_REQUEST,
                    "{what} in {}: {}",
                    path.chars().take(80).collect::<String>(),
                    r.text()
                );
                assert_error_body(&r.json(), "ValidationError");
            }
        }
    }
}

/// Display names may hold any printable text.
#[tokio::test]
async fn display_names_may_be_any_printable_text() {
    let t = setup().await;
    let name = "Équipe « Ops » 🚀 / ../x";
    for (path, body) in [
        ("/api/admin/groups", json!({"name": name, "users": []})),
        ("/api/admin/roles", json!({"name": name, "permissions": []})),
        (
            "/api/admin/segments",
            json!({"name": name, "constraints": []}),
        ),
        (
            "/api/admin/user-admin",
            json!({"username": "ops", "name": name}),
        ),
        (TOKENS, json!({"tokenName": name, "type": "admin"})),
    ] {
        let r = t.call(Method::POST, path, Some(&body)).await;
        assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
    }
}

/// The 400 names the field as the body spells it.
#[tokio::test]
async fn hostile_key_names_are_reported_at_their_body_field() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "a\u{0}b", "type": "admin"})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(body["details"][0]["path"], "/tokenName", "{body}");
    let r = t
        .call(
            Method::POST,
            "/api/admin/user-admin",
            Some(&json!({"username": "dev"})),
        )
        .await;
    let id = r.json()["id"].as_i64().unwrap();
    let r = t
        .call(
            Method::POST,
            &format!("/api/admin/user-admin/{id}/tokens"),
            Some(&json!({"description": "x".repeat(256)})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(body["details"][0]["path"], "/description", "{body}");
}

/// Revoking by secret puts the secret in the path; the request's log lines must not carry it.
#[tokio::test]
async fn a_secret_in_the_path_stays_out_of_the_logs() {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    // One global subscriber for the whole test binary: a thread-local one races with the
    // callsite interest other tests' threads cache meanwhile.
    static LOGS: std::sync::OnceLock<Buffer> = std::sync::OnceLock::new();
    let buffer = LOGS
        .get_or_init(|| {
            let buffer = Buffer::default();
            let writer = buffer.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::TRACE)
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .finish();
            tracing::subscriber::set_global_default(subscriber).unwrap();
            buffer
        })
        .clone();
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            TOKENS,
            Some(&json!({"tokenName": "k", "type": "admin"})),
        )
        .await;
    let secret = r.json()["secret"].as_str().unwrap().to_owned();
    let r = t
        .call(Method::DELETE, &format!("{TOKENS}/{secret}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let logs = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("api-tokens/<secret>"),
        "the request was logged: {logs}"
    );
    assert!(!logs.contains(&secret), "the secret is in the logs: {logs}");
}
