//! Every operation of the router that takes a body, found in its own OpenAPI document (so a
//! new route is covered the day it is routed), sent malformed bodies shaped from its schema:
//! never a 5xx, and a refusal changes nothing (the store's records and the event log are
//! as before). `robustness.rs` sweeps a fixed list of paths with small hostile bodies; this
//! one follows the document.

use axum::http::Method;
use serde_json::{Map, Value, json};
use test_support::facade::all_events;
use test_support::http::*;
use test_support::import::state;

/// Operations left out, and why.
const LEFT_OUT: &[(&str, &str)] = &[
    // A body that turns maintenance mode on makes every later write a deliberate 503.
    ("post", "/api/admin/maintenance"),
];

/// A value for a path parameter: something that exists in the set-up where it matters.
fn parameter(name: &str) -> &'static str {
    match name {
        "projectId" | "project" => "p",
        "featureName" | "feature" | "child" | "parent" => "f",
        "environment" | "env" => "production",
        "id" | "userId" | "segmentId" | "strategyId" => "1",
        "type" | "tagType" => "simple",
        "value" => "v",
        _ => "x",
    }
}

fn fill_path(path: &str) -> String {
    path.split('/')
        .map(
            |segment| match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => parameter(name).to_owned(),
                None => segment.to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// `schema` with every `$ref` into `#/components/schemas/` resolved, one level at a time.
fn resolve<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(reference) => reference
            .strip_prefix("#/components/schemas/")
            .and_then(|name| document["components"]["schemas"].get(name))
            .unwrap_or(schema),
        None => schema,
    }
}

/// A value of the wrong kind for `schema`.
fn wrong_kind(document: &Value, schema: &Value) -> Value {
    let schema = resolve(document, schema);
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if kinds.contains(&"string") {
        json!(12345)
    } else if kinds.contains(&"integer") || kinds.contains(&"number") {
        json!("not a number")
    } else if kinds.contains(&"array") {
        json!({"not": "an array"})
    } else if kinds.contains(&"boolean") {
        json!("yes")
    } else {
        json!([1, 2, 3])
    }
}

/// Malformed bodies for an operation whose body has `schema`: generic shapes, then the
/// schema's object with each property in turn of the wrong kind, an overlong string, a NUL,
/// a negative number and one past every integer type.
fn malformed(document: &Value, schema: &Value) -> Vec<Value> {
    let mut bodies = vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!("text"),
        json!([]),
        json!([{}]),
        json!({}),
        json!({"": null}),
    ];
    let schema = resolve(document, schema);
    let item = resolve(document, &schema["items"]);
    let (object, in_array) = if schema["properties"].is_object() {
        (schema, false)
    } else if item["properties"].is_object() {
        (item, true)
    } else {
        return bodies;
    };
    let Some(properties) = object["properties"].as_object() else {
        return bodies;
    };
    let skeleton: Map<String, Value> = properties
        .keys()
        .map(|k| (k.clone(), json!("name-like-1")))
        .collect();
    let wrap = |body: Map<String, Value>| {
        if in_array {
            json!([Value::Object(body)])
        } else {
            Value::Object(body)
        }
    };
    for (name, property) in properties {
        for value in [
            wrong_kind(document, property),
            json!("x".repeat(10_000)),
            json!("nul\u{0}inside"),
            json!(-1),
            json!(1e300),
            json!(18_446_744_073_709_551_615u64),
            Value::Null,
        ] {
            let mut body = skeleton.clone();
            body.insert(name.clone(), value);
            bodies.push(wrap(body));
        }
    }
    bodies
}

/// What a refusal must leave as it was: every record but the keys', and the event log.
async fn fingerprint(t: &Setup) -> (Value, usize) {
    (
        state(&t.admin).await,
        all_events(&t.admin, &t.caller).await.len(),
    )
}

/// A new key of `kind` for project `p` in production.
async fn key(t: &Setup, kind: &str) -> String {
    let body =
        json!({"tokenName": kind, "type": kind, "environment": "production", "projects": ["p"]});
    let r = t
        .call(Method::POST, "/api/admin/api-tokens", Some(&body))
        .await;
    r.json()["secret"].as_str().unwrap().to_owned()
}

/// Whether `error` is the error body its route answers: OFREP's `{errorCode, …}` on the
/// OFREP routes, ours (`{id, name, message, details?}`) everywhere else.
fn is_error_body(path: &str, error: &Value) -> bool {
    if path.starts_with("/ofrep/") {
        error["errorCode"].is_string()
    } else {
        ["id", "name", "message"]
            .iter()
            .all(|m| error[m].is_string())
    }
}

#[tokio::test]
async fn no_malformed_body_gets_a_5xx_or_changes_anything() {
    let t = setup().await;
    // The SDK routes take SDK keys: with the admin key they would refuse every body unread.
    let frontend = key(&t, "frontend").await;
    let client = key(&t, "client").await;
    let document = serde_json::to_value(toggle_admin::http::openapi()).unwrap();
    let paths = document["paths"].as_object().unwrap();
    let (mut operations, mut requests) = (0, 0);
    let mut failures = Vec::new();
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            if LEFT_OUT.contains(&(method.as_str(), path.as_str())) {
                continue;
            }
            let Some(schema) = operation["requestBody"]["content"]
                .as_object()
                .and_then(|content| content.values().next())
                .map(|media| media["schema"].clone())
            else {
                continue;
            };
            let method: Method = method.to_uppercase().parse().unwrap();
            let target = fill_path(path);
            operations += 1;
            for body in malformed(&document, &schema) {
                requests += 1;
                let before = fingerprint(&t).await;
                let secret = if target.starts_with("/ofrep/") || target.starts_with("/api/frontend")
                {
                    &frontend
                } else if target.starts_with("/api/client/") {
                    &client
                } else {
                    &t.secret
                };
                let r = t
                    .call_as(secret, method.clone(), &target, Some(&body))
                    .await;
                if r.status.is_server_error() {
                    failures.push(format!(
                        "{method} {target} {body}: {} {}",
                        r.status,
                        r.text()
                    ));
                } else if r.status.is_client_error() {
                    if !is_error_body(&target, &r.json()) {
                        failures.push(format!(
                            "{method} {target} {body}: {} without its error body: {}",
                            r.status,
                            r.text()
                        ));
                    }
                    if fingerprint(&t).await != before {
                        failures.push(format!(
                            "{method} {target} {body}: {} but something changed",
                            r.status
                        ));
                    }
                }
            }
        }
    }
    assert!(operations >= 50, "only {operations} operations take a body");
    println!("{operations} operations, {requests} malformed bodies");
    assert!(
        failures.is_empty(),
        "{} of {requests} requests:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|f| f.chars().take(400).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
