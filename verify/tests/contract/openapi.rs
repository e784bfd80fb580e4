//! The OpenAPI document (feature `openapi`): it lists every route of the router, it is a valid
//! OpenAPI 3.1 document, and the router serves it without a key.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use toggle_admin::{MemoryStore, ToggleAdmin};
use tower::ServiceExt;

fn document() -> Value {
    serde_json::to_value(toggle_admin::http::openapi()).unwrap()
}

fn router() -> axum::Router {
    toggle_admin::http::router(ToggleAdmin::new(MemoryStore::new()))
}

/// `path` with every `{param}` replaced by a value that routes (`1`).
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "1"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The methods the router answers at `path`: the `Allow` header of the 405 that a method no
/// route uses (`TRACE`) gets.
async fn methods_at(path: &str) -> BTreeSet<String> {
    let response = router()
        .oneshot(
            Request::builder()
                .method(Method::TRACE)
                .uri(concrete(path))
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::METHOD_NOT_ALLOWED,
        "TRACE {path}"
    );
    let allow = response
        .headers()
        .get(header::ALLOW)
        .unwrap_or_else(|| panic!("no Allow header at {path}"))
        .to_str()
        .unwrap()
        .to_owned();
    allow
        .split(',')
        .map(|m| m.trim().to_ascii_lowercase())
        // axum answers HEAD wherever GET is routed; OPTIONS is routed only for CORS
        // preflights (the frontend API), which are no operation of the API.
        .filter(|m| !m.is_empty() && m != "head" && m != "options")
        .collect()
}

#[tokio::test]
async fn every_route_of_the_router_is_documented() {
    let doc = document();
    let paths = doc["paths"].as_object().expect("paths");
    let mut routes = 0;
    let mut missing = Vec::new();
    // Each route is declared once, by its handler's annotation: every documented path is
    // routed with exactly its documented methods.
    for path in paths.keys().cloned().collect::<Vec<_>>() {
        for method in methods_at(&path).await {
            routes += 1;
            let operation = &paths.get(&path).unwrap_or(&Value::Null)[&method];
            if !operation.is_object() {
                missing.push(format!("{} {path}", method.to_ascii_uppercase()));
                continue;
            }
            // Every operation documents its success and error responses with bodies (the
            // document itself needs no key and cannot fail).
            let responses = operation["responses"].as_object().unwrap();
            let errors: &[&str] = if path == "/api/admin/openapi.json" {
                &[]
            } else {
                &["400", "401", "403", "404", "409", "500", "503", "507"]
            };
            // OFREP answers its errors in OpenFeature's shape (`{key?, errorCode,
            // errorDetails}`), not Unleash's: each documented error is JSON.
            if path.starts_with("/ofrep/") {
                for (status, response) in responses.iter().filter(|(s, _)| s.starts_with('4')) {
                    assert!(
                        response["content"]["application/json"].is_object(),
                        "{method} {path} {status}: an OFREP error is JSON"
                    );
                }
                continue;
            }
            for status in errors {
                let schema = &responses[*status]["content"]["application/json"]["schema"];
                assert_eq!(
                    schema["$ref"], "#/components/schemas/ErrorBody",
                    "{method} {path} {status}"
                );
            }
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{method} {path}: no success response"
            );
        }
    }
    assert!(
        missing.is_empty(),
        "routes not in the document: {missing:?}"
    );
    // And nothing documented that the router does not route.
    let documented: usize = paths
        .values()
        .map(|item| {
            item.as_object()
                .unwrap()
                .keys()
                .filter(|k| ["get", "put", "post", "delete", "patch"].contains(&k.as_str()))
                .count()
        })
        .sum();
    assert_eq!(
        documented, routes,
        "the document lists routes the router does not have"
    );
    assert!(routes >= 60, "only {routes} routes found");
}

#[test]
fn security_scheme_is_the_authorization_api_key() {
    let doc = document();
    let scheme = &doc["components"]["securitySchemes"]["apiKey"];
    assert_eq!(scheme["type"], "apiKey");
    assert_eq!(scheme["in"], "header");
    assert_eq!(scheme["name"], "Authorization");
    assert_eq!(doc["security"][0]["apiKey"], serde_json::json!([]));
    // The document itself needs no key.
    assert_eq!(
        doc["paths"]["/api/admin/openapi.json"]["get"]["security"],
        serde_json::json!([{}])
    );
}

#[test]
fn limits_are_in_the_schemas() {
    let doc = document();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["Variant"]["properties"]["weight"]["maximum"], 1000);
    assert_eq!(
        schemas["StrategyVariant"]["properties"]["weight"]["maximum"],
        1000
    );
    assert_eq!(schemas["RoleAccess"]["properties"]["id"]["minimum"], 1);
    let required = schemas["ErrorBody"]["required"].as_array().unwrap();
    for field in ["id", "name", "message"] {
        assert!(required.contains(&Value::from(field)), "{field}");
    }
}

/// Every `$ref` resolves to a schema in `components`.
#[test]
fn every_reference_resolves() {
    fn walk(value: &Value, schemas: &serde_json::Map<String, Value>, bad: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    let name = r.trim_start_matches("#/components/schemas/");
                    if !schemas.contains_key(name) {
                        bad.push(r.clone());
                    }
                }
                map.values().for_each(|v| walk(v, schemas, bad));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, schemas, bad)),
            _ => {}
        }
    }
    let doc = document();
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    let mut bad = Vec::new();
    walk(&doc, schemas, &mut bad);
    assert!(bad.is_empty(), "unresolved references: {bad:?}");
}

/// The document validates against the official OpenAPI 3.1 schema (a copy in
/// `tests/fixtures/openapi/`, so that the check runs offline).
#[test]
fn document_is_valid_openapi_3_1() {
    let meta: Value = serde_json::from_str(include_str!(
        "../../../tests/fixtures/openapi/schema-3.1.json"
    ))
    .unwrap();
    let validator = jsonschema::validator_for(&meta).expect("the OpenAPI 3.1 schema compiles");
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let errors: Vec<String> = validator
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[tokio::test]
async fn document_is_served_without_a_key() {
    let response = router()
        .oneshot(
            Request::builder()
                .uri("/api/admin/openapi.json")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers()[header::CONTENT_TYPE].to_str().unwrap();
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let served: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(served, document());
}
