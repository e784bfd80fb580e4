//! The HTTP contract, through the router without a socket (`tower::ServiceExt::oneshot`):
//! every status of SPEC §4 and §7 for each operation, and the transport edges (401, 413, 415,
//! malformed JSON, unknown path, wrong method).

use axum::http::{Method, StatusCode};
use serde_json::json;
use test_support::http::*;
use toggle_admin::http::RouterConfig;
use toggle_admin::{Grant, KeyAccess, Permission};

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";

// ---- PATCH variants (SPEC §4.1) ----

#[tokio::test]
async fn patch_200_is_exactly_version_and_variants() {
    let t = setup().await;
    let patch = json!([
        {"op": "add", "path": "/-", "value": {"name": "blue", "weight": 0}},
        {"op": "add", "path": "/-", "value": {"name": "green", "weight": 0, "weightType": "variable",
            "stickiness": "userId", "payload": {"type": "string", "value": "g"}}}
    ]);
    let r = t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.content_type().as_deref(),
        Some("application/json; charset=utf-8")
    );
    assert_eq!(
        r.text(),
        r#"{"version":1,"variants":[{"name":"blue","weight":500,"weightType":"variable","stickiness":"default"},{"name":"green","weight":500,"weightType":"variable","stickiness":"userId","payload":{"type":"string","value":"g"}}]}"#
    );
    // Read back with GET: the same document.
    let back = t.call(Method::GET, VARIANTS, None).await;
    assert_eq!(back.status, StatusCode::OK);
    assert_eq!(back.body, r.body);
}

#[tokio::test]
async fn patch_accepts_json_with_parameters_and_json_patch_content_type() {
    let t = setup().await;
    for (i, content_type) in [
        "application/json; charset=utf-8",
        "application/json-patch+json",
        "Application/JSON",
    ]
    .into_iter()
    .enumerate()
    {
        let patch =
            json!([{"op": "add", "path": "/-", "value": {"name": format!("v{i}"), "weight": 0}}]);
        let r = t
            .raw(
                Method::PATCH,
                VARIANTS,
                Some(&t.secret),
                Some(content_type),
                patch.to_string().into_bytes(),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{content_type}: {}", r.text());
    }
}

#[tokio::test]
async fn patch_400_names_the_operation_and_path() {
    let t = setup().await;
    let cases = [
        (json!([{"op": "test", "path": "/0", "value": 1}]), "/0/op"),
        (json!({"op": "add", "path": "/-"}), ""),
        (json!([{"op": "remove", "path": "/3"}]), ""),
        (
            json!([{"op": "add", "path": "/-", "value": {"name": "x", "weight": "100"}}]),
            "/0/weight",
        ),
        (
            json!([{"op": "add", "path": "/-", "value": {"name": "x", "weight": 5, "weightType": "fix"}}]),
            "",
        ),
    ];
    for (patch, path) in cases {
        let r = t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
        let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        let details = body["details"].as_array().cloned().unwrap_or_default();
        assert!(!details.is_empty(), "{patch}: {body}");
        if !path.is_empty() {
            assert!(
                details.iter().any(|d| d["path"] == path),
                "{patch}: expected a detail at {path}: {body}"
            );
        }
    }
    // Nothing was written by the failed patches.
    let back = t.call(Method::GET, VARIANTS, None).await;
    assert_eq!(back.text(), r#"{"version":1,"variants":[]}"#);
}

#[tokio::test]
async fn patch_401_without_or_with_unknown_key() {
    let t = setup().await;
    let patch = json!([]).to_string().into_bytes();
    for key in [None, Some("not-a-key"), Some("")] {
        let r = t
            .raw(
                Method::PATCH,
                VARIANTS,
                key,
                Some("application/json"),
                patch.clone(),
            )
            .await;
        r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    }
    // A revoked key no longer works.
    let other = t
        .admin
        .create_api_key(&t.caller, "temp", KeyAccess::Admin)
        .await
        .unwrap();
    t.admin
        .revoke_api_key(&t.caller, other.info.id)
        .await
        .unwrap();
    let r = t
        .raw(
            Method::PATCH,
            VARIANTS,
            Some(&other.secret),
            Some("application/json"),
            patch,
        )
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

#[tokio::test]
async fn patch_403_names_the_missing_permission() {
    let t = setup().await;
    let limited = t
        .key_with(vec![Grant::in_environment(
            Permission::UpdateFeatureEnvironmentVariants,
            "p",
            "development",
        )])
        .await;
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    let r = t
        .call_as(&limited, Method::PATCH, VARIANTS, Some(&patch))
        .await;
    let body = r.error(StatusCode::FORBIDDEN, "NoAccessError");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS"),
        "{body}"
    );
    // The same key may patch where its grant reaches.
    let dev = VARIANTS.replace("production", "development");
    let ok = t.call_as(&limited, Method::PATCH, &dev, Some(&patch)).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
}

#[tokio::test]
async fn patch_404_for_each_missing_resource() {
    let t = setup().await;
    let patch = json!([]);
    for (path, says) in [
        (
            "/api/admin/projects/nope/features/f/environments/production/variants",
            "nope",
        ),
        (
            "/api/admin/projects/p/features/nope/environments/production/variants",
            "nope",
        ),
        (
            "/api/admin/projects/other/features/f/environments/production/variants",
            "\"f\"",
        ),
        (
            "/api/admin/projects/p/features/f/environments/nope/variants",
            "nope",
        ),
        (
            "/api/admin/projects/p/features/f/environments/staging/variants",
            "staging",
        ),
    ] {
        let r = t.call(Method::PATCH, path, Some(&patch)).await;
        let body = r.error(StatusCode::NOT_FOUND, "NotFoundError");
        assert!(
            body["message"].as_str().unwrap().contains(says),
            "{path}: {body}"
        );
    }
}

#[tokio::test]
async fn put_replaces_the_variants() {
    let t = setup().await;
    let body =
        json!([{"name": "a", "weight": 300, "weightType": "fix"}, {"name": "b", "weight": 0}]);
    let r = t.call(Method::PUT, VARIANTS, Some(&body)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.text(),
        r#"{"version":1,"variants":[{"name":"a","weight":300,"weightType":"fix","stickiness":"default"},{"name":"b","weight":700,"weightType":"variable","stickiness":"default"}]}"#
    );
    let bad = t
        .call(Method::PUT, VARIANTS, Some(&json!({"name": "a"})))
        .await;
    bad.error(StatusCode::BAD_REQUEST, "ValidationError");
}

// ---- Transport edges ----

#[tokio::test]
async fn content_type_415() {
    let t = setup().await;
    let body = b"[]".to_vec();
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let r = t
            .raw(
                Method::PATCH,
                VARIANTS,
                Some(&t.secret),
                content_type,
                body.clone(),
            )
            .await;
        let error = r.error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "ContentTypeError");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("application/json")
        );
    }
    // json-patch+json is for the PATCH only.
    let r = t
        .raw(
            Method::POST,
            "/api/admin/projects",
            Some(&t.secret),
            Some("application/json-patch+json"),
            br#"{"id":"x","name":"X"}"#.to_vec(),
        )
        .await;
    r.error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "ContentTypeError");
}

#[tokio::test]
async fn malformed_json_400_names_the_position() {
    let t = setup().await;
    for body in [&b"[{\"op\": \"add\","[..], b"", b"[] []", b"{'a': 1}"] {
        let r = t
            .raw(
                Method::PATCH,
                VARIANTS,
                Some(&t.secret),
                Some("application/json"),
                body.to_vec(),
            )
            .await;
        let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("not valid JSON"), "{message}");
        assert!(message.contains("line 1 column"), "{message}");
    }
}

#[tokio::test]
async fn wrong_body_type_400_names_the_path() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "n", "impressionData": "yes"})),
        )
        .await;
    let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(error["details"][0]["path"], "/impressionData", "{error}");
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!(["n"])),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // An array where an object belongs, nested too: serde would take it by position.
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects",
            Some(&json!({"id": "q", "name": "Q", "featureNaming": ["q-.*"]})),
        )
        .await;
    let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(error["details"][0]["path"], "/featureNaming", "{error}");
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "n", "unknown": 1})),
        )
        .await;
    let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(
        error["message"].as_str().unwrap().contains("unknown"),
        "{error}"
    );
}

#[tokio::test]
async fn body_over_the_limit_413() {
    let t = setup().await;
    let app = RouterConfig::new().body_limit(1024).router(t.admin.clone());
    let big =
        json!([{"op": "add", "path": "/-", "value": {"name": "x".repeat(2000), "weight": 0}}]);
    let r = send(
        app.clone(),
        Method::PATCH,
        VARIANTS,
        Some(&t.secret),
        Some("application/json"),
        big.to_string().into_bytes(),
    )
    .await;
    r.error(StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge");
    // Under the limit, the same router answers normally.
    let small = json!([{"op": "add", "path": "/-", "value": {"name": "x", "weight": 0}}]);
    let r = send(
        app,
        Method::PATCH,
        VARIANTS,
        Some(&t.secret),
        Some("application/json"),
        small.to_string().into_bytes(),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
}

#[tokio::test]
async fn default_limit_is_16_mib() {
    let t = setup().await;
    let mut body = b"[".to_vec();
    body.resize(16 * 1024 * 1024 + 10, b' ');
    body.push(b']');
    let r = t
        .raw(
            Method::PATCH,
            VARIANTS,
            Some(&t.secret),
            Some("application/json"),
            body,
        )
        .await;
    r.error(StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge");
}

#[tokio::test]
async fn unknown_path_404_and_wrong_method_405() {
    let t = setup().await;
    // The router owns the paths under /api/ (paths elsewhere are the host app's: see
    // `embed.rs` beside this file).
    for path in [
        "/api/admin/nothing-here",
        "/api",
        "/api/admin/projects/p/features/f/extra/x",
    ] {
        let r = t.call(Method::GET, path, None).await;
        let body = r.error(StatusCode::NOT_FOUND, "NotFoundError");
        assert!(body["message"].as_str().unwrap().contains(path), "{body}");
    }
    let r = t.call(Method::DELETE, VARIANTS, None).await;
    r.error(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowedError");
    let r = t
        .call(Method::GET, "/api/admin/features-batch/import", None)
        .await;
    assert!(
        r.status == StatusCode::METHOD_NOT_ALLOWED || r.status == StatusCode::NOT_FOUND,
        "{}",
        r.status
    );
    r.error(
        r.status,
        if r.status == StatusCode::NOT_FOUND {
            "NotFoundError"
        } else {
            "MethodNotAllowedError"
        },
    );
}

#[tokio::test]
async fn invalid_path_parameter_is_400_not_500() {
    let t = setup().await;
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/%FF/features/f/environments/production/variants",
            None,
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/user-admin/notanumber/tokens/x",
            None,
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}
