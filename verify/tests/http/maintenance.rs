//! Maintenance mode through the router: root admins turn it on and off; while it is on every
//! change is refused with 503 `MaintenanceModeError` (PATCH and the variants path included)
//! and nothing changes, while reads, the playground, the client and frontend APIs, SDK
//! registrations and metrics go on; over every store, and across two instances sharing one
//! PostgreSQL schema.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use test_support::store::TempDir;
use toggle_admin::model::{Grant, MaintenanceMode, NewFeature, Permission};
use toggle_admin::{Error, FileStore, MemoryStore, Store, ToggleAdmin};

const MAINTENANCE: &str = "/api/admin/maintenance";

async fn key(t: &Setup, kind: &str) -> String {
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": kind, "type": kind, "environment": "production"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()["secret"].as_str().unwrap().to_owned()
}

async fn event_types(t: &Setup) -> Vec<String> {
    let r = t.call(Method::GET, "/api/admin/events", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

/// Every kind of change the admin API makes, each refused.
fn writes() -> Vec<(Method, &'static str, Value)> {
    vec![
        (
            Method::POST,
            "/api/admin/projects/p/features",
            json!({"name": "new-flag"}),
        ),
        (
            Method::PATCH,
            "/api/admin/projects/p/features/f",
            json!([{"op": "replace", "path": "/description", "value": "changed"}]),
        ),
        (
            Method::PATCH,
            "/api/admin/projects/p/features/f/environments/production/variants",
            json!([{"op": "add", "path": "/-", "value": {"name": "blue", "weight": 1000}}]),
        ),
        (
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/on",
            Value::Null,
        ),
        (
            Method::DELETE,
            "/api/admin/projects/p/features/f",
            Value::Null,
        ),
        (
            Method::POST,
            "/api/admin/features-batch/import",
            json!({"project": "p", "environment": "production",
                   "data": {"features": [{"name": "imported", "project": "p"}],
                            "featureStrategies": [], "tagTypes": []}}),
        ),
        (
            Method::POST,
            "/api/admin/environments",
            json!({"name": "qa", "type": "test"}),
        ),
    ]
}

async fn scenario(t: &Setup) {
    let r = t.call(Method::GET, MAINTENANCE, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json(), json!({"enabled": false}));

    // Only root admins may switch it; a bad body is a 400 and switches nothing.
    let editor = t
        .key_with(vec![Grant::everywhere(Permission::CreateFeature)])
        .await;
    let on = json!({"enabled": true});
    let r = t
        .call_as(&editor, Method::POST, MAINTENANCE, Some(&on))
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call(Method::POST, MAINTENANCE, Some(&json!({"enabled": "yes"})))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(
        t.call(Method::GET, MAINTENANCE, None).await.json(),
        json!({"enabled": false})
    );

    let client = key(t, "client").await;
    let frontend = key(t, "frontend").await;
    let before = t.admin.store().revision().await.unwrap();
    let r = t.call(Method::POST, MAINTENANCE, Some(&on)).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert!(r.body.is_empty());
    assert_eq!(
        t.call(Method::GET, MAINTENANCE, None).await.json(),
        json!({"enabled": true})
    );
    // Every key may read it.
    let r = t.call_as(&editor, Method::GET, MAINTENANCE, None).await;
    assert_eq!(r.json(), json!({"enabled": true}));
    assert_eq!(
        event_types(t).await.first().map(String::as_str),
        Some("setting-created")
    );
    let switched = t.admin.store().revision().await.unwrap();
    assert!(switched > before);

    for (method, path, body) in writes() {
        let body = (!body.is_null()).then_some(body);
        let r = t.call(method.clone(), path, body.as_ref()).await;
        let error = r.error(StatusCode::SERVICE_UNAVAILABLE, "MaintenanceModeError");
        assert_eq!(
            error["message"], "Unleash is currently in maintenance mode.",
            "{method} {path}"
        );
    }
    // An import that would change nothing is no write: it passes (a server restarted with
    // a start-up file it already imported starts).
    let r = t
        .call(
            Method::POST,
            "/api/admin/features-batch/import",
            Some(&json!({"project": "p", "environment": "production",
                         "data": {"features": [{"name": "f", "project": "p", "type": "release"}],
                                  "featureStrategies": [], "tagTypes": []}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    // The facade refuses the same way (the admin page and embedders call it).
    let refused = t
        .admin
        .create_feature(
            &t.caller,
            "p",
            &NewFeature {
                name: "from-code".into(),
                ..Default::default()
            },
        )
        .await;
    assert!(
        matches!(refused, Err(Error::Maintenance { .. })),
        "{refused:?}"
    );
    assert_eq!(
        t.admin.store().revision().await.unwrap(),
        switched,
        "nothing changed"
    );

    // Reads, the playground and the SDKs' APIs go on; so do SDK registrations and metrics.
    let r = t
        .call(Method::GET, "/api/admin/projects/p/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/playground",
            Some(&json!({"environment": "production", "context": {"appName": "web"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call_as(&client, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call_as(&frontend, Method::GET, "/api/frontend?userId=1", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call_as(
            &client,
            Method::POST,
            "/api/client/register",
            Some(&json!({"appName": "checkout", "instanceId": "pod-1",
                         "strategies": ["default"], "started": "2026-01-01T00:00:00Z",
                         "interval": 10000})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let now = chrono::Utc::now().to_rfc3339();
    let r = t
        .call_as(
            &client,
            Method::POST,
            "/api/client/metrics",
            Some(&json!({"appName": "checkout", "instanceId": "pod-1",
                         "bucket": {"start": now, "stop": now,
                                    "toggles": {"f": {"yes": 3, "no": 1}}}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    t.admin.flush_client_metrics().await.unwrap();
    let stored = t.admin.feature_metrics(&t.caller, "f").await.unwrap();
    assert_eq!(stored.iter().map(|m| m.yes).sum::<u64>(), 3);
    let r = t
        .call(
            Method::GET,
            "/api/admin/metrics/applications/checkout",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    // Turning it off is allowed, and writes work again.
    let r = t
        .call(Method::POST, MAINTENANCE, Some(&json!({"enabled": false})))
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert_eq!(
        event_types(t).await.first().map(String::as_str),
        Some("setting-updated")
    );
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "new-flag"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
}

#[tokio::test]
async fn maintenance_mode_on_a_memory_store() {
    scenario(&setup_on(ToggleAdmin::new(MemoryStore::new())).await).await;
}

#[tokio::test]
async fn maintenance_mode_on_a_file_store() {
    let dir = TempDir::new("maintenance");
    let secret = {
        let store: Arc<dyn Store> = Arc::new(FileStore::open(dir.path()).unwrap());
        let t = setup_on(ToggleAdmin::from_arc(store)).await;
        scenario(&t).await;
        t.admin
            .set_maintenance(&t.caller, &MaintenanceMode { enabled: true })
            .await
            .unwrap();
        t.secret.clone()
    };
    // Durable: still on once the store is opened again.
    let admin = ToggleAdmin::new(FileStore::open(dir.path()).unwrap());
    let caller = admin.authenticate(Some(&secret)).await.unwrap();
    assert!(admin.maintenance(&caller).await.unwrap().enabled);
    let refused = admin
        .create_feature(
            &caller,
            "p",
            &NewFeature {
                name: "after-reopen".into(),
                ..Default::default()
            },
        )
        .await;
    assert!(
        matches!(refused, Err(Error::Maintenance { .. })),
        "{refused:?}"
    );
}

/// Two instances over one PostgreSQL schema: maintenance turned on through one refuses a
/// write on the other at once, even one whose instance last saw it off (its commit expects
/// the switch as it saw it, so it conflicts, looks again, and is refused), the variants
/// path included; turned off through the other, the first writes again.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn maintenance_mode_reaches_every_instance_over_postgres() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    let first: Arc<dyn Store> = Arc::new(schema.connect(4).await);
    let t = setup_on(ToggleAdmin::from_arc(first)).await;
    let second = ToggleAdmin::from_arc(Arc::new(schema.connect(4).await));
    let caller = second.authenticate(Some(&t.secret)).await.unwrap();
    let flag = |name: &str| NewFeature {
        name: name.into(),
        ..Default::default()
    };
    // The second instance writes once: it has seen maintenance off.
    second
        .create_feature(&caller, "p", &flag("seen-off"))
        .await
        .unwrap();
    let variants = "/api/admin/projects/p/features/f/environments/production/variants";
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "blue", "weight": 1000}}]);
    let second_app = toggle_admin::http::router(second.clone());
    let r = send(
        second_app.clone(),
        Method::PATCH,
        variants,
        Some(&t.secret),
        Some("application/json"),
        patch.to_string().into_bytes(),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());

    t.admin
        .set_maintenance(&t.caller, &MaintenanceMode { enabled: true })
        .await
        .unwrap();
    let refused = second.create_feature(&caller, "p", &flag("late")).await;
    assert!(
        matches!(refused, Err(Error::Maintenance { .. })),
        "{refused:?}"
    );
    let r = send(
        second_app.clone(),
        Method::PATCH,
        variants,
        Some(&t.secret),
        Some("application/json"),
        json!([{"op": "replace", "path": "/0/name", "value": "green"}])
            .to_string()
            .into_bytes(),
    )
    .await;
    r.error(StatusCode::SERVICE_UNAVAILABLE, "MaintenanceModeError");
    assert!(second.maintenance(&caller).await.unwrap().enabled);

    // Turned off through the second instance: the first writes again.
    second
        .set_maintenance(&caller, &MaintenanceMode { enabled: false })
        .await
        .unwrap();
    t.admin
        .create_feature(&t.caller, "p", &flag("after"))
        .await
        .unwrap();
    let names: Vec<String> = t
        .call(Method::GET, "/api/admin/projects/p/features", None)
        .await
        .json()["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"after".to_owned()), "{names:?}");
    assert!(!names.contains(&"late".to_owned()), "{names:?}");
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn maintenance_mode_on_a_postgres_store() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    let store: Arc<dyn Store> = Arc::new(schema.connect(4).await);
    scenario(&setup_on(ToggleAdmin::from_arc(store)).await).await;
}
