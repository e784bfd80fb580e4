//! What the SDKs reported, through the router: a feature's raw metrics, an application's
//! overview and its instances in an environment, the applications of a project, and one
//! feature as the client API shows it; over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

async fn get(t: &Setup, path: &str) -> Value {
    let r = t.call(Method::GET, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "GET {path}: {}", r.text());
    r.json()
}

async fn key(t: &Setup, body: Value) -> String {
    let r = t
        .call(Method::POST, "/api/admin/api-tokens", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()["secret"].as_str().unwrap().to_owned()
}

async fn sdk_post(t: &Setup, key: &str, path: &str, body: Value) {
    let r = t.call_as(key, Method::POST, path, Some(&body)).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "POST {path}: {}", r.text());
}

fn detail_paths(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn scenario(t: &Setup) {
    let sdk = key(
        t,
        json!({"tokenName": "sdk", "type": "client", "environment": "production"}),
    )
    .await;
    // Nothing reported yet.
    let raw = get(t, "/api/admin/client-metrics/features/f/raw").await;
    assert_eq!(raw, json!({"version": 1, "maturity": "stable", "data": []}));
    t.call(
        Method::GET,
        "/api/admin/metrics/applications/shop/overview",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    sdk_post(
        t,
        &sdk,
        "/api/client/register",
        json!({
            "appName": "shop",
            "instanceId": "pod-1",
            "sdkVersion": "unleash-client-node:5.0.0",
            "strategies": ["default", "flexibleRollout", "gradualRolloutRandom", "custom-x"],
            "started": "2026-01-01T00:00:00.000Z",
            "interval": 10000
        }),
    )
    .await;
    let now = chrono::Utc::now().to_rfc3339();
    sdk_post(
        t,
        &sdk,
        "/api/client/metrics",
        json!({
            "appName": "shop",
            "instanceId": "pod-1",
            "bucket": {"start": now, "stop": now, "toggles": {
                "f": {"yes": 3, "no": 1, "variants": {"blue": 2}},
                "ghost": {"yes": 1, "no": 0}
            }}
        }),
    )
    .await;

    // The raw metrics: per application, environment and hour.
    let raw = get(t, "/api/admin/client-metrics/features/f/raw").await;
    assert_eq!(raw["version"], 1);
    let data = raw["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{raw}");
    assert_eq!(data[0]["appName"], "shop");
    assert_eq!(data[0]["environment"], "production");
    assert_eq!(data[0]["yes"], 3);
    assert_eq!(data[0]["no"], 1);
    assert_eq!(data[0]["variants"]["blue"], 2);

    // The overview.
    let overview = get(t, "/api/admin/metrics/applications/shop/overview").await;
    assert_eq!(overview["projects"], json!(["p"]));
    assert_eq!(overview["featureCount"], 2);
    assert_eq!(overview["issues"]["missingStrategies"], json!(["custom-x"]));
    let environments = overview["environments"].as_array().unwrap();
    assert_eq!(environments.len(), 1, "{overview}");
    let production = &environments[0];
    assert_eq!(production["name"], "production");
    assert_eq!(production["instanceCount"], 1);
    assert_eq!(production["sdks"], json!(["unleash-client-node:5.0.0"]));
    assert!(production["lastSeen"].is_string());
    assert_eq!(production["issues"]["missingFeatures"], json!(["ghost"]));
    assert_eq!(
        production["issues"]["outdatedSdks"],
        json!(["unleash-client-node:5.0.0"])
    );

    // The instances in one environment.
    let instances = get(
        t,
        "/api/admin/metrics/instances/shop/environment/production",
    )
    .await;
    assert_eq!(
        instances["instances"].as_array().unwrap().len(),
        1,
        "{instances}"
    );
    assert_eq!(instances["instances"][0]["instanceId"], "pod-1");
    assert_eq!(
        instances["instances"][0]["sdkVersion"],
        "unleash-client-node:5.0.0"
    );
    assert_eq!(
        get(
            t,
            "/api/admin/metrics/instances/shop/environment/development"
        )
        .await["instances"],
        json!([])
    );
    t.call(
        Method::GET,
        "/api/admin/metrics/instances/nope/environment/production",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // The applications of a project.
    let apps = get(t, "/api/admin/projects/p/applications").await;
    assert_eq!(apps["total"], 1);
    assert_eq!(
        apps["applications"],
        json!([{
            "name": "shop",
            "environments": ["production"],
            "instances": ["pod-1"],
            "sdks": [{"name": "unleash-client-node", "versions": ["5.0.0"]}]
        }])
    );
    assert_eq!(
        get(t, "/api/admin/projects/other/applications").await["total"],
        0
    );
    assert_eq!(
        get(t, "/api/admin/projects/p/applications?query=nothing").await["total"],
        0
    );
    assert_eq!(
        get(t, "/api/admin/projects/p/applications?query=POD").await["total"],
        1
    );
    let paged = get(
        t,
        "/api/admin/projects/p/applications?offset=1&limit=10&sortBy=type&sortOrder=desc",
    )
    .await;
    assert_eq!(paged["total"], 1);
    assert_eq!(paged["applications"], json!([]));
    for (query, path) in [
        ("limit=many", "/limit"),
        ("offset=-2", "/offset"),
        ("sortOrder=up", "/sortOrder"),
    ] {
        let error = t
            .call(
                Method::GET,
                &format!("/api/admin/projects/p/applications?{query}"),
                None,
            )
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&error), [path], "{error}");
    }
    t.call(Method::GET, "/api/admin/projects/nope/applications", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    // One feature as the client API shows it, within the key's scope.
    let f = t
        .call_as(&sdk, Method::GET, "/api/client/features/f", None)
        .await;
    assert_eq!(f.status, StatusCode::OK, "{}", f.text());
    assert_eq!(f.json()["name"], "f");
    assert_eq!(f.json()["enabled"], false);
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let f = t
        .call_as(&sdk, Method::GET, "/api/client/features/f", None)
        .await
        .json();
    assert_eq!(f["enabled"], true);
    assert_eq!(f["strategies"][0]["name"], "flexibleRollout", "{f}");
    let p_only = key(
        t,
        json!({"tokenName": "p", "type": "client", "projects": ["p"], "environment": "production"}),
    )
    .await;
    t.call_as(&p_only, Method::GET, "/api/client/features/g", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(
        t.call_as(&p_only, Method::GET, "/api/client/features/f", None)
            .await
            .status,
        StatusCode::OK
    );
    t.call_as(&sdk, Method::GET, "/api/client/features/nope", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(Method::DELETE, "/api/admin/projects/p/features/f", None)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    t.call_as(&sdk, Method::GET, "/api/client/features/f", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    let frontend = key(
        t,
        json!({"tokenName": "web", "type": "frontend", "environment": "production"}),
    )
    .await;
    t.call_as(&frontend, Method::GET, "/api/client/features/g", None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
}

on_every_store!(scenario => observability_on_a_memory_store, observability_on_a_file_store, observability_on_a_postgres_store);
