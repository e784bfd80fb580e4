//! Environment variants replaced through the router: one environment (`PUT
//! …/environments/{environment}/variants`) and several at once (`PUT …/variants-batch`),
//! validated and weighed as the variants PATCH is; with the state seen from the admin and
//! client APIs, the events, and refusals that change nothing; run over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::Grant;
use toggle_admin::model::Permission;

const F: &str = "/api/admin/projects/p/features/f";
const BATCH: &str = "/api/admin/projects/p/features/f/variants-batch";

async fn events(t: &Setup, query: &str) -> Vec<Value> {
    let r = t
        .call(Method::GET, &format!("/api/admin/events?{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

/// `name:weight` of each variant of `f` in `environment`, read back.
async fn variants(t: &Setup, environment: &str) -> Vec<String> {
    let r = t
        .call(
            Method::GET,
            &format!("{F}/environments/{environment}/variants"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json())
}

fn names(body: &Value) -> Vec<String> {
    assert_eq!(body["version"], 1, "{body}");
    body["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| format!("{}:{}", v["name"].as_str().unwrap(), v["weight"]))
        .collect()
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

/// The variants the client API shows for `f` (production).
async fn client_variants(t: &Setup, client: &str) -> Value {
    let r = t
        .call_as(client, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "f")
        .map(|f| f["variants"].clone())
        .unwrap_or(Value::Null)
}

async fn environment_variants(t: &Setup) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "c", "type": "client", "environment": "production"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let client = r.json()["secret"].as_str().unwrap().to_owned();

    // One environment: weighed and sorted as Unleash does, defaults filled in.
    let r = t
        .call(
            Method::PUT,
            &format!("{F}/environments/production/variants"),
            Some(&json!([{"name": "green", "weight": 0}, {"name": "blue", "weight": 0}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&r.json()), ["blue:500", "green:500"]);
    assert_eq!(r.json()["variants"][0]["weightType"], "variable");
    assert_eq!(r.json()["variants"][0]["stickiness"], "default");
    assert_eq!(variants(t, "production").await, ["blue:500", "green:500"]);
    assert_eq!(client_variants(t, &client).await[1]["name"], "green");
    let updated = events(t, "type=feature-environment-variants-updated&feature=f").await;
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["environment"], "production");
    assert_eq!(updated[0]["preData"], json!({"variants": []}));
    // A bad list: every problem with its path, nothing changed.
    let r = t
        .call(
            Method::PUT,
            &format!("{F}/environments/production/variants"),
            Some(&json!([{"name": "", "weight": "x"}])),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["/0/name", "/0/weight"]);
    assert_eq!(variants(t, "production").await, ["blue:500", "green:500"]);

    // Several environments at once, in one change: an event each.
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [{"name": "a", "weight": 0}], "environments": ["production", "development"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(names(&r.json()), ["a:1000"]);
    assert_eq!(variants(t, "production").await, ["a:1000"]);
    assert_eq!(variants(t, "development").await, ["a:1000"]);
    assert_eq!(client_variants(t, &client).await[0]["name"], "a");
    let updated = events(t, "type=feature-environment-variants-updated&feature=f").await;
    assert_eq!(updated.len(), 3);
    let mut environments: Vec<&str> = updated[..2]
        .iter()
        .map(|e| e["environment"].as_str().unwrap())
        .collect();
    environments.sort_unstable();
    assert_eq!(environments, ["development", "production"]);
    // The same again changes nothing and writes nothing.
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [{"name": "a", "weight": 1000, "weightType": "variable", "stickiness": "default"}], "environments": ["development"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        events(t, "type=feature-environment-variants-updated&feature=f")
            .await
            .len(),
        3
    );

    // Bad batches: every problem named, nothing changed anywhere.
    let before = events(t, "feature=f").await.len();
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [{"name": "x", "weight": "heavy"}], "environments": ["production", "staging", "nope"]})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(
        detail_paths(&r),
        ["/variants/0/weight", "/environments/1", "/environments/2"]
    );
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [], "environments": []})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["/environments"]);
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"environments": ["production"]})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["/variants"]);
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [{"name": "f1", "weight": 600, "weightType": "fix"}, {"name": "f2", "weight": 600, "weightType": "fix"}], "environments": ["production"]})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(
            Method::PUT,
            BATCH,
            Some(&json!({"variants": "a", "environments": "production"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::PUT,
        "/api/admin/projects/p/features/nope/variants-batch",
        Some(&json!({"variants": [], "environments": ["production"]})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(variants(t, "production").await, ["a:1000"]);
    assert_eq!(variants(t, "development").await, ["a:1000"]);
    assert_eq!(events(t, "feature=f").await.len(), before);

    // Permission per environment named: a key for development only may change development,
    // not production too; a key with neither is refused before its body is read.
    let development = t
        .key_with(vec![Grant::in_environment(
            Permission::UpdateFeatureEnvironmentVariants,
            "p",
            "development",
        )])
        .await;
    let r = t
        .call_as(
            &development,
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [], "environments": ["production", "development"]})),
        )
        .await;
    let body = r.error(StatusCode::FORBIDDEN, "NoAccessError");
    assert!(
        body["message"].as_str().unwrap().contains("production"),
        "{body}"
    );
    assert_eq!(variants(t, "development").await, ["a:1000"]);
    let r = t
        .call_as(
            &development,
            Method::PUT,
            BATCH,
            Some(&json!({"variants": [], "environments": ["development"]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(variants(t, "development").await, Vec::<String>::new());
    assert_eq!(variants(t, "production").await, ["a:1000"]);
    let elsewhere = t
        .key_with(vec![Grant::in_project(
            Permission::UpdateFeatureEnvironmentVariants,
            "other",
        )])
        .await;
    let r = t
        .call_as(&elsewhere, Method::PUT, BATCH, Some(&json!([1, 2])))
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");

    // An archived feature's variants are not changed.
    let r = t.call(Method::DELETE, F, None).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    t.call(
        Method::PUT,
        BATCH,
        Some(&json!({"variants": [], "environments": ["production"]})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
}

on_every_store!(
    environment_variants => environment_variants_on_a_memory_store,
    environment_variants_on_a_file_store,
    environment_variants_on_a_postgres_store
);
