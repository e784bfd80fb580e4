//! `GET /api/admin/ui-config` through the router: Unleash's `uiConfigSchema` exactly, the
//! Unleash version for clients that compare versions and this crate's in the slogan, the
//! public URL from the configuration or from the request, maintenance mode as stored, for
//! every admin-API key and no other; over every store.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use test_support::http::*;
use test_support::unleash_schema::assert_unleash_response;
use toggle_admin::http::RouterConfig;
use toggle_admin::model::{CRATE_VERSION, Grant, Permission};
use tower::ServiceExt;

const UI_CONFIG: &str = "/api/admin/ui-config";

/// `GET /api/admin/ui-config` through `app` with `key` and `headers`: the status and body.
async fn read(app: &Router, key: &str, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(UI_CONFIG)
        .header(header::AUTHORIZATION, key);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The answer, checked against Unleash's schema.
async fn config(app: &Router, key: &str, headers: &[(&str, &str)]) -> Value {
    let (status, body) = read(app, key, headers).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_unleash_response("getUiConfig", 200, &body);
    body
}

async fn scenario(t: &Setup) {
    let body = config(&t.app, &t.secret, &[]).await;
    // Clients that gate features on the version see the Unleash this API speaks for.
    assert_eq!(body["version"], "6.10.1");
    assert_eq!(
        body["versionInfo"],
        json!({"current": {"oss": "6.10.1"}, "latest": {}, "isLatest": true})
    );
    assert_eq!(body["name"], "toggle-admin");
    assert_eq!(
        body["slogan"],
        format!("toggle-admin {CRATE_VERSION}, wire-compatible with Unleash 6.10.1")
    );
    assert_eq!(body["environment"], "Open Source");
    assert_eq!(body["authenticationType"], "custom");
    assert_eq!(body["disablePasswordAuth"], true);
    assert_eq!(body["emailEnabled"], false);
    assert_eq!(body["maintenanceMode"], false);
    assert_eq!(body["frontendApiOrigins"], json!(["*"]));
    assert_eq!(body["flags"], json!({"enableLegacyVariants": true}));
    // No configured URL and no host in the request: nothing to say.
    assert_eq!(body["unleashUrl"], "");
    assert_eq!(body["baseUriPath"], "");

    // Without a configured URL, the address the request was sent to, as a proxy tells it.
    let body = config(&t.app, &t.secret, &[("host", "flags.internal:4242")]).await;
    assert_eq!(body["unleashUrl"], "http://flags.internal:4242");
    let body = config(
        &t.app,
        &t.secret,
        &[
            ("host", "flags.internal:4242"),
            ("x-forwarded-host", "flags.example.com"),
            ("x-forwarded-proto", "https"),
        ],
    )
    .await;
    assert_eq!(body["unleashUrl"], "https://flags.example.com");
    assert_eq!(body["baseUriPath"], "");
    // A host that is not one points nowhere.
    let body = config(&t.app, &t.secret, &[("x-forwarded-host", "evil.example/x")]).await;
    assert_eq!(body["unleashUrl"], "");

    // A configured URL wins over the request, and its path is the base path; the frontend
    // API's origins are the configured ones.
    let configured = RouterConfig::new()
        .public_url("https://example.com/ops/flags/")
        .frontend_origins(["https://app.example.com"])
        .router(t.admin.clone());
    let body = config(
        &configured,
        &t.secret,
        &[("x-forwarded-host", "elsewhere.example")],
    )
    .await;
    assert_eq!(body["unleashUrl"], "https://example.com/ops/flags");
    assert_eq!(body["baseUriPath"], "/ops/flags");
    assert_eq!(
        body["frontendApiOrigins"],
        json!(["https://app.example.com"])
    );

    // Maintenance mode as stored, read afresh.
    let r = t
        .call(
            Method::POST,
            "/api/admin/maintenance",
            Some(&json!({"enabled": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert_eq!(
        config(&t.app, &t.secret, &[]).await["maintenanceMode"],
        true
    );
    let r = t
        .call(
            Method::POST,
            "/api/admin/maintenance",
            Some(&json!({"enabled": false})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert_eq!(
        config(&t.app, &t.secret, &[]).await["maintenanceMode"],
        false
    );

    // Any admin-API key may read it: one without permissions too, and a user's.
    let bare = t.key_with(Vec::new()).await;
    config(&t.app, &bare, &[]).await;
    let limited = t
        .key_with(vec![Grant::in_project(Permission::CreateFeature, "p")])
        .await;
    config(&t.app, &limited, &[]).await;
    // Not a client key, nor a missing or unknown one.
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "environment": "production"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let client = r.json()["secret"].as_str().unwrap().to_owned();
    t.call_as(&client, Method::GET, UI_CONFIG, None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    t.raw(Method::GET, UI_CONFIG, None, None, Vec::new())
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    t.call_as("not-a-key", Method::GET, UI_CONFIG, None)
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

on_every_store!(scenario => ui_config_on_memory, ui_config_on_file, ui_config_on_postgres);
