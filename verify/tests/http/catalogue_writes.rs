//! The catalogue's writes through the router: segments updated, deleted and attached,
//! context fields, strategy definitions, tag types and tags changed and deleted; in-use
//! deletions refused naming the flags; an event per change; over memory, file and
//! PostgreSQL stores.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::{Reply, Setup, setup_on};
use test_support::store::TempDir;
use toggle_admin::store::{FileStore, Store};
use toggle_admin::{MemoryStore, ToggleAdmin};

const TOKENS: &str = "/api/admin/api-tokens";
const PROD: &str = "/api/admin/projects/p/features/f/environments/production";

async fn ok(t: &Setup, method: Method, path: &str, body: Option<&Value>) -> Value {
    let r = t.call(method, path, body).await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

async fn secret(t: &Setup, kind: &str) -> String {
    let body = json!({"tokenName": kind, "type": kind, "environment": "production"});
    ok(t, Method::POST, TOKENS, Some(&body)).await["secret"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The event types recorded, oldest first.
async fn event_types(t: &Setup) -> Vec<String> {
    let events = ok(t, Method::GET, "/api/admin/events", None).await;
    let mut types: Vec<(i64, String)> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["id"].as_i64().unwrap(),
                e["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    types.sort();
    types.into_iter().map(|(_, t)| t).collect()
}

async fn last_event(t: &Setup) -> String {
    event_types(t).await.pop().unwrap_or_default()
}

fn enabled(reply: &Reply, flag: &str) -> bool {
    reply.json()["toggles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == flag && t["enabled"] == true)
}

async fn segments(t: &Setup, store: &dyn Store) {
    ok(
        t,
        Method::POST,
        "/api/admin/context",
        Some(&json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]})),
    )
    .await;
    let eu = json!({"name": "eu", "constraints": [
        {"contextName": "region", "operator": "IN", "values": ["eu"]}
    ]});
    let id = ok(t, Method::POST, "/api/admin/segments", Some(&eu)).await["id"]
        .as_i64()
        .unwrap();
    let other = ok(
        t,
        Method::POST,
        "/api/admin/segments",
        Some(&json!({"name": "other-only", "project": "other"})),
    )
    .await["id"]
        .as_i64()
        .unwrap();

    // Validate: free 204, taken 409, invalid 400.
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments/validate",
            Some(&json!({"name": "free"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    t.call(
        Method::POST,
        "/api/admin/segments/validate",
        Some(&json!({"name": "eu"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    t.call(
        Method::POST,
        "/api/admin/segments/validate",
        Some(&json!({"name": ""})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");

    // A strategy on f in production, without segments, then attached.
    let strategy = ok(
        t,
        Method::POST,
        &format!("{PROD}/strategies"),
        Some(&json!({"name": "default"})),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ok(t, Method::POST, &format!("{PROD}/on"), None).await;
    let attach = json!({"projectId": "p", "strategyId": strategy, "environmentId": "production", "segmentIds": [id]});
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments/strategies",
            Some(&attach),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert_eq!(r.json(), attach);
    assert_eq!(last_event(t).await, "feature-strategy-update");
    let events = event_types(t).await.len();
    // Attaching again changes nothing.
    ok(
        t,
        Method::POST,
        "/api/admin/segments/strategies",
        Some(&attach),
    )
    .await;
    assert_eq!(event_types(t).await.len(), events);
    // A segment of another project, an unknown segment, an unknown strategy.
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments/strategies",
            Some(&json!({"projectId": "p", "strategyId": strategy, "environmentId": "production", "segmentIds": [id, other]})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(body["details"][0]["path"], "segmentIds[1]", "{body}");
    t.call(
        Method::POST,
        "/api/admin/segments/strategies",
        Some(&json!({"projectId": "p", "strategyId": strategy, "environmentId": "production", "segmentIds": [999]})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::POST,
        "/api/admin/segments/strategies",
        Some(&json!({"projectId": "p", "strategyId": "nope", "environmentId": "production", "segmentIds": [id]})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // The strategies using it.
    let used = ok(
        t,
        Method::GET,
        &format!("/api/admin/segments/{id}/strategies"),
        None,
    )
    .await;
    assert_eq!(
        used["strategies"],
        json!([{"id": strategy, "projectId": "p", "featureName": "f", "strategyName": "default", "environment": "production"}]),
        "{used}"
    );
    assert_eq!(used["changeRequestStrategies"], json!([]));
    t.call(Method::GET, "/api/admin/segments/999/strategies", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Evaluated: on for eu, off for us; the client document inlines the constraints.
    let frontend = secret(t, "frontend").await;
    let client = secret(t, "client").await;
    let eval = |region: &'static str| {
        let frontend = frontend.clone();
        async move {
            t.call_as(
                &frontend,
                Method::GET,
                &format!("/api/frontend?properties[region]={region}"),
                None,
            )
            .await
        }
    };
    assert!(enabled(&eval("eu").await, "f"));
    assert!(!enabled(&eval("us").await, "f"));
    let doc = t
        .call_as(&client, Method::GET, "/api/client/features", None)
        .await
        .json();
    assert!(doc.to_string().contains("\"eu\""), "{doc}");

    // Updated: 204, an event, and both APIs follow.
    let us = json!({"name": "eu", "description": "now us", "constraints": [
        {"contextName": "region", "operator": "IN", "values": ["us"]}
    ]});
    let r = t
        .call(Method::PUT, &format!("/api/admin/segments/{id}"), Some(&us))
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert!(r.body.is_empty());
    assert_eq!(last_event(t).await, "segment-updated");
    let read = ok(t, Method::GET, &format!("/api/admin/segments/{id}"), None).await;
    assert_eq!(read["description"], "now us");
    assert!(!enabled(&eval("eu").await, "f"));
    assert!(enabled(&eval("us").await, "f"));
    let doc = t
        .call_as(&client, Method::GET, "/api/client/features", None)
        .await
        .json();
    assert!(doc.to_string().contains("\"us\""), "{doc}");
    // Update refusals: a taken name, an unknown context field, moved to a project its
    // users are not in, an unknown segment.
    t.call(
        Method::PUT,
        &format!("/api/admin/segments/{id}"),
        Some(&json!({"name": "other-only"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    t.call(
        Method::PUT,
        &format!("/api/admin/segments/{id}"),
        Some(&json!({"name": "eu", "constraints": [{"contextName": "nope", "operator": "IN", "values": ["x"]}]})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    let body = t
        .call(
            Method::PUT,
            &format!("/api/admin/segments/{id}"),
            Some(&json!({"name": "eu", "project": "other"})),
        )
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(
        body["message"].as_str().unwrap().contains("\"f\""),
        "{body}"
    );
    t.call(
        Method::PUT,
        "/api/admin/segments/999",
        Some(&json!({"name": "x"})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Deleting it while used: 409 naming the flag, nothing changed.
    let revision = store.revision().await.unwrap();
    let body = t
        .call(Method::DELETE, &format!("/api/admin/segments/{id}"), None)
        .await
        .error(StatusCode::CONFLICT, "ConflictError");
    assert!(
        body["message"].as_str().unwrap().contains("\"f\""),
        "{body}"
    );
    assert!(
        body["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("production"),
        "{body}"
    );
    assert_eq!(store.revision().await.unwrap(), revision);

    // Detached, then deleted: 204, an event, gone.
    let detach = json!({"projectId": "p", "strategyId": strategy, "environmentId": "production", "segmentIds": []});
    ok(
        t,
        Method::POST,
        "/api/admin/segments/strategies",
        Some(&detach),
    )
    .await;
    assert!(enabled(&eval("eu").await, "f"));
    let r = t
        .call(Method::DELETE, &format!("/api/admin/segments/{id}"), None)
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.text());
    assert_eq!(last_event(t).await, "segment-deleted");
    t.call(Method::GET, &format!("/api/admin/segments/{id}"), None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(Method::DELETE, &format!("/api/admin/segments/{id}"), None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

async fn context_fields(t: &Setup, store: &dyn Store) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/context/validate",
            Some(&json!({"name": "tier"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    t.call(
        Method::POST,
        "/api/admin/context/validate",
        Some(&json!({"name": "userId"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    t.call(
        Method::POST,
        "/api/admin/context/validate",
        Some(&json!({"name": "a b"})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    ok(
        t,
        Method::POST,
        "/api/admin/context",
        Some(&json!({"name": "tier", "legalValues": [{"value": "gold"}]})),
    )
    .await;
    t.call(
        Method::POST,
        "/api/admin/context/validate",
        Some(&json!({"name": "tier"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");

    // Update: description, stickiness, sort order, legal values; an event.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/context/tier",
            Some(
                &json!({"description": "Plan", "stickiness": true, "sortOrder": 3,
                         "legalValues": [{"value": "gold"}, {"value": "silver"}]}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "context-field-updated");
    let field = ok(t, Method::GET, "/api/admin/context/tier", None).await;
    assert_eq!(field["description"], "Plan");
    assert_eq!(field["stickiness"], true);
    assert_eq!(field["sortOrder"], 3);
    assert_eq!(field["legalValues"][1]["value"], "silver", "{field}");
    let body = t
        .call(
            Method::PUT,
            "/api/admin/context/tier",
            Some(&json!({"legalValues": [{"value": "a"}, {"value": "a"}]})),
        )
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(body["details"][0]["path"], "legalValues[1].value", "{body}");
    t.call(
        Method::PUT,
        "/api/admin/context/nope",
        Some(&json!({"description": "x"})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(
        Method::PUT,
        "/api/admin/context/userId",
        Some(&json!({"description": "x"})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");

    // Legal values: add, change a description, remove.
    let r = t
        .call(
            Method::POST,
            "/api/admin/context/tier/legal-values",
            Some(&json!({"value": "bronze", "description": "cheap"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    ok(
        t,
        Method::POST,
        "/api/admin/context/tier/legal-values",
        Some(&json!({"value": "gold", "description": "best"})),
    )
    .await;
    let field = ok(t, Method::GET, "/api/admin/context/tier", None).await;
    assert_eq!(
        field["legalValues"],
        json!([{"value": "gold", "description": "best"}, {"value": "silver"}, {"value": "bronze", "description": "cheap"}])
    );
    let r = t
        .call(
            Method::DELETE,
            "/api/admin/context/tier/legal-values/silver",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "context-field-updated");
    t.call(
        Method::DELETE,
        "/api/admin/context/tier/legal-values/silver",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Used by a strategy's constraint: listed, and the deletion refused naming the flag.
    let strategy = ok(
        t,
        Method::POST,
        &format!("{PROD}/strategies"),
        Some(&json!({"name": "default", "constraints": [
            {"contextName": "tier", "operator": "IN", "values": ["gold"]}
        ]})),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let used = ok(t, Method::GET, "/api/admin/context/tier/strategies", None).await;
    assert_eq!(
        used["strategies"],
        json!([{"id": strategy, "projectId": "p", "featureName": "f", "strategyName": "default", "environment": "production"}]),
        "{used}"
    );
    t.call(Method::GET, "/api/admin/context/nope/strategies", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    let revision = store.revision().await.unwrap();
    let body = t
        .call(Method::DELETE, "/api/admin/context/tier", None)
        .await
        .error(StatusCode::CONFLICT, "ConflictError");
    assert!(
        body["message"].as_str().unwrap().contains("\"f\""),
        "{body}"
    );
    assert_eq!(store.revision().await.unwrap(), revision);
    ok(
        t,
        Method::DELETE,
        &format!("{PROD}/strategies/{strategy}"),
        None,
    )
    .await;

    // Used by a segment: refused too.
    let segment = ok(
        t,
        Method::POST,
        "/api/admin/segments",
        Some(&json!({"name": "gold-users", "constraints": [
            {"contextName": "tier", "operator": "IN", "values": ["gold"]}
        ]})),
    )
    .await["id"]
        .as_i64()
        .unwrap();
    let body = t
        .call(Method::DELETE, "/api/admin/context/tier", None)
        .await
        .error(StatusCode::CONFLICT, "ConflictError");
    assert!(
        body["message"].as_str().unwrap().contains("gold-users"),
        "{body}"
    );
    ok(
        t,
        Method::DELETE,
        &format!("/api/admin/segments/{segment}"),
        None,
    )
    .await;

    // Deleted: gone from the list, an event; built-ins and unknown fields refused.
    let r = t
        .call(Method::DELETE, "/api/admin/context/tier", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "context-field-deleted");
    let list = ok(t, Method::GET, "/api/admin/context", None).await;
    assert!(
        !list.as_array().unwrap().iter().any(|f| f["name"] == "tier"),
        "{list}"
    );
    t.call(Method::DELETE, "/api/admin/context/tier", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(Method::DELETE, "/api/admin/context/userId", None)
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
}

async fn strategy_definitions(t: &Setup, store: &dyn Store) {
    ok(
        t,
        Method::POST,
        "/api/admin/strategies",
        Some(&json!({"name": "byTeam", "parameters": [{"name": "teams", "type": "list"}]})),
    )
    .await;
    // Deprecate and reactivate, a custom one and a built-in.
    for name in ["byTeam", "userWithId"] {
        let r = t
            .call(
                Method::POST,
                &format!("/api/admin/strategies/{name}/deprecate"),
                None,
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.text());
        assert_eq!(last_event(t).await, "strategy-deprecated");
        let read = ok(
            t,
            Method::GET,
            &format!("/api/admin/strategies/{name}"),
            None,
        )
        .await;
        assert_eq!(read["deprecated"], true, "{read}");
        let events = event_types(t).await.len();
        ok(
            t,
            Method::POST,
            &format!("/api/admin/strategies/{name}/deprecate"),
            None,
        )
        .await;
        assert_eq!(event_types(t).await.len(), events);
        ok(
            t,
            Method::POST,
            &format!("/api/admin/strategies/{name}/reactivate"),
            None,
        )
        .await;
        assert_eq!(last_event(t).await, "strategy-reactivated");
        let read = ok(
            t,
            Method::GET,
            &format!("/api/admin/strategies/{name}"),
            None,
        )
        .await;
        assert_eq!(read["deprecated"], false, "{read}");
    }
    t.call(
        Method::POST,
        "/api/admin/strategies/default/deprecate",
        None,
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(Method::POST, "/api/admin/strategies/nope/deprecate", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Deleting: a built-in 400, one in use 409 naming the flag, then deleted.
    t.call(
        Method::DELETE,
        "/api/admin/strategies/flexibleRollout",
        None,
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    let strategy = ok(
        t,
        Method::POST,
        &format!("{PROD}/strategies"),
        Some(&json!({"name": "byTeam", "parameters": {"teams": "a"}})),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let revision = store.revision().await.unwrap();
    let body = t
        .call(Method::DELETE, "/api/admin/strategies/byTeam", None)
        .await
        .error(StatusCode::CONFLICT, "ConflictError");
    assert!(
        body["message"].as_str().unwrap().contains("\"f\""),
        "{body}"
    );
    assert_eq!(store.revision().await.unwrap(), revision);
    ok(
        t,
        Method::DELETE,
        &format!("{PROD}/strategies/{strategy}"),
        None,
    )
    .await;
    let r = t
        .call(Method::DELETE, "/api/admin/strategies/byTeam", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "strategy-deleted");
    t.call(Method::GET, "/api/admin/strategies/byTeam", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(Method::DELETE, "/api/admin/strategies/byTeam", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

async fn tag_types(t: &Setup, store: &dyn Store) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/tag-types/validate",
            Some(&json!({"name": "team"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["valid"], true);
    t.call(
        Method::POST,
        "/api/admin/tag-types/validate",
        Some(&json!({"name": "simple"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    t.call(
        Method::POST,
        "/api/admin/tag-types/validate",
        Some(&json!({"name": "x"})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    ok(
        t,
        Method::POST,
        "/api/admin/tag-types",
        Some(&json!({"name": "team"})),
    )
    .await;
    let r = t
        .call(
            Method::PUT,
            "/api/admin/tag-types/team",
            Some(&json!({"name": "team", "description": "Owning team", "color": "#00FF00"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "tag-type-updated");
    let read = ok(t, Method::GET, "/api/admin/tag-types/team", None).await;
    assert_eq!(read["tagType"]["description"], "Owning team", "{read}");
    assert_eq!(read["tagType"]["color"], "#00FF00", "{read}");
    t.call(
        Method::PUT,
        "/api/admin/tag-types/team",
        Some(&json!({"name": "team", "color": "green"})),
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::PUT,
        "/api/admin/tag-types/nope",
        Some(&json!({"name": "nope"})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Tagged: deletion refused naming the flag; untagged: deleted.
    ok(
        t,
        Method::POST,
        "/api/admin/features/f/tags",
        Some(&json!({"type": "team", "value": "core"})),
    )
    .await;
    let revision = store.revision().await.unwrap();
    let body = t
        .call(Method::DELETE, "/api/admin/tag-types/team", None)
        .await
        .error(StatusCode::CONFLICT, "ConflictError");
    assert!(
        body["message"].as_str().unwrap().contains("\"f\""),
        "{body}"
    );
    assert_eq!(store.revision().await.unwrap(), revision);
    ok(
        t,
        Method::DELETE,
        "/api/admin/features/f/tags/team/core",
        None,
    )
    .await;
    let r = t
        .call(Method::DELETE, "/api/admin/tag-types/team", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(last_event(t).await, "tag-type-deleted");
    t.call(Method::GET, "/api/admin/tag-types/team", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(Method::DELETE, "/api/admin/tag-types/simple", None)
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
}

async fn run_on(store: Arc<dyn Store>) {
    let t = setup_on(ToggleAdmin::from_arc(store.clone())).await;
    segments(&t, store.as_ref()).await;
    context_fields(&t, store.as_ref()).await;
    strategy_definitions(&t, store.as_ref()).await;
    tag_types(&t, store.as_ref()).await;
}

/// Malformed bodies and paths on the catalogue's write routes: never a 5xx, and nothing
/// written (an empty update of an existing field is a 200 that changes nothing).
#[tokio::test]
async fn malformed_input_on_the_catalogue_writes_is_never_a_5xx() {
    let store = Arc::new(MemoryStore::new());
    let t = setup_on(ToggleAdmin::from_arc(store.clone())).await;
    ok(
        &t,
        Method::POST,
        "/api/admin/segments",
        Some(&json!({"name": "s"})),
    )
    .await;
    ok(
        &t,
        Method::POST,
        "/api/admin/context",
        Some(&json!({"name": "c"})),
    )
    .await;
    ok(
        &t,
        Method::POST,
        "/api/admin/tag-types",
        Some(&json!({"name": "tt"})),
    )
    .await;
    let revision = store.revision().await.unwrap();
    let bodies: Vec<&[u8]> = vec![
        b"",
        b"{",
        b"null",
        b"[]",
        b"42",
        b"\"x\"",
        b"{}",
        b"{\"name\": 5}",
        b"{\"name\": null}",
        b"{\"name\": \"\\u0000\"}",
        b"{\"unknown\": true}",
        b"{\"value\": {}}",
        b"{\"segmentIds\": \"1\"}",
        b"{\"projectId\": \"p\", \"strategyId\": \"x\", \"environmentId\": \"production\", \"segmentIds\": [1e400]}",
        b"{\"constraints\": [{\"contextName\": \"c\", \"operator\": \"NOPE\"}]}",
        b"{\"legalValues\": [{}]}",
        b"{\"legalValues\": \"x\"}",
        b"{\"sortOrder\": 1e100}",
        b"{\"color\": 7}",
    ];
    let routes = [
        (Method::PUT, "/api/admin/segments/1"),
        (Method::PUT, "/api/admin/segments/abc"),
        (Method::DELETE, "/api/admin/segments/-1"),
        (Method::DELETE, "/api/admin/segments/99999999999999999999"),
        (Method::GET, "/api/admin/segments/x/strategies"),
        (Method::POST, "/api/admin/segments/validate"),
        (Method::POST, "/api/admin/segments/strategies"),
        (Method::PUT, "/api/admin/context/c"),
        (Method::PUT, "/api/admin/context/%00"),
        (Method::POST, "/api/admin/context/validate"),
        (Method::POST, "/api/admin/context/c/legal-values"),
        (Method::DELETE, "/api/admin/context/c/legal-values/%FF"),
        (Method::DELETE, "/api/admin/strategies/%00"),
        (Method::POST, "/api/admin/strategies/%20/deprecate"),
        (Method::PUT, "/api/admin/tag-types/tt"),
        (Method::POST, "/api/admin/tag-types/validate"),
    ];
    for (method, path) in routes {
        for body in &bodies {
            let r = t
                .raw(
                    method.clone(),
                    path,
                    Some(&t.secret),
                    Some("application/json"),
                    body.to_vec(),
                )
                .await;
            assert!(
                !r.status.is_server_error(),
                "{method} {path} {}: {} {}",
                String::from_utf8_lossy(body),
                r.status,
                r.text()
            );
        }
    }
    assert_eq!(store.revision().await.unwrap(), revision);
}

#[tokio::test]
async fn catalogue_writes_on_a_memory_store() {
    run_on(Arc::new(MemoryStore::new())).await;
}

#[tokio::test]
async fn catalogue_writes_on_a_file_store() {
    let dir = TempDir::new("catalogue-writes");
    run_on(Arc::new(FileStore::open(dir.path()).unwrap())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn catalogue_writes_on_a_postgres_store() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    run_on(Arc::new(schema.connect(4).await)).await;
}
