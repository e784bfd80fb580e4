//! The frontend API (`/api/frontend*`) and the Edge protocol (`/edge/validate`,
//! `/api/client/metrics/bulk`) through the router: frontend keys and their scope, evaluation
//! as the admin API set it, CORS, metrics and registrations, hostile contexts.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::http::RouterConfig;
use tower::ServiceExt;

const TOKENS: &str = "/api/admin/api-tokens";

async fn token(t: &Setup, body: Value) -> (String, Value) {
    let r = t.call(Method::POST, TOKENS, Some(&body)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let token = r.json();
    (token["secret"].as_str().unwrap().to_owned(), token)
}

fn strategies(project: &str, feature: &str, environment: &str) -> String {
    format!(
        "/api/admin/projects/{project}/features/{feature}/environments/{environment}/strategies"
    )
}

async fn ok(t: &Setup, method: Method, path: &str, body: Option<&Value>) -> Value {
    let r = t.call(method, path, body).await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// `f` (project p): on in production for users 1 and 2 only, with variants; `g` (project
/// other): on for everyone; `h` (project p): off.
async fn flags(t: &Setup) {
    ok(
        t,
        Method::POST,
        &strategies("p", "f", "production"),
        Some(&json!({
            "name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "f"},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}]
        })),
    )
    .await;
    ok(
        t,
        Method::PUT,
        "/api/admin/projects/p/features/f/environments/production/variants",
        Some(&json!([
            {"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
             "payload": {"type": "string", "value": "sky"},
             "overrides": [{"contextName": "userId", "values": ["1"]}]},
        ])),
    )
    .await;
    ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/production/on",
        None,
    )
    .await;
    ok(
        t,
        Method::POST,
        &strategies("other", "g", "production"),
        Some(&json!({"name": "default"})),
    )
    .await;
    ok(
        t,
        Method::POST,
        "/api/admin/projects/other/features/g/environments/production/on",
        None,
    )
    .await;
    ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features",
        Some(&json!({"name": "h", "impressionData": true})),
    )
    .await;
}

fn names(answer: &Value) -> Vec<&str> {
    answer["toggles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

async fn get_as(t: &Setup, key: &str, path: &str) -> Reply {
    t.raw(Method::GET, path, Some(key), None, Vec::new()).await
}

#[tokio::test]
async fn frontend_keys_read_the_frontend_api_only_and_see_their_scope() {
    let t = setup().await;
    flags(&t).await;
    let (all, listed) = token(
        &t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    assert!(all.starts_with("*:production."), "{all}");
    assert_eq!(listed["type"], "frontend");
    let (p_only, _) = token(
        &t,
        json!({"tokenName": "web-p", "type": "frontend", "projects": ["p"], "environment": "production"}),
    )
    .await;
    assert!(p_only.starts_with("p:production."), "{p_only}");
    let (several, _) = token(
        &t,
        json!({"tokenName": "web-2", "type": "frontend", "projects": ["p", "other"], "environment": "development"}),
    )
    .await;
    assert!(several.starts_with("[]:development."), "{several}");
    let r = t.call(Method::GET, TOKENS, None).await;
    let listing = r.json();
    let frontend_keys = listing["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "frontend")
        .count();
    assert_eq!(frontend_keys, 3, "{listing}");

    // A frontend key on the client and admin APIs: 403; a client or admin key on the
    // frontend API: 403.
    get_as(&t, &all, "/api/client/features")
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    get_as(&t, &all, TOKENS)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    let (client, _) = token(
        &t,
        json!({"tokenName": "sdk", "type": "client", "environment": "production"}),
    )
    .await;
    for key in [&client, &t.secret] {
        get_as(&t, key, "/api/frontend?userId=1")
            .await
            .error(StatusCode::FORBIDDEN, "NoAccessError");
    }
    t.raw(Method::GET, "/api/frontend", None, None, Vec::new())
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");

    // Evaluated for the context: user 1 gets f with the overridden variant, user 3 not f.
    let r = get_as(&t, &all, "/api/frontend?userId=1&appName=web").await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let answer = r.json();
    assert_eq!(names(&answer), ["f", "g"]);
    assert_eq!(
        answer["toggles"][0],
        json!({"name": "f", "enabled": true, "impressionData": false,
               "variant": {"name": "blue", "enabled": true, "feature_enabled": true,
                           "featureEnabled": true, "payload": {"type": "string", "value": "sky"}}})
    );
    assert_eq!(
        answer["toggles"][1]["variant"],
        json!({"name": "disabled", "enabled": false, "feature_enabled": true, "featureEnabled": true})
    );
    let r = get_as(&t, &all, "/api/frontend?userId=3").await;
    assert_eq!(names(&r.json()), ["g"]);
    // /all lists the disabled ones too.
    let r = get_as(&t, &all, "/api/frontend/all?userId=3").await;
    let answer = r.json();
    assert_eq!(names(&answer), ["f", "g", "h"]);
    assert_eq!(answer["toggles"][0]["enabled"], false);
    assert_eq!(answer["toggles"][2]["impressionData"], true);
    // POST with {context}, and a property from the query.
    let r = t
        .call_as(
            &all,
            Method::POST,
            "/api/frontend",
            Some(&json!({"context": {"userId": "2", "properties": {"plan": "pro"}}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&r.json()), ["f", "g"]);
    // The project scope: p only; the environment scope: nothing is on in development.
    let r = get_as(&t, &p_only, "/api/frontend/all?userId=1").await;
    assert_eq!(names(&r.json()), ["f", "h"]);
    let r = get_as(&t, &several, "/api/frontend?userId=1").await;
    assert_eq!(names(&r.json()), Vec::<&str>::new());

    // A change is seen by the next request (the engine is rebuilt from the new document).
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/other/features/g/environments/production/off",
        None,
    )
    .await;
    let r = get_as(&t, &all, "/api/frontend?userId=1").await;
    assert_eq!(names(&r.json()), ["f"]);

    // Revoked: 401 at once.
    let id = listed["id"].as_str().unwrap();
    ok(&t, Method::DELETE, &format!("{TOKENS}/{id}"), None).await;
    get_as(&t, &all, "/api/frontend")
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

#[tokio::test]
async fn the_facade_creates_lists_and_revokes_frontend_keys() {
    let t = setup().await;
    flags(&t).await;
    let key = t
        .admin
        .create_api_key(
            &t.caller,
            "web",
            toggle_admin::KeyAccess::frontend(vec!["p".into()], "production"),
        )
        .await
        .unwrap();
    assert!(key.secret.starts_with("p:production."));
    let caller = t.admin.authenticate(Some(&key.secret)).await.unwrap();
    let context = toggle_admin::unleash_types::client_features::Context {
        user_id: Some("1".into()),
        ..Default::default()
    };
    let answer = t
        .admin
        .frontend_features(&caller, &context, false)
        .await
        .unwrap();
    assert_eq!(answer.toggles.len(), 1);
    assert_eq!(answer.toggles[0].name, "f");
    assert!(matches!(
        t.admin.client_features(&caller, &Default::default()).await,
        Err(toggle_admin::Error::NoAccess { .. })
    ));
    assert!(matches!(
        t.admin.frontend_features(&t.caller, &context, false).await,
        Err(toggle_admin::Error::NoAccess { .. })
    ));
    let keys = t.admin.api_keys(&t.caller).await.unwrap();
    assert!(keys.iter().any(|k| k.access.is_frontend()));
    t.admin
        .revoke_api_key(&t.caller, key.info.id)
        .await
        .unwrap();
    assert!(t.admin.authenticate(Some(&key.secret)).await.is_err());
}

async fn request(app: &axum::Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: body.to_vec(),
    }
}

#[tokio::test]
async fn cors_answers_preflights_for_the_configured_origins() {
    let t = setup().await;
    let preflight = |origin: &str| {
        Request::builder()
            .method(Method::OPTIONS)
            .uri("/api/frontend")
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
            .header(
                header::ACCESS_CONTROL_REQUEST_HEADERS,
                "authorization,unleash-appname,unleash-sdk",
            )
            .body(Body::empty())
            .unwrap()
    };
    // The default: any origin.
    let r = request(&t.app, preflight("https://app.example.com")).await;
    assert!(r.status.is_success(), "{}", r.status);
    assert_eq!(r.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    let allowed = r.headers[header::ACCESS_CONTROL_ALLOW_HEADERS]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(allowed.contains("authorization"), "{allowed}");
    assert!(
        r.headers[header::ACCESS_CONTROL_ALLOW_METHODS]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    // Configured origins: only those.
    let app = RouterConfig::new()
        .frontend_origins(["https://app.example.com"])
        .router(t.admin.clone());
    let r = request(&app, preflight("https://app.example.com")).await;
    assert_eq!(
        r.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://app.example.com"
    );
    let r = request(&app, preflight("https://evil.example.com")).await;
    assert!(
        !r.headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
        "{:?}",
        r.headers
    );
    // A real request carries the header too; the admin API answers no CORS.
    let (key, _) = token(
        &t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    let get = |path: &str, key: &str| {
        Request::builder()
            .uri(path)
            .header(header::ORIGIN, "https://app.example.com")
            .header(header::AUTHORIZATION, key)
            .body(Body::empty())
            .unwrap()
    };
    let r = request(&app, get("/api/frontend", &key)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "https://app.example.com"
    );
    let r = request(&app, get(TOKENS, &t.secret)).await;
    assert!(!r.headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
}

#[tokio::test]
async fn frontend_metrics_and_registrations_count_as_the_backend_sdks_do() {
    let t = setup().await;
    flags(&t).await;
    let (key, _) = token(
        &t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    let now = chrono::Utc::now().to_rfc3339();
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/frontend/client/metrics",
            Some(
                &json!({"appName": "web", "instanceId": "browser", "impactMetrics": [],
                "bucket": {"start": now, "stop": now,
                    "toggles": {"f": {"yes": 3, "no": 1, "variants": {"blue": 3}}}}}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/frontend/client/register",
            Some(&json!({"appName": "web", "instanceId": "browser-1", "sdkVersion": "unleash-client-js:3.8.2",
                "interval": 15000, "started": 1_700_000_000_000_i64, "strategies": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    t.admin.flush_client_metrics().await.unwrap();
    let usage = ok(
        &t,
        Method::GET,
        "/api/admin/client-metrics/features/f",
        None,
    )
    .await;
    let hour = &usage["lastHourUsage"][0];
    assert_eq!(
        (
            hour["yes"].clone(),
            hour["no"].clone(),
            hour["environment"].clone()
        ),
        (json!(3), json!(1), json!("production")),
        "{usage}"
    );
    let app = ok(&t, Method::GET, "/api/admin/metrics/applications/web", None).await;
    assert!(app.to_string().contains("browser-1"), "{app}");
    // Metrics with a client key on the frontend route: 403.
    t.call(
        Method::POST,
        "/api/frontend/client/metrics",
        Some(&json!({"appName": "x"})),
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
}

#[tokio::test]
async fn hostile_contexts_are_400_naming_the_field_and_change_nothing() {
    let t = setup().await;
    flags(&t).await;
    let (key, _) = token(
        &t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    let detail_path = |r: &Reply| -> String {
        let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        body.to_string()
    };
    // 10,000 properties.
    let properties: serde_json::Map<String, Value> =
        (0..10_000).map(|i| (format!("p{i}"), json!("x"))).collect();
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/frontend",
            Some(&json!({"context": {"properties": properties}})),
        )
        .await;
    assert!(detail_path(&r).contains("properties"));
    // A query string past the limit (a 1 MB one cannot even be a URI in `http`; behind the
    // server hyper refuses it first, see scripts/frontend_e2e.cjs).
    let long = format!("/api/frontend?userId={}", "a".repeat(40_000));
    let r = get_as(&t, &key, &long).await;
    assert!(detail_path(&r).contains("query"));
    // Non-string values.
    for (context, path) in [
        (
            json!({"properties": {"plan": 7}}),
            "/context/properties/plan",
        ),
        (
            json!({"properties": {"plan": {"a": 1}}}),
            "/context/properties/plan",
        ),
        (json!({"userId": ["1"]}), "/context/userId"),
        (json!({"properties": "plan"}), "/context/properties"),
    ] {
        let r = t
            .call_as(
                &key,
                Method::POST,
                "/api/frontend",
                Some(&json!({ "context": context })),
            )
            .await;
        assert!(detail_path(&r).contains(path), "{path}: {}", r.text());
    }
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/frontend",
            Some(&json!({"context": 5})),
        )
        .await;
    assert!(detail_path(&r).contains("/context"));
    // A malformed currentTime, in the query and in the body.
    let r = get_as(&t, &key, "/api/frontend?currentTime=yesterday").await;
    assert!(detail_path(&r).contains("currentTime"));
    let r = t
        .call_as(
            &key,
            Method::POST,
            "/api/frontend/all",
            Some(&json!({"context": {"currentTime": "2024-13-45"}})),
        )
        .await;
    assert!(detail_path(&r).contains("currentTime"));
    // A well-formed one, and the same flags as before.
    let r = get_as(
        &t,
        &key,
        "/api/frontend?userId=1&currentTime=2024-01-31T12:00:00Z&properties[plan]=pro&tier=gold",
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&r.json()), ["f", "g"]);
    // Malformed JSON: 400.
    let r = t
        .raw(
            Method::POST,
            "/api/frontend",
            Some(&key),
            Some("application/json"),
            b"{\"context\":".to_vec(),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}

#[tokio::test]
async fn edge_validates_tokens_and_sends_metrics_in_bulk() {
    let t = setup().await;
    flags(&t).await;
    let (client, _) = token(
        &t,
        json!({"tokenName": "edge", "type": "client", "projects": ["p"], "environment": "production"}),
    )
    .await;
    let (frontend, _) = token(
        &t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    let r = t
        .raw(
            Method::POST,
            "/edge/validate",
            None,
            Some("application/json"),
            json!({"tokens": [client, "nope:production.abc", frontend, t.secret]})
                .to_string()
                .into_bytes(),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"tokens": [
            {"token": client, "type": "client", "projects": ["p"]},
            {"token": frontend, "type": "frontend", "projects": ["*"]},
        ]})
    );
    let now = chrono::Utc::now().to_rfc3339();
    let batch = json!({
        "applications": [{"appName": "behind-edge", "instanceId": "i-1", "environment": "production",
            "interval": 15, "started": now, "strategies": ["default"], "sdkVersion": "unleash-client-node:6.0.0"}],
        "metrics": [
            {"featureName": "f", "appName": "behind-edge", "environment": "production",
             "timestamp": now, "yes": 5, "no": 2, "variants": {}},
            {"featureName": "f", "appName": "behind-edge", "environment": "development",
             "timestamp": now, "yes": 100, "no": 100, "variants": {}},
        ]
    });
    let r = t
        .call_as(
            &client,
            Method::POST,
            "/api/client/metrics/bulk",
            Some(&batch),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    t.admin.flush_client_metrics().await.unwrap();
    let usage = ok(
        &t,
        Method::GET,
        "/api/admin/client-metrics/features/f",
        None,
    )
    .await;
    assert_eq!(
        usage["lastHourUsage"].as_array().unwrap().len(),
        1,
        "{usage}"
    );
    assert_eq!(usage["lastHourUsage"][0]["yes"], 5);
    let app = ok(
        &t,
        Method::GET,
        "/api/admin/metrics/applications/behind-edge",
        None,
    )
    .await;
    assert!(app.to_string().contains("i-1"), "{app}");
    // A frontend key may not send them.
    t.call_as(
        &frontend,
        Method::POST,
        "/api/client/metrics/bulk",
        Some(&batch),
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
}
