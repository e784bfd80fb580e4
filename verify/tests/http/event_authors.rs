//! Who the event log says made a change, through the router over every store: a personal
//! access token (a key acting as a user) records its user's email, else its username, as
//! Unleash does; an admin key records its name. Every path that writes events agrees (a
//! change of the flow, the variants writers, the feature-level variants, the import, a
//! segment's creator), the event search finds the events by that name, and the event
//! creators list the user.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

async fn get(t: &Setup, path: &str) -> Value {
    let r = t.call(Method::GET, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "GET {path}: {}", r.text());
    r.json()
}

/// `method path body` with `key`, which must succeed; its JSON (`null` when empty).
async fn as_key(t: &Setup, key: &str, method: Method, path: &str, body: Option<Value>) -> Value {
    let r = t.call_as(key, method.clone(), path, body.as_ref()).await;
    assert!(r.status.is_success(), "{method} {path}: {}", r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// A user made of `body` (root role Admin unless it says otherwise), and the secret of a
/// personal access token of theirs named `token`.
async fn user_with_token(t: &Setup, mut body: Value, token: &str) -> (i64, String) {
    if body.get("rootRole").is_none() {
        body["rootRole"] = json!(1);
    }
    let r = t
        .call(Method::POST, "/api/admin/user-admin", Some(&body))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let id = r.json()["id"].as_i64().unwrap();
    let expires = (chrono::Utc::now() + chrono::TimeDelta::days(1)).to_rfc3339();
    let r = t
        .call(
            Method::POST,
            &format!("/api/admin/user-admin/{id}/tokens"),
            Some(&json!({"description": token, "expiresAt": expires})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    (id, r.json()["secret"].as_str().unwrap().to_owned())
}

/// The events whose `createdByUserId` is `id`, newest first.
async fn events_by_id(t: &Setup, id: i64) -> Vec<Value> {
    let found = get(
        t,
        &format!("/api/admin/search/events?createdBy=IS:{id}&limit=1000"),
    )
    .await;
    found["events"].as_array().unwrap().clone()
}

/// The events whose `createdBy` filter is `name`: their types, newest first.
async fn types_by_name(t: &Setup, name: &str) -> Vec<String> {
    let path = format!("/api/admin/search/events?createdBy=IS:{name}&limit=1000");
    let found = get(t, &path).await;
    let events = found["events"].as_array().unwrap();
    assert_eq!(found["total"], events.len(), "{found}");
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn scenario(t: &Setup) {
    let (alice, alice_key) = user_with_token(
        t,
        json!({"username": "alice", "email": "alice@example.com", "name": "Alice Liddell"}),
        "my-laptop-token",
    )
    .await;
    let (bob, bob_key) = user_with_token(t, json!({"username": "bob"}), "bob-token").await;

    // Alice, by every path that writes events.
    as_key(
        t,
        &alice_key,
        Method::POST,
        "/api/admin/projects/p/features",
        Some(json!({"name": "by-alice"})),
    )
    .await;
    as_key(
        t,
        &alice_key,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/production/on",
        None,
    )
    .await;
    as_key(
        t,
        &alice_key,
        Method::PATCH,
        "/api/admin/projects/p/features/f/environments/production/variants",
        Some(json!([{"op": "add", "path": "/-", "value": {"name": "a", "weightType": "variable", "weight": 1000}}])),
    )
    .await;
    as_key(
        t,
        &alice_key,
        Method::PATCH,
        "/api/admin/projects/p/features/f/variants",
        Some(json!([{"op": "add", "path": "/-", "value": {"name": "b", "weightType": "variable", "weight": 0}}])),
    )
    .await;
    as_key(
        t,
        &alice_key,
        Method::POST,
        "/api/admin/features-batch/import",
        Some(
            json!({"project": "p", "environment": "development", "data": {
                "features": [{"name": "imported-by-alice"}],
                "featureStrategies": [],
                "tagTypes": []
            }}),
        ),
    )
    .await;
    let segment = as_key(
        t,
        &alice_key,
        Method::POST,
        "/api/admin/segments",
        Some(json!({"name": "alices-segment", "constraints": []})),
    )
    .await;

    // Bob (no email) and the admin key.
    as_key(
        t,
        &bob_key,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/development/on",
        None,
    )
    .await;
    as_key(
        t,
        &t.secret,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/development/off",
        None,
    )
    .await;

    // Every event of Alice's records her email, none her key's name; the same for Bob's
    // username.
    let by_alice = events_by_id(t, alice).await;
    let types: Vec<&str> = by_alice
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    for kind in [
        "feature-created",
        "feature-environment-enabled",
        "feature-environment-variants-updated",
        "features-imported",
        "segment-created",
    ] {
        assert!(types.contains(&kind), "{kind} in {types:?}");
    }
    // The environment variants (one environment), then the feature-level variants (both of
    // the project's environments).
    assert_eq!(
        types
            .iter()
            .filter(|t| **t == "feature-environment-variants-updated")
            .count(),
        3,
        "{types:?}"
    );
    for e in &by_alice {
        assert_eq!(e["createdBy"], "alice@example.com", "{e}");
    }
    let by_bob = events_by_id(t, bob).await;
    // Enabling an environment without strategies adds the default one: two events.
    assert_eq!(by_bob.len(), 2, "{by_bob:?}");
    for e in &by_bob {
        assert_eq!(e["createdBy"], "bob", "{e}");
    }
    let newest = &get(t, "/api/admin/events/f").await["events"][0];
    assert_eq!(newest["type"], "feature-environment-disabled", "{newest}");
    assert_eq!(newest["createdBy"], "test-admin", "{newest}");
    assert_eq!(newest["createdByUserId"], -42, "{newest}");

    // The search finds them by the recorded name, not by the key's.
    let types: Vec<String> = by_alice
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(types_by_name(t, "alice@example.com").await, types);
    assert_eq!(
        types_by_name(t, "bob").await,
        ["feature-environment-enabled", "feature-strategy-add"]
    );
    assert!(types_by_name(t, "my-laptop-token").await.is_empty());
    assert!(types_by_name(t, "bob-token").await.is_empty());
    let either = get(
        t,
        "/api/admin/search/events?createdBy=IS_ANY_OF:alice@example.com,bob&limit=1000",
    )
    .await;
    assert_eq!(either["total"], by_alice.len() + by_bob.len(), "{either}");

    // The creators: Alice by her display name, Bob (who has none) by the name his events
    // record.
    let creators = get(t, "/api/admin/event-creators").await;
    let creators = creators.as_array().unwrap();
    assert!(
        creators.contains(&json!({"id": alice, "name": "Alice Liddell"})),
        "{creators:?}"
    );
    assert!(
        creators.contains(&json!({"id": bob, "name": "bob"})),
        "{creators:?}"
    );

    // What shows the creator elsewhere: a segment by the name events record, a feature as
    // Unleash shows its creator (the user, by display name).
    let segment = get(t, &format!("/api/admin/segments/{}", segment["id"])).await;
    assert_eq!(segment["createdBy"], "alice@example.com", "{segment}");
    let feature = get(t, "/api/admin/projects/p/features/by-alice").await;
    assert_eq!(feature["createdBy"]["id"], alice, "{feature}");
    assert_eq!(feature["createdBy"]["name"], "Alice Liddell", "{feature}");

    // A changed email is the author of the next change.
    let r = t
        .call(
            Method::PUT,
            &format!("/api/admin/user-admin/{alice}"),
            Some(&json!({"email": "alice@wonderland.example"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    as_key(
        t,
        &alice_key,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/production/off",
        None,
    )
    .await;
    let newest = &get(t, "/api/admin/events/f").await["events"][0];
    assert_eq!(newest["type"], "feature-environment-disabled", "{newest}");
    assert_eq!(newest["createdBy"], "alice@wonderland.example", "{newest}");
    assert_eq!(newest["createdByUserId"], alice, "{newest}");
}

on_every_store!(scenario => event_authors_on_a_memory_store, event_authors_on_a_file_store, event_authors_on_a_postgres_store);
