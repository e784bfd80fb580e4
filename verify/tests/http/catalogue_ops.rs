//! Catalogue operations through the router: feature types and their lifetimes (kept across a
//! FileStore's reopening), checking a constraint on its own, the segments of a strategy,
//! and updating a custom strategy definition; with the events and refusals that change
//! nothing; run over every store.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use test_support::store::TempDir;
use toggle_admin::model::Permission;
use toggle_admin::{FileStore, Grant, Store, ToggleAdmin};

async fn events(t: &Setup, query: &str) -> Vec<Value> {
    let r = t
        .call(Method::GET, &format!("/api/admin/events?{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

fn detail_paths(r: &Reply) -> Vec<String> {
    r.json()["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Each type's `id:lifetimeDays`.
async fn lifetimes(t: &Setup) -> Vec<String> {
    let r = t.call(Method::GET, "/api/admin/feature-types", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["version"], 1);
    r.json()["types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| format!("{}:{}", t["id"].as_str().unwrap(), t["lifetimeDays"]))
        .collect()
}

async fn feature_types(t: &Setup) {
    assert_eq!(
        lifetimes(t).await,
        [
            "release:40",
            "experiment:40",
            "operational:7",
            "kill-switch:null",
            "permission:null"
        ]
    );
    let r = t.call(Method::GET, "/api/admin/feature-types", None).await;
    assert_eq!(
        r.json()["types"][3],
        json!({"id": "kill-switch", "name": "Kill switch",
               "description": "Kill switch feature toggles are used to quickly turn on or off critical functionality in your system.",
               "lifetimeDays": null})
    );

    let r = t
        .call(
            Method::PUT,
            "/api/admin/feature-types/release/lifetime",
            Some(&json!({"lifetimeDays": 60})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["id"], "release");
    assert_eq!(r.json()["name"], "Release");
    assert_eq!(r.json()["lifetimeDays"], 60);
    assert_eq!(lifetimes(t).await[0], "release:60");
    let updated = events(t, "type=feature-type-updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["preData"]["lifetimeDays"], 40);
    assert_eq!(updated[0]["data"]["lifetimeDays"], 60);
    // 0 and null both mean never.
    for (id, body) in [
        ("operational", json!({"lifetimeDays": 0})),
        ("experiment", json!({"lifetimeDays": null})),
    ] {
        let r = t
            .call(
                Method::PUT,
                &format!("/api/admin/feature-types/{id}/lifetime"),
                Some(&body),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        assert_eq!(r.json()["lifetimeDays"], Value::Null);
    }
    // Back to Unleash's own lifetime.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/feature-types/experiment/lifetime",
            Some(&json!({"lifetimeDays": 40})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        lifetimes(t).await,
        [
            "release:60",
            "experiment:40",
            "operational:null",
            "kill-switch:null",
            "permission:null"
        ]
    );

    // Refusals, nothing changed.
    let before = events(t, "type=feature-type-updated").await.len();
    for body in [
        json!({}),
        json!({"lifetimeDays": -1}),
        json!({"lifetimeDays": "x"}),
        json!({"lifetimeDays": 2_147_483_648_i64}),
        json!({"lifetimeDays": 1.5}),
    ] {
        let r = t
            .call(
                Method::PUT,
                "/api/admin/feature-types/release/lifetime",
                Some(&body),
            )
            .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        // Shape errors are JSON pointers (`/lifetimeDays`), range errors name the member.
        let paths: Vec<String> = detail_paths(&r)
            .iter()
            .map(|p| p.trim_start_matches('/').to_owned())
            .collect();
        assert_eq!(paths, ["lifetimeDays"], "{body}");
    }
    t.call(
        Method::PUT,
        "/api/admin/feature-types/nope/lifetime",
        Some(&json!({"lifetimeDays": 5})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    let editor = t
        .key_with(vec![Grant::everywhere(Permission::UpdateFeature)])
        .await;
    t.call_as(
        &editor,
        Method::PUT,
        "/api/admin/feature-types/release/lifetime",
        Some(&json!({"lifetimeDays": 5})),
    )
    .await
    .error(StatusCode::FORBIDDEN, "NoAccessError");
    assert_eq!(lifetimes(t).await[0], "release:60");
    assert_eq!(events(t, "type=feature-type-updated").await.len(), before);
}

async fn validate(t: &Setup, constraint: Value) -> Reply {
    t.call(
        Method::POST,
        "/api/admin/constraints/validate",
        Some(&constraint),
    )
    .await
}

async fn constraints(t: &Setup) {
    for valid in [
        json!({"contextName": "userId", "operator": "IN", "values": ["1", "2"]}),
        json!({"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["web"], "caseInsensitive": true}),
        json!({"contextName": "userId", "operator": "NUM_GTE", "value": "5"}),
        json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2024-01-01T00:00:00.000Z", "inverted": true}),
        json!({"contextName": "appName", "operator": "SEMVER_LT", "value": "1.2.3-beta.1"}),
    ] {
        let r = validate(t, valid.clone()).await;
        assert_eq!(r.status, StatusCode::NO_CONTENT, "{valid}: {}", r.text());
        assert_eq!(r.text(), "");
    }
    for (invalid, path, words) in [
        (
            json!({"contextName": "userId", "operator": "BETWEEN", "values": ["1"]}),
            "operator",
            "BETWEEN",
        ),
        (
            json!({"contextName": "userId", "operator": "IN", "values": []}),
            "values",
            "IN",
        ),
        (
            json!({"contextName": "userId", "operator": "IN"}),
            "values",
            "IN",
        ),
        (
            json!({"contextName": "userId", "operator": "NUM_EQ", "value": "abc"}),
            "value",
            "not a number",
        ),
        (
            json!({"contextName": "currentTime", "operator": "DATE_BEFORE", "value": "yesterday"}),
            "value",
            "date",
        ),
        (
            json!({"contextName": "appName", "operator": "SEMVER_EQ", "value": "1.2"}),
            "value",
            "semantic version",
        ),
        (
            json!({"contextName": "appName", "operator": "SEMVER_GT"}),
            "value",
            "SEMVER_GT",
        ),
        (
            json!({"operator": "IN", "values": ["1"]}),
            "contextName",
            "contextName",
        ),
        (
            json!({"contextName": "userId", "operator": "IN", "values": ["1"], "inverted": "yes"}),
            "inverted",
            "boolean",
        ),
    ] {
        let r = validate(t, invalid.clone()).await;
        let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), [path], "{invalid}");
        assert!(
            body["message"].as_str().unwrap().contains(words),
            "{invalid}: {body}"
        );
    }
    // A context field that does not exist: a 404 naming it, before the operands are looked
    // at, as Unleash; with a shape problem too, one of the problems of a 400.
    for missing in [
        json!({"contextName": "nope", "operator": "IN", "values": ["1"]}),
        json!({"contextName": "nope", "operator": "NUM_GT", "value": "many"}),
    ] {
        let body = validate(t, missing.clone())
            .await
            .error(StatusCode::NOT_FOUND, "NotFoundError");
        assert_eq!(
            body["message"], "Could not find Context field with name nope",
            "{missing}"
        );
    }
    let r = validate(
        t,
        json!({"contextName": "nope", "operator": "NOPE", "values": ["1"]}),
    )
    .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["operator", "contextName"]);
    // Legal values of the context field.
    let r = t
        .call(
            Method::POST,
            "/api/admin/context",
            Some(&json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = validate(
        t,
        json!({"contextName": "region", "operator": "IN", "values": ["eu", "asia"]}),
    )
    .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["values[1]"]);
    let r = validate(
        t,
        json!({"contextName": "region", "operator": "NOT_IN", "values": ["us"]}),
    )
    .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    // Not a constraint at all.
    validate(t, json!(["IN"]))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
}

async fn strategy_segments(t: &Setup) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "eu", "constraints": []})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let segment = r.json()["id"].clone();
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/strategies",
            Some(&json!({"name": "default", "segments": [segment]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let strategy = r.json()["id"].as_str().unwrap().to_owned();
    let r = t
        .call(
            Method::GET,
            &format!("/api/admin/segments/strategies/{strategy}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let segments = r.json()["segments"].as_array().cloned().unwrap();
    assert_eq!(segments.len(), 1);
    assert_eq!(segments[0]["id"], segment);
    assert_eq!(segments[0]["name"], "eu");
    let r = t
        .call(Method::GET, "/api/admin/segments/strategies/unknown", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json(), json!({"segments": []}));
}

async fn strategy_update(t: &Setup) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/strategies",
            Some(&json!({"name": "byTeam", "parameters": [{"name": "teams", "type": "list"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::PUT,
            "/api/admin/strategies/byTeam",
            Some(&json!({"name": "byTeam", "description": "By team",
                         "parameters": [{"name": "teams", "type": "list"}, {"name": "max", "type": "number", "required": true}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.text(), "");
    let r = t
        .call(Method::GET, "/api/admin/strategies/byTeam", None)
        .await;
    assert_eq!(r.json()["description"], "By team");
    assert_eq!(r.json()["editable"], true);
    assert_eq!(
        r.json()["parameters"][1],
        json!({"name": "max", "type": "number", "required": true})
    );
    let updated = events(t, "type=strategy-updated").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(
        updated[0]["preData"]["parameters"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        updated[0]["data"]["parameters"].as_array().unwrap().len(),
        2
    );

    // Refusals, nothing changed.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/strategies/default",
            Some(&json!({"parameters": []})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(
        body["message"].as_str().unwrap().contains("built-in"),
        "{body}"
    );
    t.call(
        Method::PUT,
        "/api/admin/strategies/nope",
        Some(&json!({"parameters": []})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    for (body, path) in [
        (
            json!({"parameters": [{"name": "teams", "type": "colour"}]}),
            "parameters[0].type",
        ),
        (
            json!({"parameters": [{"name": "a", "type": "list"}, {"name": "a", "type": "list"}]}),
            "parameters[1].name",
        ),
        (json!({"name": "other", "parameters": []}), "name"),
        (json!({"description": "no parameters"}), ""),
    ] {
        let r = t
            .call(Method::PUT, "/api/admin/strategies/byTeam", Some(&body))
            .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), [path], "{body}");
    }
    let r = t
        .call(Method::GET, "/api/admin/strategies/byTeam", None)
        .await;
    assert_eq!(r.json()["parameters"].as_array().unwrap().len(), 2);
    assert_eq!(events(t, "type=strategy-updated").await.len(), 1);
}

async fn catalogue(t: &Setup) {
    feature_types(t).await;
    constraints(t).await;
    strategy_segments(t).await;
    strategy_update(t).await;
}

on_every_store!(
    catalogue => catalogue_operations_on_a_memory_store,
    catalogue_operations_on_a_file_store,
    catalogue_operations_on_a_postgres_store
);

#[tokio::test]
async fn a_feature_types_lifetime_outlives_the_process() {
    let dir = TempDir::new("feature-type-lifetime");
    let secret = {
        let store: Arc<dyn Store> = Arc::new(FileStore::open(dir.path()).unwrap());
        let t = setup_on(ToggleAdmin::from_arc(store)).await;
        let r = t
            .call(
                Method::PUT,
                "/api/admin/feature-types/permission/lifetime",
                Some(&json!({"lifetimeDays": 365})),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        t.secret.clone()
    };
    let admin = ToggleAdmin::new(FileStore::open(dir.path()).unwrap());
    let caller = admin.authenticate(Some(&secret)).await.unwrap();
    let types = admin.feature_types(&caller).await.unwrap();
    let permission = types.iter().find(|t| t.id == "permission").unwrap();
    assert_eq!(permission.lifetime_days, Some(365));
}
