//! The playground and the frontend API agree: for every specification of Unleash's client
//! specification (its state created as `client_spec.rs` creates it), every context of its
//! tests and a few more, `POST /api/admin/playground` answers every flag's `isEnabled` and
//! `variant` as `POST /api/frontend/all` does, and its explanation adds up to its verdict:
//! enabled exactly when the flag is on in the environment, its strategies' result is `true`
//! and no dependency is unsatisfied. Flags whose answer changes between two identical
//! requests (random rollouts) are left out.

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toggle_admin::{MemoryStore, ToggleAdmin};

use super::client_spec::{DIR, Server, create_state};

/// The context of a test, with the `appName` the playground needs (the same one goes to
/// the frontend API, so both evaluate the same context).
fn with_app_name(context: &Value) -> Value {
    let mut context = context.clone();
    if let Some(map) = context.as_object_mut() {
        map.entry("appName").or_insert(json!("playground"));
    }
    context
}

#[tokio::test]
async fn the_playground_and_the_frontend_api_agree_on_every_flag_of_the_client_specification() {
    let mut files: Vec<String> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(files.len() >= 18, "{files:?}");
    let (mut compared, mut explained_true, mut failures) = (0usize, 0usize, Vec::new());
    for file in &files {
        let suite: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/{file}")).unwrap())
                .unwrap();
        let admin = ToggleAdmin::new(MemoryStore::new());
        let key = admin.bootstrap_admin_key("spec").await.unwrap();
        let server = Server {
            app: toggle_admin::http::router(admin),
            admin_key: key.secret,
        };
        for (path, body) in [
            (
                "/api/admin/environments",
                json!({"name": "production", "type": "production"}),
            ),
            (
                "/api/admin/projects",
                json!({"id": "default", "name": "Default", "environments": ["production"]}),
            ),
            (
                "/api/admin/projects/default/environments",
                json!({"environment": "production"}),
            ),
        ] {
            let _ = server.admin(Method::POST, path, Some(&body)).await;
        }
        create_state(&server, &suite["state"]).await;
        let token = server
            .admin(
                Method::POST,
                "/api/admin/api-tokens",
                Some(&json!({"tokenName": "web", "type": "frontend", "environment": "production"})),
            )
            .await
            .unwrap();
        let token = token["secret"].as_str().unwrap();
        let mut contexts: BTreeSet<String> = [
            "{}",
            r#"{"userId": "1"}"#,
            r#"{"userId": "123", "sessionId": "s-1", "properties": {"customField": "x"}}"#,
        ]
        .into_iter()
        .map(str::to_owned)
        .collect();
        for test in suite["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(suite["variantTests"].as_array().into_iter().flatten())
        {
            contexts.insert(test["context"].to_string());
        }
        for context in contexts {
            let context = with_app_name(&serde_json::from_str(&context).unwrap());
            let body = json!({"context": context});
            let frontend = || server.call(token, Method::POST, "/api/frontend/all", Some(&body));
            let (status, first) = frontend().await;
            assert_eq!(status, StatusCode::OK, "{file}: {first}");
            let mut again = Vec::with_capacity(15);
            for _ in 0..15 {
                again.push(frontend().await.1);
            }
            let request = json!({"environment": "production", "projects": "*", "context": context});
            let (status, playground) = server
                .call(
                    &server.admin_key,
                    Method::POST,
                    "/api/admin/playground",
                    Some(&request),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{file}: {playground}");
            assert_eq!(playground["input"], request, "{file}");
            let toggles = first["toggles"].as_array().unwrap();
            let features = playground["features"].as_array().unwrap();
            assert_eq!(toggles.len(), features.len(), "{file}: {context}");
            for toggle in toggles {
                let steady = again.iter().all(|answer| {
                    answer["toggles"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|t| t["name"] == toggle["name"])
                        == Some(toggle)
                });
                let Some(feature) = features.iter().find(|f| f["name"] == toggle["name"]) else {
                    failures.push(format!("{file}: {context}: no {}", toggle["name"]));
                    continue;
                };
                // The explanation adds up to the verdict (for a rollout at random, the
                // verdict and the explanation each draw their own lot).
                let explained = feature["isEnabledInCurrentEnvironment"] == json!(true)
                    && feature["strategies"]["result"] == json!(true)
                    && feature["hasUnsatisfiedDependency"] == json!(false);
                if steady {
                    if explained != (feature["isEnabled"] == json!(true)) {
                        failures.push(format!(
                            "{file}: {context}: the explanation does not add up: {feature}"
                        ));
                    }
                    explained_true += usize::from(explained);
                } else {
                    continue;
                }
                compared += 1;
                let variant = &feature["variant"];
                let agrees = feature["isEnabled"] == toggle["enabled"]
                    && variant["name"] == toggle["variant"]["name"]
                    && variant["enabled"] == toggle["variant"]["enabled"]
                    && variant["payload"] == toggle["variant"]["payload"]
                    && variant["feature_enabled"] == toggle["variant"]["feature_enabled"];
                if !agrees {
                    failures.push(format!(
                        "{file}: {context}: frontend {toggle}, playground {feature}"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(compared > 500, "only {compared} flags compared");
    assert!(
        explained_true > 100,
        "only {explained_true} flags explained as enabled"
    );
    println!("{compared} flag evaluations agree");
}
