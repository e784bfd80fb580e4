//! The supporting endpoints through the router (`oneshot`): projects, environments,
//! features, API tokens, the event log.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::{Grant, Permission};

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";

// ---- Supporting endpoints ----

#[tokio::test]
async fn projects_environments_features_round_trip() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/environments",
            Some(&json!({"name": "qa", "type": "test"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects",
            Some(&json!({"id": "shop", "name": "Shop", "featureNaming": {"pattern": "shop-.*"}})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects",
            Some(&json!({"id": "shop", "name": "Shop"})),
        )
        .await;
    r.error(StatusCode::CONFLICT, "NameExistsError");
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/shop/environments",
            Some(&json!({"environment": "qa"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body.is_empty());
    let r = t.call(Method::GET, "/api/admin/projects/shop", None).await;
    assert_eq!(r.json()["environments"], json!([{"environment": "qa"}]));
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/shop/features",
            Some(&json!({"name": "checkout"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/shop/features",
            Some(&json!({"name": "shop-checkout", "type": "experiment"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/shop/features/shop-checkout",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["type"], "experiment");
    assert_eq!(r.json()["environments"][0]["name"], "qa");
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/projects/shop/features/shop-checkout",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    assert!(r.body.is_empty());
    // Archived: read from the archive, not as a feature (as in Unleash).
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/shop/features/shop-checkout",
            None,
        )
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    let r = t
        .call(Method::GET, "/api/admin/archive/features/shop", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["version"], 2);
    assert_eq!(r.json()["features"][0]["name"], "shop-checkout");
    assert!(r.json()["features"][0]["archivedAt"].is_string());
    let r = t.call(Method::GET, "/api/admin/environments", None).await;
    let names: Vec<Value> = r.json()["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].clone())
        .collect();
    assert!(names.contains(&json!("qa")), "{names:?}");
}

#[tokio::test]
async fn api_tokens_create_list_use_revoke() {
    let t = setup().await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "ci", "type": "admin"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let token = r.json();
    let secret = token["secret"].as_str().unwrap().to_owned();
    assert_eq!(token["type"], "admin");
    let r = t
        .call_as(&secret, Method::GET, "/api/admin/projects/p", None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = t.call(Method::GET, "/api/admin/api-tokens", None).await;
    let listed = r.json();
    assert_eq!(listed["tokens"].as_array().unwrap().len(), 2);
    assert!(!r.text().contains(&secret), "secrets are never listed");
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "c", "type": "nonsense"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    // Revoke by secret, as Unleash does.
    let r = t
        .call(
            Method::DELETE,
            &format!("/api/admin/api-tokens/{secret}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call_as(&secret, Method::GET, "/api/admin/projects/p", None)
        .await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    let r = t
        .call(
            Method::DELETE,
            &format!("/api/admin/api-tokens/{}", uuid::Uuid::new_v4()),
            None,
        )
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
}

#[tokio::test]
async fn events_newest_first_with_filters() {
    let t = setup().await;
    let patch = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}]);
    t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
    let r = t.call(Method::GET, "/api/admin/events", None).await;
    assert_eq!(r.status, StatusCode::OK);
    let events = r.json();
    assert_eq!(events["version"], 1);
    assert_eq!(
        events["events"][0]["type"],
        "feature-environment-variants-updated"
    );
    let ids: Vec<u64> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");
    let r = t
        .call(Method::GET, "/api/admin/events?project=other", None)
        .await;
    let events = r.json();
    assert!(
        events["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["project"] == "other")
    );
    assert!(events["totalEvents"].as_u64().unwrap() >= 1);
    let r = t
        .call(Method::GET, "/api/admin/events?feature=f&limit=1", None)
        .await;
    let events = r.json();
    assert_eq!(events["events"].as_array().unwrap().len(), 1);
    assert_eq!(events["events"][0]["featureName"], "f");
    let r = t.call(Method::GET, "/api/admin/events?limit=x", None).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}

/// `type`, `before` and `offset` page and filter the log as the store does; unknown
/// parameters are refused.
#[tokio::test]
async fn events_by_type_with_a_cursor_or_an_offset() {
    let t = setup().await;
    for n in 0..3 {
        let patch =
            json!([{"op": "add", "path": "/-", "value": {"name": format!("v{n}"), "weight": 0}}]);
        t.call(Method::PATCH, VARIANTS, Some(&patch)).await;
    }
    let all = t.call(Method::GET, "/api/admin/events", None).await.json();
    let ids: Vec<u64> = all["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    let total = all["totalEvents"].as_u64().unwrap();
    assert_eq!(total, ids.len() as u64);

    let kind = "feature-environment-variants-updated";
    let typed = t
        .call(Method::GET, &format!("/api/admin/events?type={kind}"), None)
        .await
        .json();
    let typed = typed["events"].as_array().unwrap().clone();
    assert_eq!(typed.len(), 3);
    assert!(typed.iter().all(|e| e["type"] == kind));

    let newest = ids[0];
    let page = t
        .call(
            Method::GET,
            &format!("/api/admin/events?before={newest}&limit=2"),
            None,
        )
        .await
        .json();
    let page: Vec<u64> = page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_u64().unwrap())
        .collect();
    assert_eq!(page, ids[1..3]);
    assert_eq!(
        t.call(Method::GET, "/api/admin/events?offset=1&limit=2", None)
            .await
            .json()["events"][0]["id"],
        ids[1]
    );
    let r = t.call(Method::GET, "/api/admin/events?after=1", None).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
}

#[tokio::test]
async fn keys_with_grants_get_403_on_admin_routes() {
    let t = setup().await;
    let limited = t
        .key_with(vec![Grant::everywhere(Permission::CreateFeature)])
        .await;
    let r = t
        .call_as(
            &limited,
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "x", "type": "admin"})),
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call_as(
            &limited,
            Method::POST,
            "/api/admin/projects",
            Some(&json!({"id": "z", "name": "Z"})),
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
}
