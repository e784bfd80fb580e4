//! The HTTP contract of the import (SPEC §4.2), its dry run and the export, through the
//! router (`oneshot`).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::{Grant, Permission};

const IMPORT: &str = "/api/admin/features-batch/import";
const EXPORT: &str = "/api/admin/features-batch/export";
const VALIDATE: &str = "/api/admin/features-batch/validate";

/// An Unleash 6.10.1 export document.
pub fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/../tests/fixtures/unleash-6.10.1/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn import_body(data: Value) -> Value {
    json!({"project": "p", "environment": "development", "data": data})
}

#[tokio::test]
async fn import_200_no_body_then_export_gives_it_back() {
    let t = setup().await;
    // Segments are referred to by name and must exist, as in Unleash.
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "ex-seg"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    for name in [
        "export-two-features.json",
        "export-strategies-constraints.json",
        "export-segment-context-dependency.json",
    ] {
        let data = fixture(name);
        let r = t
            .call(Method::POST, IMPORT, Some(&import_body(data.clone())))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{name}: {}", r.text());
        assert!(r.body.is_empty(), "no body: {}", r.text());
        assert!(r.content_type().is_none());
        let names: Vec<String> = data["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_owned())
            .collect();
        let r = t
            .call(
                Method::POST,
                EXPORT,
                Some(&json!({"project": "p", "environment": "development", "features": names})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{name}: {}", r.text());
        let exported = r.json();
        let exported_names: Vec<&str> = exported["features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(exported_names, names, "{name}");
        // Every imported strategy comes back (an enabled feature without one gets the
        // default flexibleRollout on top, as in Unleash).
        assert!(
            exported["featureStrategies"].as_array().unwrap().len()
                >= data["featureStrategies"].as_array().unwrap().len(),
            "{name}"
        );
        // Export → import → export is the identity.
        let r = t
            .call(Method::POST, IMPORT, Some(&import_body(exported.clone())))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        // Without a project, the features' own project is exported.
        let again = t
            .call(
                Method::POST,
                EXPORT,
                Some(&json!({"environment": "development", "features": names})),
            )
            .await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.text());
        let mut again = again.json();
        let mut first = exported.clone();
        for doc in [&mut again, &mut first] {
            for s in doc["featureStrategies"].as_array_mut().unwrap() {
                s["id"] = Value::Null;
            }
        }
        assert_eq!(again, first, "{name}");
    }
    let r = t
        .call(Method::GET, "/api/admin/projects/p/features/ex-a", None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let dev = r.json()["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "development")
        .cloned()
        .unwrap();
    assert_eq!(dev["enabled"], true);
}

#[tokio::test]
async fn import_errors() {
    let t = setup().await;
    let good = import_body(fixture("export-two-features.json"));
    // 401
    let r = t
        .raw(
            Method::POST,
            IMPORT,
            None,
            Some("application/json"),
            good.to_string().into_bytes(),
        )
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    // 403, naming what is missing.
    let limited = t
        .key_with(vec![Grant::everywhere(Permission::UpdateFeature)])
        .await;
    let r = t.call_as(&limited, Method::POST, IMPORT, Some(&good)).await;
    let body = r.error(StatusCode::FORBIDDEN, "NoAccessError");
    assert!(
        body["message"].as_str().unwrap().contains("CREATE_FEATURE"),
        "{body}"
    );
    // 404
    let mut missing = good.clone();
    missing["project"] = json!("nope");
    let r = t.call(Method::POST, IMPORT, Some(&missing)).await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    // 400: wrong shapes, with paths.
    for bad in [
        json!([]),
        json!({"project": "p", "environment": "development"}),
        json!({"project": "p", "environment": "development", "data": {"features": "x", "featureStrategies": [], "tagTypes": []}}),
    ] {
        let r = t.call(Method::POST, IMPORT, Some(&bad)).await;
        let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert!(!body["details"].as_array().unwrap().is_empty(), "{body}");
    }
    // 415 and malformed JSON
    let r = t
        .raw(
            Method::POST,
            IMPORT,
            Some(&t.secret),
            Some("text/plain"),
            good.to_string().into_bytes(),
        )
        .await;
    r.error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "ContentTypeError");
    let r = t
        .raw(
            Method::POST,
            IMPORT,
            Some(&t.secret),
            Some("application/json"),
            b"{\"project\":".to_vec(),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Nothing was imported by the failures.
    let r = t
        .call(Method::GET, "/api/admin/projects/p/features/ex-a", None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
}

#[tokio::test]
async fn validate_is_a_dry_run() {
    let t = setup().await;
    let good = import_body(fixture("export-two-features.json"));
    let r = t.call(Method::POST, VALIDATE, Some(&good)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["errors"], json!([]));
    let r = t
        .call(Method::GET, "/api/admin/projects/p/features/ex-a", None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    let mut bad = good.clone();
    bad["data"]["featureStrategies"][0]["name"] = json!("no-such-strategy");
    let r = t.call(Method::POST, VALIDATE, Some(&bad)).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(
        !r.json()["errors"].as_array().unwrap().is_empty(),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn export_errors() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            EXPORT,
            Some(&json!({"project": "p", "environment": "development", "features": ["nope"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["features"], json!([]));
    let r = t
        .call(
            Method::POST,
            EXPORT,
            Some(&json!({"environment": "development", "tag": "no-colon"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(Method::POST, EXPORT, Some(&json!({"project": "p"})))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Features of several projects, and every feature: 200, as in Unleash; `downloadFile`
    // answers as an attachment.
    let r = t
        .call(
            Method::POST,
            EXPORT,
            Some(
                &json!({"environment": "production", "features": ["f", "g"], "downloadFile": true}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["features"].as_array().unwrap().len(), 2);
    let disposition = r.headers[axum::http::header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"export-"),
        "{disposition}"
    );
    let r = t
        .call(
            Method::POST,
            EXPORT,
            Some(&json!({"environment": "production", "features": []})),
        )
        .await;
    assert_eq!(
        r.json()["features"].as_array().unwrap().len(),
        2,
        "{}",
        r.text()
    );
    assert!(
        r.headers
            .get(axum::http::header::CONTENT_DISPOSITION)
            .is_none()
    );
}
