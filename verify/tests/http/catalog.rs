//! Tag types, context fields, segments, strategy definitions, and a feature's strategies,
//! on/off, dependencies and tags, through the router (`oneshot`).

use axum::http::{Method, StatusCode};
use serde_json::json;
use test_support::http::*;

const ENV: &str = "/api/admin/projects/p/features/f/environments/development";

#[tokio::test]
async fn catalogue_create_and_read() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/tag-types",
            Some(&json!({"name": "team", "description": "Team"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t.call(Method::GET, "/api/admin/tag-types/team", None).await;
    assert_eq!(r.json()["tagType"]["name"], "team", "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/tag-types",
            Some(&json!({"name": "team"})),
        )
        .await;
    r.error(StatusCode::CONFLICT, "NameExistsError");
    let r = t.call(Method::GET, "/api/admin/tag-types/none", None).await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");

    let r = t
        .call(
            Method::POST,
            "/api/admin/context",
            Some(&json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t.call(Method::GET, "/api/admin/context/region", None).await;
    assert_eq!(r.json()["legalValues"][0]["value"], "eu", "{}", r.text());

    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "eu-users", "constraints": [
                {"contextName": "region", "operator": "IN", "values": ["eu"]}
            ]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert!(r.json()["id"].as_i64().is_some());

    let r = t
        .call(
            Method::POST,
            "/api/admin/strategies",
            Some(&json!({"name": "byTeam", "parameters": [{"name": "teams", "type": "list"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(Method::GET, "/api/admin/strategies/byTeam", None)
        .await;
    assert_eq!(r.json()["name"], "byTeam");
}

#[tokio::test]
async fn feature_strategies_on_off_dependencies_tags() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            &format!("{ENV}/strategies"),
            Some(&json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let id = r.json()["id"].as_str().unwrap().to_owned();
    let r = t
        .call(Method::GET, &format!("{ENV}/strategies"), None)
        .await;
    assert_eq!(r.json()[0]["id"], id.as_str());
    let r = t.call(Method::POST, &format!("{ENV}/on"), None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.body.is_empty());
    let feature = t
        .call(Method::GET, "/api/admin/projects/p/features/f", None)
        .await
        .json();
    let dev = feature["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "development")
        .cloned()
        .unwrap();
    assert_eq!(dev["enabled"], true);
    let r = t.call(Method::POST, &format!("{ENV}/off"), None).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/nope/environments/development/on",
            None,
        )
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");

    // A dependency on a parent in the same project.
    t.call(
        Method::POST,
        "/api/admin/projects/p/features",
        Some(&json!({"name": "parent"})),
    )
    .await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/dependencies",
            Some(&json!({"feature": "parent", "enabled": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/f/dependencies",
            None,
        )
        .await;
    assert_eq!(r.json()[0]["feature"], "parent", "{}", r.text());

    // Tags by feature name alone.
    let r = t
        .call(
            Method::POST,
            "/api/admin/features/f/tags",
            Some(&json!({"value": "checkout", "type": "simple"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert_eq!(r.text(), r#"{"value":"checkout","type":"simple"}"#);
    let r = t
        .call(Method::GET, "/api/admin/features/f/tags", None)
        .await;
    assert_eq!(
        r.json()["tags"],
        json!([{"value": "checkout", "type": "simple", "color": "#FFFFFF"}])
    );
    let r = t
        .call(Method::GET, "/api/admin/features/nope/tags", None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/features/f/tags/simple/checkout",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = t
        .call(Method::GET, "/api/admin/features/f/tags", None)
        .await;
    assert_eq!(r.json()["tags"], json!([]));
}
