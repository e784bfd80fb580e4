//! Feature strategies in Unleash's shapes: the requests an administrator
//! (or a client-specification set-up) sends to Unleash 6.10.1's admin API, and what that
//! Unleash answered to them, recorded against `unleash-server@6.10.1` (only the
//! strategy ids, which are random, are left out of the comparisons). The state they set is
//! then read back through `GET /api/client/features`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const ENV: &str = "/api/admin/projects/p/features/f/environments/development";

/// The answer without its `id` (random on both servers).
fn without_id(mut strategy: Value) -> Value {
    strategy.as_object_mut().unwrap().remove("id");
    strategy
}

async fn post(t: &Setup, body: Value) -> Value {
    let r = t
        .call(Method::POST, &format!("{ENV}/strategies"), Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{body}: {}", r.text());
    r.json()
}

async fn segment(t: &Setup) -> i64 {
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "shape-seg", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7"]}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()["id"].as_i64().unwrap()
}

#[tokio::test]
async fn strategies_are_created_and_listed_as_unleash_does() {
    let t = setup().await;
    let seg = segment(&t).await;

    let minimal = post(&t, json!({"name": "default"})).await;
    assert_eq!(
        without_id(minimal),
        json!({"name": "default", "constraints": [], "parameters": {}, "variants": [], "segments": [], "title": null, "disabled": false, "sortOrder": 0})
    );

    // Numbers where Unleash's schema wants strings, constraint flags, a segment, variants, an
    // explicit sortOrder.
    let full = post(
        &t,
        json!({
            "name": "flexibleRollout", "title": "T", "disabled": false, "sortOrder": 5,
            "parameters": {"rollout": 50, "stickiness": "userId", "groupId": "g"},
            "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["1", 2]},
                {"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2022-01-01T00:00:00.000Z", "inverted": true},
                {"contextName": "appName", "operator": "STR_CONTAINS", "values": ["aB"], "caseInsensitive": true},
                {"contextName": "userId", "operator": "NUM_GT", "value": 5}
            ],
            "segments": [seg],
            "variants": [{"name": "v", "weight": 1000, "weightType": "variable", "stickiness": "default"}]
        }),
    )
    .await;
    assert_eq!(
        without_id(full),
        json!({
            "name": "flexibleRollout",
            "constraints": [
                {"values": ["1", "2"], "operator": "IN", "contextName": "userId"},
                {"value": "2022-01-01T00:00:00.000Z", "values": [], "inverted": true, "operator": "DATE_AFTER", "contextName": "currentTime"},
                {"values": ["aB"], "operator": "STR_CONTAINS", "contextName": "appName", "caseInsensitive": true},
                {"value": "5", "values": [], "operator": "NUM_GT", "contextName": "userId"}
            ],
            "parameters": {"groupId": "g", "rollout": "50", "stickiness": "userId"},
            "variants": [{"name": "v", "weight": 1000, "stickiness": "default", "weightType": "variable"}],
            "segments": [seg], "title": "T", "disabled": false, "sortOrder": 5
        })
    );

    // The operand an operator does not use is kept; the next sortOrder is max + 1.
    let both = post(
        &t,
        json!({"name": "default", "constraints": [
            {"contextName": "userId", "operator": "NUM_EQ", "value": "3", "values": ["1"]},
            {"contextName": "userId", "operator": "IN", "value": "x", "values": ["1"]}
        ]}),
    )
    .await;
    assert_eq!(
        without_id(both),
        json!({"name": "default", "constraints": [
            {"value": "3", "values": ["1"], "operator": "NUM_EQ", "contextName": "userId"},
            {"value": "x", "values": ["1"], "operator": "IN", "contextName": "userId"}
        ], "parameters": {}, "variants": [], "segments": [], "title": null, "disabled": false, "sortOrder": 6})
    );

    // `disabled: null` stays null; a sortOrder below the others goes before them, which keep
    // theirs.
    let nulls = post(
        &t,
        json!({"name": "default", "disabled": null, "title": null, "sortOrder": 1}),
    )
    .await;
    assert_eq!(
        without_id(nulls),
        json!({"name": "default", "constraints": [], "parameters": {}, "variants": [], "segments": [], "title": null, "disabled": null, "sortOrder": 1})
    );
    let disabled = post(&t, json!({"name": "default", "disabled": true})).await;
    assert_eq!(disabled["sortOrder"], 7);
    assert_eq!(disabled["disabled"], true);

    // Numeric strings where Unleash wants numbers are coerced too.
    let coerced = post(
        &t,
        json!({"name": "default", "segments": [seg.to_string()], "sortOrder": "8"}),
    )
    .await;
    assert_eq!(coerced["segments"], json!([seg]));
    assert_eq!(coerced["sortOrder"], 8);

    let list = t
        .call(Method::GET, &format!("{ENV}/strategies"), None)
        .await
        .json();
    let orders: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["sortOrder"])
        .collect();
    assert_eq!(orders, [0, 1, 5, 6, 7, 8]);
    assert!(list[0].get("featureName").is_none(), "{list}");
    let id = list[2]["id"].as_str().unwrap();
    let one = t
        .call(Method::GET, &format!("{ENV}/strategies/{id}"), None)
        .await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.text());
    assert_eq!(one.json(), list[2]);

    // What an SDK gets: the enabled strategies in sort order, segments inlined (the answer
    // without the client-spec header), `values` always there.
    t.call(Method::POST, &format!("{ENV}/on"), None).await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "environment": "development", "projects": ["p"]})),
        )
        .await;
    let client = r.json()["secret"].as_str().unwrap().to_owned();
    let features = t
        .call_as(&client, Method::GET, "/api/client/features", None)
        .await
        .json();
    let f = features["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "f")
        .unwrap();
    let strategies = f["strategies"].as_array().unwrap();
    assert_eq!(strategies.len(), 5, "the disabled one is left out: {f}");
    assert_eq!(strategies[2]["name"], "flexibleRollout");
    let constraints = strategies[2]["constraints"].as_array().unwrap();
    assert_eq!(constraints.len(), 5, "four own, one of the segment: {f}");
    assert_eq!(constraints[0]["values"], json!(["1", "2"]));
    assert_eq!(constraints[1]["inverted"], true);
    assert_eq!(constraints[2]["caseInsensitive"], true);
    assert_eq!(constraints[3]["value"], "5");
    assert_eq!(constraints[4]["values"], json!(["7"]));
    assert_eq!(strategies[2]["parameters"]["rollout"], "50");
}

#[tokio::test]
async fn updates_merge_and_sort_orders_are_set_as_unleash_does() {
    let t = setup().await;
    let seg = segment(&t).await;
    let first = post(
        &t,
        json!({"name": "default", "sortOrder": 3, "segments": [seg], "title": "one"}),
    )
    .await;
    let second = post(&t, json!({"name": "default"})).await;
    assert_eq!(second["sortOrder"], 4);
    let (s1, s2) = (
        first["id"].as_str().unwrap().to_owned(),
        second["id"].as_str().unwrap().to_owned(),
    );
    let put = |id: &str, body: Value| {
        let path = format!("{ENV}/strategies/{id}");
        let t = &t;
        async move {
            let r = t.call(Method::PUT, &path, Some(&body)).await;
            assert_eq!(r.status, StatusCode::OK, "{body}: {}", r.text());
            without_id(r.json())
        }
    };
    // Absent title, disabled, segments are kept; sortOrder in a PUT is ignored.
    assert_eq!(
        put(&s1, json!({"name": "default", "parameters": {}})).await,
        json!({"name": "default", "title": "one", "disabled": false, "constraints": [], "parameters": {}, "variants": [], "sortOrder": 3, "segments": [seg]})
    );
    assert_eq!(
        put(
            &s1,
            json!({"name": "default", "sortOrder": 9, "segments": [], "disabled": true})
        )
        .await,
        json!({"name": "default", "title": "one", "disabled": true, "constraints": [], "parameters": {}, "variants": [], "sortOrder": 3, "segments": []})
    );
    // Absent constraints are emptied, absent parameters kept, a null title kept, `name`
    // optional.
    put(
        &s2,
        json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}], "parameters": {"a": "b"}, "title": "x"}),
    )
    .await;
    assert_eq!(
        put(&s2, json!({"title": null})).await,
        json!({"name": "default", "title": "x", "disabled": false, "constraints": [], "parameters": {"a": "b"}, "variants": [], "sortOrder": 4, "segments": []})
    );

    // PATCH: a JSON Patch of the strategy, saved as a PUT of the result.
    let r = t
        .call(
            Method::PATCH,
            &format!("{ENV}/strategies/{s2}"),
            Some(&json!([{"op": "replace", "path": "/title", "value": "patched"}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        without_id(r.json()),
        json!({"name": "default", "title": "patched", "disabled": false, "constraints": [], "parameters": {"a": "b"}, "variants": [], "sortOrder": 4, "segments": []})
    );

    // set-sort-order: 200 without a body; unknown ids are ignored.
    let path = format!("{ENV}/strategies/set-sort-order");
    let r = t
        .call(
            Method::POST,
            &path,
            Some(&json!([{"id": s2, "sortOrder": 0}, {"id": s1, "sortOrder": 1}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.body.is_empty());
    let r = t
        .call(
            Method::POST,
            &path,
            Some(&json!([{"id": "nope", "sortOrder": 0}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let list = t
        .call(Method::GET, &format!("{ENV}/strategies"), None)
        .await
        .json();
    let order: Vec<(&str, i64)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap(), s["sortOrder"].as_i64().unwrap()))
        .collect();
    assert_eq!(order, [(s2.as_str(), 0), (s1.as_str(), 1)]);
    let events = t
        .call(Method::GET, "/api/admin/events?feature=f", None)
        .await
        .json();
    assert!(
        events["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "strategy-order-changed"),
        "{events}"
    );

    // Still refused as in Unleash: `IN` without values, an unknown strategy id.
    let r = t
        .call(
            Method::POST,
            &format!("{ENV}/strategies"),
            Some(&json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN"}]})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let r = t
        .call(Method::GET, &format!("{ENV}/strategies/nope"), None)
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
}

#[tokio::test]
async fn imported_strategies_keep_their_sort_order_as_in_unleash() {
    let t = setup().await;
    let body = json!({"project": "p", "environment": "development", "data": {
        "features": [{"name": "imp", "type": "release", "project": "p"}],
        "featureStrategies": [
            {"name": "default", "featureName": "imp", "sortOrder": 5},
            {"name": "default", "featureName": "imp", "title": "next"},
            {"name": "default", "featureName": "imp", "sortOrder": 2}
        ],
        "featureEnvironments": [], "contextFields": [], "featureTags": [], "segments": [],
        "tagTypes": [], "dependencies": []
    }});
    let r = t
        .call(
            Method::POST,
            "/api/admin/features-batch/import",
            Some(&body),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let list = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/imp/environments/development/strategies",
            None,
        )
        .await
        .json();
    let orders: Vec<(Value, Value)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["sortOrder"].clone(), s["title"].clone()))
        .collect();
    assert_eq!(
        orders,
        [
            (json!(2), Value::Null),
            (json!(5), Value::Null),
            (json!(6), json!("next"))
        ]
    );
}
