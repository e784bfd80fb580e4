//! The delta API, `GET /api/client/delta`: hydration, the events since an event id, 304,
//! scoping by key, malformed `If-None-Match`, a client too far behind, bounded history.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::admin::PushConfig;
use tower::ServiceExt;

const DELTA: &str = "/api/client/delta";

async fn client_key(t: &Setup, body: Value) -> String {
    let r = t
        .call(Method::POST, "/api/admin/api-tokens", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()["secret"].as_str().unwrap().to_owned()
}

async fn prod_key(t: &Setup, projects: &[&str]) -> String {
    client_key(
        t,
        json!({"tokenName": "prod", "type": "client", "projects": projects, "environment": "production"}),
    )
    .await
}

async fn get(t: &Setup, key: &str, path: &str, headers: &[(&str, &str)]) -> Reply {
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::AUTHORIZATION, key);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = t
        .app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: body.to_vec(),
    }
}

fn etag(r: &Reply) -> String {
    r.headers
        .get(header::ETAG)
        .unwrap_or_else(|| panic!("no ETag: {:?}", r.headers))
        .to_str()
        .unwrap()
        .to_owned()
}

/// The event id in an ETag `"<n>"`.
fn id_of(etag: &str) -> u64 {
    etag.trim_matches('"').parse().unwrap()
}

fn types(delta: &Value) -> Vec<String> {
    delta["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn toggle(t: &Setup, project: &str, feature: &str, on: bool) {
    let r = t
        .call(
            Method::POST,
            &format!(
                "/api/admin/projects/{project}/features/{feature}/environments/production/{}",
                if on { "on" } else { "off" }
            ),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}

#[tokio::test]
async fn the_first_call_hydrates_with_an_etag_of_its_event_id() {
    let t = setup().await;
    let key = prod_key(&t, &["p"]).await;
    let r = get(&t, &key, DELTA, &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.content_type().as_deref(),
        Some("application/json; charset=utf-8")
    );
    let delta = r.json();
    assert_eq!(types(&delta), ["hydration"]);
    let hydration = &delta["events"][0];
    let id = hydration["eventId"].as_u64().unwrap();
    assert!(id > 0);
    assert_eq!(etag(&r), format!("\"{id}\""));
    let names: Vec<&str> = hydration["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["f"], "the key sees project p only");
    assert_eq!(hydration["segments"], json!([]));
    // The same as the wire type of unleash-types.
    let typed: toggle_admin::unleash_types::client_features::ClientFeaturesDelta =
        serde_json::from_value(delta.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap()["events"][0]["type"],
        "hydration"
    );
}

#[tokio::test]
async fn later_calls_get_the_events_since_or_304() {
    let t = setup().await;
    let key = prod_key(&t, &["p"]).await;
    let first = get(&t, &key, DELTA, &[]).await;
    let tag = etag(&first);
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    assert_eq!(etag(&r), tag);
    assert!(r.body.is_empty());

    toggle(&t, "p", "f", true).await;
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let delta = r.json();
    assert_eq!(types(&delta), ["feature-updated"]);
    let event = &delta["events"][0];
    assert_eq!(event["feature"]["name"], "f");
    assert_eq!(event["feature"]["enabled"], true);
    let next = etag(&r);
    assert_eq!(next, format!("\"{}\"", event["eventId"]));
    assert!(id_of(&next) > id_of(&tag));

    // A weak or unquoted ETag works as well.
    let r = get(&t, &key, DELTA, &[("if-none-match", &format!("W/{next}"))]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    let r = get(
        &t,
        &key,
        DELTA,
        &[("if-none-match", next.trim_matches('"'))],
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);

    // Archiving removes it, with its project.
    let r = t
        .call(Method::DELETE, "/api/admin/projects/p/features/f", None)
        .await;
    assert!(r.status.is_success(), "{}", r.text());
    let r = get(&t, &key, DELTA, &[("if-none-match", &next)]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json()["events"],
        json!([{"type": "feature-removed", "eventId": id_of(&etag(&r)), "featureName": "f", "project": "p"}])
    );
    // From the first ETag: the state since then, the feature gone.
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    assert_eq!(types(&r.json()), ["feature-updated", "feature-removed"]);
}

#[tokio::test]
async fn a_change_the_key_cannot_see_produces_no_event() {
    let t = setup().await;
    let key = prod_key(&t, &["p"]).await;
    let tag = etag(&get(&t, &key, DELTA, &[]).await);
    // Project `other`'s feature, and `p`'s feature in another environment.
    toggle(&t, "other", "g", true).await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/development/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED, "{}", r.text());
    // A key of every project sees `g` change.
    let all = client_key(
        &t,
        json!({"tokenName": "all", "type": "client", "environment": "production"}),
    )
    .await;
    let tag_all = etag(&get(&t, &all, DELTA, &[]).await);
    toggle(&t, "other", "g", false).await;
    let r = get(&t, &all, DELTA, &[("if-none-match", &tag_all)]).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["events"][0]["feature"]["name"], "g");
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
}

#[tokio::test]
async fn segments_come_as_segment_events_before_the_features_using_them() {
    let t = setup().await;
    let key = prod_key(&t, &["p"]).await;
    let tag = etag(&get(&t, &key, DELTA, &[]).await);
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "beta", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["1"]}
            ]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let segment = r.json()["id"].as_i64().unwrap();
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/strategies",
            Some(&json!({"name": "default", "segments": [segment]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = get(&t, &key, DELTA, &[("if-none-match", &tag)]).await;
    let delta = r.json();
    assert_eq!(types(&delta), ["segment-updated", "feature-updated"]);
    assert_eq!(delta["events"][0]["segment"]["id"], segment);
    assert_eq!(
        delta["events"][1]["feature"]["strategies"][0]["segments"],
        json!([segment])
    );
    let tag = etag(&r);
    // The strategy goes: the segment is no longer used, so it is removed.
    let strategies = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/f/environments/production/strategies",
            None,
        )
        .await
        .json();
    let id = strategies[0]["id"].as_str().unwrap().to_owned();
    let r = t
        .call(
            Method::DELETE,
            &format!("/api/admin/projects/p/features/f/environments/production/strategies/{id}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let delta = get(&t, &key, DELTA, &[("if-none-match", &tag)])
        .await
        .json();
    assert_eq!(types(&delta), ["segment-removed", "feature-updated"]);
    assert_eq!(delta["events"][0]["segmentId"], segment);
}

#[tokio::test]
async fn malformed_unknown_or_future_event_ids_hydrate() {
    let t = setup().await;
    let key = prod_key(&t, &["p"]).await;
    for tag in ["garbage", "\"\"", "\"-1\"", "\"99999999\"", "\"1.5\"", "*"] {
        let r = get(&t, &key, DELTA, &[("if-none-match", tag)]).await;
        assert_eq!(r.status, StatusCode::OK, "{tag}: {}", r.text());
        assert_eq!(types(&r.json()), ["hydration"], "{tag}");
    }
    // A bad tag filter is a 400 naming it; a revoked key is a 401.
    let r = get(&t, &key, &format!("{DELTA}?tag=nocolon"), &[]).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = get(&t, "nope", DELTA, &[]).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_client_older_than_the_kept_history_hydrates() {
    let t = setup().await;
    t.admin.set_push_config(PushConfig {
        history_events: 2,
        ..PushConfig::default()
    });
    let key = prod_key(&t, &["p"]).await;
    let old = etag(&get(&t, &key, DELTA, &[]).await);
    toggle(&t, "p", "f", true).await;
    let one = etag(&get(&t, &key, DELTA, &[("if-none-match", &old)]).await);
    toggle(&t, "p", "f", false).await;
    let r = get(&t, &key, DELTA, &[("if-none-match", &one)]).await;
    assert_eq!(types(&r.json()), ["feature-updated"]);
    toggle(&t, "p", "f", true).await;
    // Three changes, two kept: from `one` still answered, from `old` a hydration.
    let r = get(&t, &key, DELTA, &[("if-none-match", &one)]).await;
    assert_eq!(types(&r.json()), ["feature-updated", "feature-updated"]);
    let r = get(&t, &key, DELTA, &[("if-none-match", &old)]).await;
    assert_eq!(types(&r.json()), ["hydration"]);
    assert_eq!(r.json()["events"][0]["features"][0]["enabled"], true);
}

#[tokio::test]
async fn project_filters_narrow_the_scope() {
    let t = setup().await;
    let all = client_key(
        &t,
        json!({"tokenName": "all", "type": "client", "environment": "production"}),
    )
    .await;
    let r = get(&t, &all, &format!("{DELTA}?project=other"), &[]).await;
    let names: Vec<String> = r.json()["events"][0]["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["g"]);
    let tag = etag(&r);
    toggle(&t, "p", "f", true).await;
    let r = get(
        &t,
        &all,
        &format!("{DELTA}?project=other"),
        &[("if-none-match", &tag)],
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
}
