//! Two instances (two routers over two `PostgresStore`s with pools of their own) on one
//! schema: each decides a variant change on the records it knows, and another instance's
//! change since then is neither lost nor turned into a wrong answer.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::{Reply, Setup, send, setup_on};
use toggle_admin::{KeyAccess, ToggleAdmin};

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";

/// The first instance with the usual set-up, and a router of a second one.
async fn two_instances() -> Option<(Setup, axum::Router, test_support::postgres::TestSchema)> {
    let url = test_support::postgres::database_url()?;
    let schema = test_support::postgres::TestSchema::new(&url);
    let first = setup_on(ToggleAdmin::new(schema.connect(4).await)).await;
    let second = toggle_admin::http::router(ToggleAdmin::new(schema.connect(4).await));
    Some((first, second, schema))
}

async fn patch_on(app: &axum::Router, key: &str, ops: Value) -> Reply {
    send(
        app.clone(),
        Method::PATCH,
        VARIANTS,
        Some(key),
        Some("application/json"),
        ops.to_string().into_bytes(),
    )
    .await
}

fn add(name: &str) -> Value {
    json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 0}}])
}

fn names(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    reply.json()["variants"]
        .as_array()
        .unwrap_or_else(|| panic!("no variants: {}", reply.text()))
        .iter()
        .map(|v| v["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_revoked_on_one_instance_is_refused_on_the_other_at_once() {
    let Some((first, second, _schema)) = two_instances().await else {
        return;
    };
    let doomed = first
        .admin
        .create_api_key(&first.caller, "doomed", KeyAccess::Admin)
        .await
        .unwrap();
    // The second instance learns the key's record with its first change, and answers the
    // next from what it knows.
    assert_eq!(
        names(&patch_on(&second, &doomed.secret, add("a")).await),
        ["a"]
    );
    assert_eq!(
        names(&patch_on(&second, &doomed.secret, add("b")).await),
        ["a", "b"]
    );

    first
        .admin
        .revoke_api_key(&first.caller, doomed.info.id)
        .await
        .unwrap();

    let refused = patch_on(&second, &doomed.secret, add("c")).await;
    assert_eq!(
        refused.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        refused.text()
    );
    let read = send(
        second.clone(),
        Method::GET,
        VARIANTS,
        Some(&doomed.secret),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(read.status, StatusCode::UNAUTHORIZED, "{}", read.text());
    let after = first.call(Method::GET, VARIANTS, None).await;
    assert_eq!(
        names(&after),
        ["a", "b"],
        "the refused change left no trace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_change_on_one_instance_is_seen_by_the_next_change_on_the_other() {
    let Some((first, second, _schema)) = two_instances().await else {
        return;
    };
    let key = first.secret.clone();
    assert_eq!(names(&patch_on(&second, &key, add("a")).await), ["a"]);
    // The second instance still knows the list as ["a"].
    assert_eq!(
        names(&first.call(Method::PATCH, VARIANTS, Some(&add("b"))).await),
        ["a", "b"]
    );

    // Valid only on the list as it is now: not refused on what the second instance knew.
    let rename = json!([{"op": "replace", "path": "/1/name", "value": "c"}]);
    assert_eq!(names(&patch_on(&second, &key, rename).await), ["a", "c"]);

    // Valid only on the list as the second instance knows it: refused, on the list as it is.
    let removed = json!([{"op": "remove", "path": "/1"}]);
    assert_eq!(
        names(&first.call(Method::PATCH, VARIANTS, Some(&removed)).await),
        ["a"]
    );
    let stale = patch_on(&second, &key, removed).await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST, "{}", stale.text());
    let read = send(
        second.clone(),
        Method::GET,
        VARIANTS,
        Some(&key),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(names(&read), ["a"]);

    // An archived feature is refused at once, though the second instance knew it live.
    first
        .admin
        .archive_feature(&first.caller, "p", "f")
        .await
        .unwrap();
    let archived = patch_on(&second, &key, add("d")).await;
    assert_eq!(
        archived.status,
        StatusCode::BAD_REQUEST,
        "{}",
        archived.text()
    );
    assert!(archived.text().contains("archived"), "{}", archived.text());
}
