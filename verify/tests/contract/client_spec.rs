//! Unleash's client specification as a contract test.
//!
//! For each specification (tests/fixtures/client-specification, 01–18), the state is created
//! through the admin API as an administrator would create it in Unleash (environment
//! `production` of project `default`: features, strategies with constraints, segments and
//! variants, environment variants, dependencies, on/off), read back from
//! `GET /api/client/features` with a client key, and every test of the specification is
//! evaluated with `unleash-yggdrasil` (Unleash's evaluation engine) and compared with the
//! expected result.
//!
//! The same tests go through the frontend API too: with a frontend key for `production`,
//! each test's context is posted to `POST /api/frontend/all` and the flag's `enabled` and
//! `variant` in the answer must be the expected ones. Every test the client path passes
//! passes there.
//!
//! What the admin API refuses is listed, with the reason, and the tests of the features it
//! concerns are skipped; the list is pinned, so that anything newly refused fails the test.

use std::collections::{BTreeMap, BTreeSet};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use toggle_admin::{MemoryStore, ToggleAdmin};
use tower::ServiceExt;
use unleash_yggdrasil::{Context, EngineState, UpdateMessage};

pub(super) const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/client-specification"
);

pub(super) struct Server {
    pub(super) app: axum::Router,
    pub(super) admin_key: String,
}

impl Server {
    pub(super) async fn call(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, key)
            .header("unleash-client-spec", "5.2.0");
        let body = match body {
            Some(b) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(b.to_string())
            }
            None => Body::empty(),
        };
        let response = self
            .app
            .clone()
            .oneshot(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, value)
    }

    pub(super) async fn admin(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, String> {
        let (status, value) = self.call(&self.admin_key.clone(), method, path, body).await;
        if status.is_success() {
            Ok(value)
        } else {
            Err(format!(
                "{status}: {}",
                value["message"].as_str().unwrap_or_default()
            ))
        }
    }
}

/// The spec's state through the admin API; the features that could not be expressed, each
/// with why.
pub(super) async fn create_state(server: &Server, state: &Value) -> BTreeMap<String, String> {
    let mut refused = BTreeMap::new();
    // Context fields the constraints name, beyond the built-in ones.
    let mut fields = BTreeSet::new();
    let mut collect = |constraints: &Value| {
        for c in constraints.as_array().into_iter().flatten() {
            if let Some(name) = c["contextName"].as_str() {
                fields.insert(name.to_owned());
            }
        }
    };
    for f in state["features"].as_array().into_iter().flatten() {
        for s in f["strategies"].as_array().into_iter().flatten() {
            collect(&s["constraints"]);
        }
    }
    for s in state["segments"].as_array().into_iter().flatten() {
        collect(&s["constraints"]);
    }
    for name in fields {
        let _ = server
            .admin(
                Method::POST,
                "/api/admin/context",
                Some(&json!({"name": name})),
            )
            .await;
    }
    // Segments, by the spec's id.
    let mut segment_ids = BTreeMap::new();
    for s in state["segments"].as_array().into_iter().flatten() {
        let id = s["id"].as_i64().unwrap();
        let body = json!({"name": format!("segment-{id}"), "constraints": s["constraints"]});
        match server
            .admin(Method::POST, "/api/admin/segments", Some(&body))
            .await
        {
            Ok(created) => {
                segment_ids.insert(id, created["id"].as_i64().unwrap());
            }
            Err(e) => {
                refused.insert(format!("segment {id}"), e);
            }
        }
    }
    let features: Vec<&Value> = state["features"].as_array().into_iter().flatten().collect();
    for f in &features {
        let name = f["name"].as_str().unwrap();
        let mut body = json!({"name": name});
        if let Some(t) = f["type"].as_str() {
            body["type"] = json!(t);
        }
        if let Err(e) = server
            .admin(
                Method::POST,
                "/api/admin/projects/default/features",
                Some(&body),
            )
            .await
        {
            refused.insert(name.to_owned(), format!("feature: {e}"));
        }
    }
    for f in &features {
        let name = f["name"].as_str().unwrap();
        if refused.contains_key(name) {
            continue;
        }
        let encoded: String = url_encode(name);
        let base = format!("/api/admin/projects/default/features/{encoded}");
        let mut problems = Vec::new();
        for (i, s) in f["strategies"].as_array().into_iter().flatten().enumerate() {
            // As the spec has it: Unleash's admin API coerces parameter values to strings
            // and gives each new strategy the next sortOrder, and so does ours.
            let mut body = json!({"name": s["name"]});
            for key in ["parameters", "constraints"] {
                if let Some(value) = s.get(key).filter(|v| !v.is_null()) {
                    body[key] = value.clone();
                }
            }
            if let Some(segments) = s["segments"].as_array() {
                let mut ids = Vec::new();
                for id in segments {
                    let id = id.as_i64().unwrap();
                    match segment_ids.get(&id) {
                        Some(ours) => ids.push(*ours),
                        None => problems.push(format!("strategy {i}: segment {id} does not exist")),
                    }
                }
                body["segments"] = json!(ids);
            }
            if let Some(variants) = s["variants"].as_array() {
                body["variants"] = Value::Array(
                    variants
                        .iter()
                        .map(|v| {
                            let mut v = v.clone();
                            if v.get("stickiness").is_none() {
                                v["stickiness"] = json!("default");
                            }
                            if v.get("weightType").is_none() {
                                v["weightType"] = json!("variable");
                            }
                            v
                        })
                        .collect(),
                );
            }
            if let Err(e) = server
                .admin(
                    Method::POST,
                    &format!("{base}/environments/production/strategies"),
                    Some(&body),
                )
                .await
            {
                problems.push(format!("strategy {i}: {e}"));
            }
        }
        if let Some(variants) = f["variants"].as_array().filter(|v| !v.is_empty())
            && let Err(e) = server
                .admin(
                    Method::PUT,
                    &format!("{base}/environments/production/variants"),
                    Some(&Value::Array(variants.clone())),
                )
                .await
        {
            problems.push(format!("variants: {e}"));
        }
        for d in f["dependencies"].as_array().into_iter().flatten() {
            if let Err(e) = server
                .admin(Method::POST, &format!("{base}/dependencies"), Some(d))
                .await
            {
                problems.push(format!("dependency on {}: {e}", d["feature"]));
            }
        }
        if f["enabled"] == json!(true)
            && let Err(e) = server
                .admin(
                    Method::POST,
                    &format!("{base}/environments/production/on"),
                    None,
                )
                .await
        {
            problems.push(format!("on: {e}"));
        }
        if !problems.is_empty() {
            refused.insert(name.to_owned(), problems.join("; "));
        }
    }
    refused
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// What one specification gave.
struct Outcome {
    passed: usize,
    skipped: usize,
    failures: Vec<String>,
    refused: BTreeMap<String, String>,
    /// Passed through `POST /api/frontend/all`.
    frontend_passed: usize,
    frontend_failures: Vec<String>,
}

/// The flag `name` in a frontend answer; a flag the answer does not list is off.
fn frontend_toggle(answer: &Value, name: &str) -> Value {
    answer["toggles"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == name)
        .cloned()
        .unwrap_or_else(|| {
            json!({"name": name, "enabled": false,
                   "variant": {"name": "disabled", "enabled": false, "feature_enabled": false}})
        })
}

/// Run one specification.
async fn run(file: &str) -> Outcome {
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/{file}")).unwrap()).unwrap();
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("spec").await.unwrap();
    let app = toggle_admin::http::router(admin.clone());
    let server = Server {
        app,
        admin_key: key.secret.clone(),
    };
    server
        .admin(
            Method::POST,
            "/api/admin/environments",
            Some(&json!({"name": "production", "type": "production"})),
        )
        .await
        .unwrap();
    server
        .admin(
            Method::POST,
            "/api/admin/projects",
            Some(&json!({"id": "default", "name": "Default", "environments": ["production"]})),
        )
        .await
        .unwrap();
    let _ = server
        .admin(
            Method::POST,
            "/api/admin/projects/default/environments",
            Some(&json!({"environment": "production"})),
        )
        .await;
    let refused = create_state(&server, &suite["state"]).await;
    let client = server
        .admin(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "environment": "production"})),
        )
        .await
        .unwrap();
    let (status, document) = server
        .call(
            client["secret"].as_str().unwrap(),
            Method::GET,
            "/api/client/features",
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{file}: {document}");
    // Variant weights the admin API normalised (variable weights always total 1000, as in
    // Unleash): the variant tests of such a feature cannot hold, since the engine hashes
    // modulo the total weight.
    let weights = |variants: &Value| -> Vec<i64> {
        variants
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v["weight"].as_i64().unwrap_or_default())
            .collect()
    };
    let mut normalised = BTreeMap::new();
    for f in suite["state"]["features"].as_array().into_iter().flatten() {
        let name = f["name"].as_str().unwrap();
        let Some(ours) = document["features"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
        else {
            continue;
        };
        // One variant is chosen whatever its weight.
        let changed = |a: Vec<i64>, b: Vec<i64>| a.len() > 1 && a != b;
        let mut differs = changed(weights(&f["variants"]), weights(&ours["variants"]));
        for (theirs, mine) in f["strategies"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(ours["strategies"].as_array().into_iter().flatten())
        {
            differs |= changed(weights(&theirs["variants"]), weights(&mine["variants"]));
        }
        if differs {
            normalised.insert(
                name.to_owned(),
                "variant weights not totalling 1000 are normalised by the admin API (as in Unleash)"
                    .to_owned(),
            );
        }
    }
    let features: unleash_yggdrasil::ClientFeatures = serde_json::from_value(document).unwrap();
    let engine = EngineState::default();
    engine.take_state(UpdateMessage::FullResponse(features));

    // A test is skipped when its feature, or a parent of it, was refused.
    let parents: BTreeMap<String, Vec<String>> = suite["state"]["features"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|d| d["feature"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect();
    let expressible = |name: &str| {
        !refused.contains_key(name)
            && parents
                .get(name)
                .is_none_or(|ps| ps.iter().all(|p| !refused.contains_key(p)))
    };
    let frontend_key = server
        .admin(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "web", "type": "frontend", "environment": "production"})),
        )
        .await
        .unwrap();
    let frontend_key = frontend_key["secret"].as_str().unwrap().to_owned();
    let frontend = |context: Value| {
        let server = &server;
        let key = frontend_key.clone();
        async move {
            let (status, answer) = server
                .call(
                    &key,
                    Method::POST,
                    "/api/frontend/all",
                    Some(&json!({ "context": context })),
                )
                .await;
            (status, answer)
        }
    };
    let (mut passed, mut skipped, mut failures) = (0, 0, Vec::new());
    let (mut frontend_passed, mut frontend_failures) = (0, Vec::new());
    for test in suite["tests"].as_array().into_iter().flatten() {
        let name = test["toggleName"].as_str().unwrap();
        if !expressible(name) {
            skipped += 1;
            continue;
        }
        let context: Context = serde_json::from_value(test["context"].clone()).unwrap();
        let actual = engine.is_enabled(name, &context, &None);
        if actual == test["expectedResult"] {
            passed += 1;
        } else {
            failures.push(format!(
                "{file}: {}: expected {}, got {actual}",
                test["description"], test["expectedResult"]
            ));
        }
        let (status, answer) = frontend(test["context"].clone()).await;
        let toggle = frontend_toggle(&answer, name);
        if status == StatusCode::OK && toggle["enabled"] == test["expectedResult"] {
            frontend_passed += 1;
        } else {
            frontend_failures.push(format!(
                "{file} (frontend): {}: expected {}, got {status} {toggle}",
                test["description"], test["expectedResult"]
            ));
        }
    }
    for test in suite["variantTests"].as_array().into_iter().flatten() {
        let name = test["toggleName"].as_str().unwrap();
        if !expressible(name) || normalised.contains_key(name) {
            skipped += 1;
            continue;
        }
        let context: Context = serde_json::from_value(test["context"].clone()).unwrap();
        let actual = serde_json::to_value(engine.get_variant(name, &context, &None)).unwrap();
        let expected = &test["expectedResult"];
        let same = actual["name"] == expected["name"]
            && actual["enabled"] == expected["enabled"]
            && actual["payload"] == expected["payload"]
            && expected
                .get("feature_enabled")
                .is_none_or(|e| actual["featureEnabled"] == *e);
        if same {
            passed += 1;
        } else {
            failures.push(format!(
                "{file}: {}: expected {expected}, got {actual}",
                test["description"]
            ));
        }
        let (status, answer) = frontend(test["context"].clone()).await;
        let variant = frontend_toggle(&answer, name)["variant"].clone();
        let same = variant["name"] == expected["name"]
            && variant["enabled"] == expected["enabled"]
            && variant.get("payload").unwrap_or(&Value::Null)
                == expected.get("payload").unwrap_or(&Value::Null)
            && expected
                .get("feature_enabled")
                .is_none_or(|e| variant["feature_enabled"] == *e);
        if status == StatusCode::OK && same {
            frontend_passed += 1;
        } else {
            frontend_failures.push(format!(
                "{file} (frontend): {}: expected {expected}, got {status} {variant}",
                test["description"]
            ));
        }
    }
    let mut refused = refused;
    for (name, why) in normalised {
        refused
            .entry(format!("{name} (variant tests only)"))
            .or_insert(why);
    }
    Outcome {
        passed,
        skipped,
        failures,
        refused,
        frontend_passed,
        frontend_failures,
    }
}

#[tokio::test]
async fn the_client_specification_passes_through_our_client_api() {
    let mut files: Vec<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 18);
    let (mut passed, mut skipped, mut failures) = (0, 0, Vec::new());
    let (mut frontend_passed, mut frontend_failures) = (0, Vec::new());
    let mut refused_all = BTreeMap::new();
    for file in &files {
        let outcome = run(file).await;
        passed += outcome.passed;
        skipped += outcome.skipped;
        failures.extend(outcome.failures);
        frontend_passed += outcome.frontend_passed;
        frontend_failures.extend(outcome.frontend_failures);
        for (what, why) in outcome.refused {
            refused_all.insert(format!("{file}: {what}"), why);
        }
    }
    for (what, why) in &refused_all {
        println!("not expressible: {what}: {why}");
    }
    println!(
        "passed {passed}, skipped {skipped}, failed {}",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // 179 tests pass; 47 are skipped for the 23 items below, each refused by Unleash 6.10.1's
    // admin API as well (checked against it: constraints without values, unknown operators,
    // `v2.0.0` as a semver, a missing segment, dependency rules, names that are not
    // URL-friendly, variant weights normalised). Anything newly refused fails.
    assert!(passed >= 179, "passed {passed}");
    // Through the frontend API: every test the client path passes.
    println!(
        "frontend API: passed {frontend_passed}, failed {}",
        frontend_failures.len()
    );
    assert!(
        frontend_failures.is_empty(),
        "{} failures through the frontend API:\n{}",
        frontend_failures.len(),
        frontend_failures.join("\n")
    );
    assert_eq!(frontend_passed, passed);
    assert!(refused_all.len() <= 23, "newly refused: {refused_all:#?}");
}
