//! Hostile input over HTTP: each case gets a clear 4xx with our error body, and the
//! router keeps serving a normal request afterwards. `robustness.rs` sweeps every route
//! with small hostile bodies; this file is about the big and the pathological ones.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";
const IMPORT: &str = "/api/admin/features-batch/import";
const VALIDATE: &str = "/api/admin/features-batch/validate";
const JSON: Option<&str> = Some("application/json");

/// The router still serves a normal request, and nothing was written by the hostile one.
async fn still_serving(t: &Setup) {
    let r = t.call(Method::GET, VARIANTS, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["variants"], json!([]), "nothing was written");
    let r = t.call(Method::GET, "/api/admin/projects/p", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

async fn send_bytes(t: &Setup, method: Method, path: &str, body: Vec<u8>) -> Reply {
    t.raw(method, path, Some(&t.secret), JSON, body).await
}

fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_objects(depth: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

#[tokio::test]
async fn json_100_levels_deep_is_a_400() {
    let t = setup().await;
    // As the whole body: a patch must be an array of operation objects.
    let r = send_bytes(&t, Method::PATCH, VARIANTS, nested_arrays(100).into_bytes()).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Deep inside an otherwise valid operation: the variant is not a valid variant.
    let body = format!(
        r#"[{{"op":"add","path":"/-","value":{{"name":"a","weight":0,"payload":{}}}}}]"#,
        nested_objects(100)
    );
    let r = send_bytes(&t, Method::PATCH, VARIANTS, body.into_bytes()).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Deep inside an import document.
    let body = format!(
        r#"{{"project":"p","environment":"production","data":{{"features":[{{"name":"x","deep":{}}}]}}}}"#,
        nested_objects(100)
    );
    for path in [IMPORT, VALIDATE] {
        let r = send_bytes(&t, Method::POST, path, body.clone().into_bytes()).await;
        assert!(
            r.status == StatusCode::BAD_REQUEST || r.status == StatusCode::OK,
            "{path}: {} {}",
            r.status,
            r.text()
        );
        if path == IMPORT {
            r.error(StatusCode::BAD_REQUEST, "ValidationError");
        }
    }
    // Deep inside a typed body (an object member).
    let body = format!(
        r#"{{"id":"deep","name":"Deep","description":{}}}"#,
        nested_objects(100)
    );
    let r = send_bytes(&t, Method::POST, "/api/admin/projects", body.into_bytes()).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    still_serving(&t).await;
}

#[tokio::test]
async fn json_deeper_than_the_parser_allows_is_a_400_not_a_stack_overflow() {
    let t = setup().await;
    for depth in [129, 1_000, 100_000] {
        for (method, path) in [
            (Method::PATCH, VARIANTS),
            (Method::PUT, VARIANTS),
            (Method::POST, IMPORT),
            (Method::POST, "/api/admin/projects"),
        ] {
            let r = send_bytes(&t, method.clone(), path, nested_arrays(depth).into_bytes()).await;
            let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
            if depth > 128 {
                assert!(
                    body["message"]
                        .as_str()
                        .unwrap()
                        .contains("recursion limit"),
                    "{method} {path} depth {depth}: {body}"
                );
            }
        }
    }
    still_serving(&t).await;
}

#[tokio::test]
async fn a_patch_of_10_000_operations_is_a_400() {
    let t = setup().await;
    // 10,000 variants: more than the variant limit, refused as a whole.
    let ops: Vec<Value> = (0..10_000)
        .map(
            |i| json!({"op": "add", "path": "/-", "value": {"name": format!("v{i}"), "weight": 0}}),
        )
        .collect();
    let r = t
        .call(Method::PATCH, VARIANTS, Some(&Value::Array(ops)))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // 10,000 operations each failing (remove of a variant that is not there).
    let ops: Vec<Value> = (0..10_000)
        .map(|_| json!({"op": "remove", "path": "/0"}))
        .collect();
    let r = t
        .call(Method::PATCH, VARIANTS, Some(&Value::Array(ops)))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    still_serving(&t).await;
}

#[tokio::test]
async fn a_50_mb_body_is_a_413() {
    let t = setup().await;
    // A valid JSON document (one long string) so that only the size can be the problem.
    let mut body = Vec::with_capacity(50 * 1024 * 1024 + 2);
    body.push(b'"');
    body.resize(50 * 1024 * 1024 + 1, b'a');
    body.push(b'"');
    for (method, path) in [
        (Method::PATCH, VARIANTS),
        (Method::PUT, VARIANTS),
        (Method::POST, IMPORT),
        (Method::POST, "/api/admin/projects"),
    ] {
        let r = send_bytes(&t, method, path, body.clone()).await;
        r.error(StatusCode::PAYLOAD_TOO_LARGE, "PayloadTooLarge");
    }
    still_serving(&t).await;
}

#[tokio::test]
async fn invalid_utf8_is_a_400() {
    let t = setup().await;
    let bodies: [&[u8]; 3] = [
        b"\xff\xfe\xfd",
        b"[{\"op\":\"add\",\"path\":\"/-\",\"value\":{\"name\":\"\xc3\x28\",\"weight\":0}}]",
        b"{\"id\":\"x\xed\xa0\x80\",\"name\":\"X\"}",
    ];
    for body in bodies {
        for (method, path) in [
            (Method::PATCH, VARIANTS),
            (Method::POST, IMPORT),
            (Method::POST, "/api/admin/projects"),
        ] {
            let r = send_bytes(&t, method.clone(), path, body.to_vec()).await;
            r.error(StatusCode::BAD_REQUEST, "ValidationError");
        }
    }
    // Invalid UTF-8 percent-encoded in a path segment.
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/%FF%FE/environments/production/variants",
            None,
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    still_serving(&t).await;
}

#[tokio::test]
async fn a_nul_in_a_path_segment_is_a_clear_4xx() {
    let t = setup().await;
    // Reading: a path parameter with a control character names nothing that can exist: 400
    // naming the parameter (a 404 would say it does not exist).
    for path in [
        "/api/admin/projects/p/features/f%00/environments/production/variants",
        "/api/admin/projects/p%00/features/f/environments/production/variants",
        "/api/admin/projects/p/features/f/environments/production%00/variants",
        "/api/admin/projects/p/features/f%00",
        "/api/admin/metrics/applications/app%00",
    ] {
        let r = t.call(Method::GET, path, None).await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
    // Writing: the same.
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    let r = t
        .call(
            Method::PATCH,
            "/api/admin/projects/p/features/f%00/environments/production/variants",
            Some(&patch),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Registering an application whose name holds a NUL: refused as a name.
    let r = t
        .call(
            Method::POST,
            "/api/admin/metrics/applications/app%00",
            Some(&json!({})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // A NUL in a body's name.
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "x\u{0}y"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    still_serving(&t).await;
}

#[tokio::test]
async fn a_feature_name_of_10_000_characters_is_a_clear_4xx() {
    let t = setup().await;
    let long = "x".repeat(10_000);
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": long})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(
            Method::GET,
            &format!("/api/admin/projects/p/features/{long}/environments/production/variants"),
            None,
        )
        .await;
    // Longer than any name can be: 400 naming the parameter (a 404 would say it does not exist).
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(
            Method::PATCH,
            &format!("/api/admin/projects/p/features/{long}/environments/production/variants"),
            Some(&json!([])),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // In an import: refused by the name rules, nothing written.
    let body = json!({"project": "p", "environment": "production",
        "data": {"features": [{"name": long}], "featureStrategies": [], "tagTypes": []}});
    let r = t.call(Method::POST, IMPORT, Some(&body)).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // As a variant name.
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": long, "weight": 0}}]);
    let r = t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    still_serving(&t).await;
}

#[tokio::test]
async fn weights_like_1e400_or_minus_0_are_a_400() {
    let t = setup().await;
    for weight in [
        "1e400",
        "-1e400",
        "-0",
        "-0.0",
        "0.5",
        "1e3",
        "4294967296",
        "-1",
    ] {
        let body = format!(
            r#"[{{"op":"add","path":"/-","value":{{"name":"a","weightType":"fix","weight":{weight}}}}}]"#
        );
        let r = send_bytes(&t, Method::PATCH, VARIANTS, body.into_bytes()).await;
        let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert!(error["message"].is_string(), "{weight}: {error}");
        let body = format!(r#"[{{"name":"a","weightType":"fix","weight":{weight}}}]"#);
        let r = send_bytes(&t, Method::PUT, VARIANTS, body.into_bytes()).await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
    still_serving(&t).await;
}

#[tokio::test]
async fn duplicate_json_keys_are_a_400() {
    let t = setup().await;
    let cases: [(Method, &str, &str); 5] = [
        (
            Method::PATCH,
            VARIANTS,
            r#"[{"op":"add","path":"/-","path":"/0","value":{"name":"a","weight":0}}]"#,
        ),
        (
            Method::PATCH,
            VARIANTS,
            r#"[{"op":"add","path":"/-","value":{"name":"a","name":"b","weight":0}}]"#,
        ),
        (
            Method::PUT,
            VARIANTS,
            r#"[{"name":"a","weight":0,"weight":1}]"#,
        ),
        (
            Method::POST,
            IMPORT,
            r#"{"project":"p","project":"other","environment":"production","data":{"features":[]}}"#,
        ),
        (
            Method::POST,
            "/api/admin/projects",
            r#"{"id":"dup","name":"A","name":"B"}"#,
        ),
    ];
    for (method, path, body) in cases {
        let r = send_bytes(&t, method.clone(), path, body.as_bytes().to_vec()).await;
        let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert!(
            error["message"].as_str().unwrap().contains("duplicate"),
            "{method} {path}: {error}"
        );
    }
    let r = t.call(Method::GET, "/api/admin/projects/dup", None).await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    still_serving(&t).await;
}
