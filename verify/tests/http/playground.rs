//! The playground through the router: a hand-made flag whose every strategy, constraint and
//! segment is explained (a 0 % rollout, a country constraint, a segment, a disabled and a
//! custom strategy), the advanced playground's product of environments and context values,
//! the verdicts the frontend API gives, and bad requests; over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const STRATEGIES: &str = "/api/admin/projects/p/features/f/environments/production/strategies";

async fn ok(t: &Setup, method: Method, path: &str, body: Option<&Value>) -> Value {
    let r = t.call(method, path, body).await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
    serde_json::from_str(&r.text()).unwrap_or(Value::Null)
}

/// Flag `f` of project `p` on in `production` with five strategies, in this order: a 0 %
/// rollout, `country IN [NO]`, the segment `nordic` (`country IN [NO, SE]`), a disabled
/// `default`, and the custom strategy `my-custom`. Returns the segment's id.
async fn hand_made_flag(t: &Setup) -> i64 {
    ok(
        t,
        Method::POST,
        "/api/admin/context",
        Some(&json!({"name": "country"})),
    )
    .await;
    let segment = ok(
        t,
        Method::POST,
        "/api/admin/segments",
        Some(&json!({"name": "nordic", "constraints": [
            {"contextName": "country", "operator": "IN", "values": ["NO", "SE"]}
        ]})),
    )
    .await;
    let segment = segment["id"].as_i64().unwrap();
    ok(
        t,
        Method::POST,
        "/api/admin/strategies",
        Some(&json!({"name": "my-custom", "parameters": []})),
    )
    .await;
    for body in [
        json!({"name": "flexibleRollout", "title": "nobody",
               "parameters": {"rollout": "0", "stickiness": "default", "groupId": "f"}}),
        json!({"name": "default", "constraints": [
            {"contextName": "country", "operator": "IN", "values": ["NO"]}
        ]}),
        json!({"name": "default", "segments": [segment]}),
        json!({"name": "default", "disabled": true}),
        json!({"name": "my-custom"}),
    ] {
        ok(t, Method::POST, STRATEGIES, Some(&body)).await;
    }
    ok(
        t,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/production/on",
        None,
    )
    .await;
    segment
}

fn feature<'a>(answer: &'a Value, name: &str) -> &'a Value {
    answer["features"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {answer}"))
}

async fn playground(t: &Setup, country: &str) -> Value {
    let r = t
        .call(
            Method::POST,
            "/api/admin/playground",
            Some(&json!({
                "environment": "production",
                "projects": ["p"],
                "context": {"appName": "web", "userId": "7", "properties": {"country": country}}
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()
}

async fn frontend_enabled(t: &Setup, key: &str, country: &str) -> bool {
    let r = t
        .call_as(
            key,
            Method::POST,
            "/api/frontend/all",
            Some(&json!({"context": {"appName": "web", "userId": "7", "properties": {"country": country}}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["toggles"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "f"))
        .map(|t| t["enabled"] == json!(true))
        .unwrap()
}

async fn explanations(t: &Setup) {
    let segment = hand_made_flag(t).await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "web", "type": "frontend", "environment": "production"})),
        )
        .await;
    let frontend = r.json()["secret"].as_str().unwrap().to_owned();

    // Norway: enabled by the constraint and by the segment.
    let answer = playground(t, "NO").await;
    let f = feature(&answer, "f");
    assert_eq!(f["projectId"], "p");
    assert_eq!(f["isEnabled"], true, "{f}");
    assert_eq!(f["isEnabledInCurrentEnvironment"], true);
    assert_eq!(f["hasUnsatisfiedDependency"], false);
    assert_eq!(f["strategies"]["result"], true);
    assert_eq!(
        f["variant"],
        json!({"name": "disabled", "enabled": false, "feature_enabled": true, "featureEnabled": true})
    );
    let data = f["strategies"]["data"].as_array().unwrap();
    assert_eq!(data.len(), 5, "{f}");
    let rollout = &data[0];
    assert_eq!(rollout["name"], "flexibleRollout");
    assert_eq!(rollout["title"], "nobody");
    assert_eq!(
        rollout["result"],
        json!({"enabled": false, "evaluationStatus": "complete"})
    );
    assert_eq!(rollout["parameters"]["rollout"], "0");
    let id = rollout["id"].as_str().unwrap();
    assert_eq!(
        rollout["links"]["edit"],
        format!("/projects/p/features/f/strategies/edit?environmentId=production&strategyId={id}")
    );
    let by_country = &data[1];
    assert_eq!(
        by_country["result"],
        json!({"enabled": true, "evaluationStatus": "complete"})
    );
    assert_eq!(
        by_country["constraints"],
        json!([{"contextName": "country", "operator": "IN", "values": ["NO"],
                "inverted": false, "caseInsensitive": false, "result": true}])
    );
    let by_segment = &data[2];
    assert_eq!(by_segment["result"]["enabled"], true);
    assert_eq!(by_segment["segments"][0]["id"], segment);
    assert_eq!(by_segment["segments"][0]["name"], "nordic");
    assert_eq!(by_segment["segments"][0]["result"], true);
    assert_eq!(by_segment["segments"][0]["constraints"][0]["result"], true);
    let disabled = &data[3];
    assert_eq!(disabled["disabled"], true);
    assert_eq!(
        disabled["result"],
        json!({"enabled": false, "evaluationStatus": "unevaluated"})
    );
    let custom = &data[4];
    assert_eq!(
        custom["result"],
        json!({"enabled": "unknown", "evaluationStatus": "incomplete"})
    );
    assert!(frontend_enabled(t, &frontend, "NO").await);

    // Denmark: the constraint and the segment fail; only the custom strategy might hold,
    // so the strategies' result is unknown and the flag is off, as the frontend API says.
    let answer = playground(t, "DK").await;
    let f = feature(&answer, "f");
    assert_eq!(f["isEnabled"], false, "{f}");
    assert_eq!(f["strategies"]["result"], "unknown");
    let data = f["strategies"]["data"].as_array().unwrap();
    assert_eq!(data[0]["result"]["enabled"], false);
    assert_eq!(data[1]["result"]["enabled"], false);
    assert_eq!(data[1]["constraints"][0]["result"], false);
    assert_eq!(data[2]["result"]["enabled"], false);
    assert_eq!(data[2]["segments"][0]["result"], false);
    assert_eq!(data[2]["segments"][0]["constraints"][0]["result"], false);
    assert_eq!(f["variant"]["feature_enabled"], false);
    assert!(!frontend_enabled(t, &frontend, "DK").await);

    // Only the projects asked for; every project for "*".
    assert_eq!(answer["features"].as_array().unwrap().len(), 1);
    let all = ok(
        t,
        Method::POST,
        "/api/admin/playground",
        Some(&json!({"environment": "production", "projects": "*",
                     "context": {"appName": "web"}})),
    )
    .await;
    let g = feature(&all, "g");
    assert_eq!(g["isEnabled"], false);
    assert_eq!(g["isEnabledInCurrentEnvironment"], false);
    assert_eq!(
        g["strategies"],
        json!({"result": false, "data": []}),
        "off, no strategy"
    );

    // The advanced playground: two environments × two countries × two users.
    let r = t
        .call(
            Method::POST,
            "/api/admin/playground/advanced",
            Some(&json!({
                "environments": ["production", "development"],
                "projects": ["p"],
                "context": {"appName": "web", "userId": "1,2", "size": 3,
                            "properties": {"country": "NO,DK"}}
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let advanced = r.json();
    assert_eq!(
        advanced["warnings"],
        json!({"invalidContextProperties": ["size"]})
    );
    let f = feature(&advanced, "f");
    assert_eq!(f["projectId"], "p");
    let production = f["environments"]["production"].as_array().unwrap();
    let development = f["environments"]["development"].as_array().unwrap();
    assert_eq!((production.len(), development.len()), (4, 4), "{f}");
    for result in production {
        let country = result["context"]["country"].as_str().unwrap();
        assert_eq!(result["environment"], "production");
        assert_eq!(result["isEnabled"], json!(country == "NO"), "{result}");
        assert_eq!(result["context"]["appName"], "web");
    }
    for result in development {
        assert_eq!(result["isEnabled"], false);
        assert_eq!(result["isEnabledInCurrentEnvironment"], false);
    }
    let users: Vec<&str> = production
        .iter()
        .map(|r| r["context"]["userId"].as_str().unwrap())
        .collect();
    assert_eq!(users.iter().filter(|u| **u == "1").count(), 2);
}

on_every_store!(explanations => the_playground_explains_each_strategy_on_a_memory_store, the_playground_explains_each_strategy_on_a_file_store, the_playground_explains_each_strategy_on_a_postgres_store);

fn detail_paths(reply: &Reply) -> Vec<String> {
    reply.json()["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn bad_playground_requests_are_400s_naming_the_field() {
    let t = setup().await;
    let context = json!({"appName": "web"});
    for (path, body, field) in [
        (
            "/api/admin/playground",
            json!({"environment": "nope", "context": context}),
            "/environment",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production", "projects": ["p", "nope"], "context": context}),
            "/projects/1",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production", "projects": "all", "context": context}),
            "/projects",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production", "context": "web"}),
            "/context",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production", "context": {"userId": "1"}}),
            "/context/appName",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production", "context": {"appName": "web", "userId": 1}}),
            "/context/userId",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production",
                   "context": {"appName": "web", "properties": {"tier": ["gold"]}}}),
            "/context/properties/tier",
        ),
        (
            "/api/admin/playground",
            json!({"environment": "production",
                   "context": {"appName": "web", "currentTime": "yesterday"}}),
            "/context/currentTime",
        ),
        (
            "/api/admin/playground/advanced",
            json!({"environments": [], "context": context}),
            "/environments",
        ),
        (
            "/api/admin/playground/advanced",
            json!({"environments": ["production", "nope"], "context": context}),
            "/environments/1",
        ),
    ] {
        let r = t.call(Method::POST, path, Some(&body)).await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), [field], "{body}: {}", r.text());
    }
    // Too many combinations: Unleash's limit and message.
    let many = (0..200)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let r = t
        .call(
            Method::POST,
            "/api/admin/playground/advanced",
            Some(&json!({"environments": ["production"],
                         "context": {"appName": "web", "userId": many, "sessionId": many}})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("exceeding 15000 limit")),
        "{body}"
    );
}

#[tokio::test]
async fn the_playground_is_for_admin_api_keys() {
    let t = setup().await;
    let body = json!({"environment": "production", "context": {"appName": "web"}});
    let r = t
        .call_as("nope", Method::POST, "/api/admin/playground", Some(&body))
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    for kind in ["client", "frontend"] {
        let key = t
            .call(
                Method::POST,
                "/api/admin/api-tokens",
                Some(&json!({"tokenName": kind, "type": kind, "environment": "production"})),
            )
            .await
            .json()["secret"]
            .as_str()
            .unwrap()
            .to_owned();
        let r = t
            .call_as(&key, Method::POST, "/api/admin/playground", Some(&body))
            .await;
        r.error(StatusCode::FORBIDDEN, "NoAccessError");
    }
    // A key without any grant may (Unleash needs no permission for the playground).
    let key = t.key_with(Vec::new()).await;
    let r = t
        .call_as(&key, Method::POST, "/api/admin/playground", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}
