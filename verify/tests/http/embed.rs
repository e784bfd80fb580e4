//! The router merges into a host application that has its own routes and fallback: each side
//! answers its own paths.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use axum::routing::get;
use http_body_util::BodyExt;
use serde_json::Value;
use toggle_admin::{MemoryStore, ToggleAdmin};
use tower::ServiceExt;

async fn host_fallback() -> (StatusCode, &'static str) {
    (StatusCode::IM_A_TEAPOT, "the host's own fallback")
}

/// A host app with its own route and fallback, and the admin API merged in.
fn host() -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .fallback(host_fallback)
        .merge(toggle_admin::http::router(ToggleAdmin::new(
            MemoryStore::new(),
        )))
}

async fn call(method: Method, uri: &str) -> (StatusCode, Option<String>, String) {
    let response = host()
        .oneshot(
            Request::builder()
                .method(method)
                .uri(uri)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

#[tokio::test]
async fn host_routes_and_fallback_answer_host_paths() {
    assert_eq!(
        call(Method::GET, "/health").await,
        (
            StatusCode::OK,
            Some("text/plain; charset=utf-8".into()),
            "ok".into()
        )
    );
    for path in ["/", "/nowhere", "/apis", "/health/x"] {
        let (status, _, body) = call(Method::GET, path).await;
        assert_eq!(status, StatusCode::IM_A_TEAPOT, "{path}");
        assert_eq!(body, "the host's own fallback", "{path}");
    }
}

#[tokio::test]
async fn the_admin_api_answers_its_paths_with_json_errors() {
    // A route of the admin API: no key → 401 in Unleash's error shape.
    let (status, _, body) = call(Method::GET, "/api/admin/events").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["name"], "AuthenticationRequired");

    // Unknown paths under /api/ are the admin API's: JSON 404 naming the path.
    for path in ["/api", "/api/nowhere", "/api/admin/nowhere/deeper"] {
        let (status, content_type, body) = call(Method::GET, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(content_type.unwrap().starts_with("application/json"));
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["name"], "NotFoundError", "{path}");
        assert!(
            body["message"].as_str().unwrap().contains(path),
            "{path}: {body}"
        );
    }

    // A known path with another method: JSON 405.
    let (status, _, body) = call(Method::DELETE, "/api/admin/events").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["name"], "MethodNotAllowedError");
}

#[tokio::test]
async fn the_router_alone_answers_only_under_api() {
    // Without a host fallback, a path outside /api/ gets axum's default empty 404, not the
    // admin API's JSON one: the router claims only its own paths.
    let router = toggle_admin::http::router(ToggleAdmin::new(MemoryStore::new()));
    let response = router
        .oneshot(
            Request::builder()
                .uri("/elsewhere")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert!(body.is_empty());
}
