//! The variants of every environment of a feature at once, Unleash 6.10.1's feature-level
//! routes (`GET|PATCH|PUT …/features/{featureName}/variants`): Unleash's historic tests of
//! those routes adapted, plus what this crate adds (one commit, all or nothing; permission
//! per environment); run over every store.
//!
//! Project `p` has `development` and `production`, both at the default sort order, so
//! `development` (first by name) is the first environment until the order is changed.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::Grant;
use toggle_admin::model::Permission;

const PROJECT: &str = "/api/admin/projects/p/features";

fn path(feature: &str) -> String {
    format!("{PROJECT}/{feature}/variants")
}

/// `{name, weight, weightType, stickiness: "default"}`.
fn v(name: &str, weight: u32, weight_type: &str) -> Value {
    json!({"name": name, "weight": weight, "weightType": weight_type, "stickiness": "default"})
}

/// `name:weight` of each variant of a `{version, variants}` body.
fn names(body: &Value) -> Vec<String> {
    assert_eq!(body["version"], 1, "{body}");
    body["variants"]
        .as_array()
        .unwrap_or_else(|| panic!("no variants: {body}"))
        .iter()
        .map(|v| format!("{}:{}", v["name"].as_str().unwrap(), v["weight"]))
        .collect()
}

/// A new feature of `p` with these variants in development and production.
async fn feature(t: &Setup, name: &str, development: Value, production: Value) {
    expect(
        t,
        Method::POST,
        PROJECT,
        Some(json!({"name": name})),
        StatusCode::CREATED,
    )
    .await;
    for (environment, list) in [("development", development), ("production", production)] {
        expect(
            t,
            Method::PUT,
            &format!("{PROJECT}/{name}/environments/{environment}/variants"),
            Some(list),
            StatusCode::OK,
        )
        .await;
    }
}

/// `name:weight` of the variants of `feature` in `environment`, read back.
async fn in_environment(t: &Setup, feature: &str, environment: &str) -> Vec<String> {
    let path = format!("{PROJECT}/{feature}/environments/{environment}/variants");
    names(&expect(t, Method::GET, &path, None, StatusCode::OK).await)
}

/// The feature-level list, read back.
async fn read(t: &Setup, feature: &str) -> Vec<String> {
    names(&expect(t, Method::GET, &path(feature), None, StatusCode::OK).await)
}

async fn patch(t: &Setup, feature: &str, operations: Value) -> Reply {
    t.call(Method::PATCH, &path(feature), Some(&operations))
        .await
}

/// A 200 with its `name:weight` list.
fn ok(r: &Reply) -> Vec<String> {
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json())
}

/// The events of `feature` of `type`, newest first.
async fn events(t: &Setup, feature: &str, event_type: &str) -> Vec<Value> {
    let path = format!("/api/admin/events?feature={feature}&type={event_type}");
    let body = expect(t, Method::GET, &path, None, StatusCode::OK).await;
    body["events"].as_array().cloned().unwrap_or_default()
}

const UPDATED: &str = "feature-environment-variants-updated";

/// The store's revision and how many events there are: what "nothing changed" compares.
async fn state(t: &Setup) -> (u64, u64) {
    let revision = t.admin.store().revision().await.unwrap();
    let body = expect(t, Method::GET, "/api/admin/events", None, StatusCode::OK).await;
    (revision.0, body["totalEvents"].as_u64().unwrap())
}

/// The key of a new user `username` with the Viewer root role.
async fn viewer(t: &Setup, username: &str) -> String {
    let user = expect(
        t,
        Method::POST,
        "/api/admin/user-admin",
        Some(json!({"username": username, "rootRole": 3})),
        StatusCode::CREATED,
    )
    .await;
    let token = expect(
        t,
        Method::POST,
        &format!("/api/admin/user-admin/{}/tokens", user["id"]),
        Some(json!({"description": format!("{username}'s key")})),
        StatusCode::CREATED,
    )
    .await;
    token["secret"].as_str().unwrap().to_owned()
}

async fn reading(t: &Setup) {
    // A.3.1: the list of one environment; here the first in sort order.
    feature(
        t,
        "fv-get",
        json!([v("fancy-variant", 1000, "variable")]),
        json!([v("prod-variant", 1000, "variable")]),
    )
    .await;
    assert_eq!(read(t, "fv-get").await, ["fancy-variant:1000"]);
    // Another order of the environments: the list of the new first one.
    expect(
        t,
        Method::PUT,
        "/api/admin/environments/sort-order",
        Some(json!({"production": 1, "development": 2})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read(t, "fv-get").await, ["prod-variant:1000"]);
    expect(
        t,
        Method::PUT,
        "/api/admin/environments/sort-order",
        Some(json!({"production": 2, "development": 1})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read(t, "fv-get").await, ["fancy-variant:1000"]);
    // Any key reads them, a Viewer's too.
    let viewer = viewer(t, "reader").await;
    let body = expect_as(
        t,
        &viewer,
        Method::GET,
        &path("fv-get"),
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(names(&body), ["fancy-variant:1000"]);

    // A.3.2: an unknown feature is a 404 for each method (Unleash's test names it
    // `${featureName}` literally); so are an unknown project and a feature of another one.
    let unknown = [
        path("non-existing-feature"),
        path("%24%7BfeatureName%7D"),
        "/api/admin/projects/nope/features/fv-get/variants".to_owned(),
        "/api/admin/projects/p/features/g/variants".to_owned(),
    ];
    let before = state(t).await;
    for path in &unknown {
        t.call(Method::GET, path, None)
            .await
            .error(StatusCode::NOT_FOUND, "NotFoundError");
        t.call(Method::PUT, path, Some(&json!([v("a", 1000, "variable")])))
            .await
            .error(StatusCode::NOT_FOUND, "NotFoundError");
        let operations = json!([{"op": "add", "path": "/-", "value": v("a", 1000, "variable")}]);
        t.call(Method::PATCH, path, Some(&operations))
            .await
            .error(StatusCode::NOT_FOUND, "NotFoundError");
    }
    assert_eq!(state(t).await, before);
}

async fn patching(t: &Setup) {
    // A.3.3: a rename.
    let one = json!([v("fancy-variant-patch", 1000, "variable")]);
    feature(t, "fv-rename", one.clone(), one.clone()).await;
    let r = patch(
        t,
        "fv-rename",
        json!([{"op": "replace", "path": "/0/name", "value": "not-so-cool-variant-name"}]),
    )
    .await;
    assert_eq!(ok(&r), ["not-so-cool-variant-name:1000"]);
    for environment in ["development", "production"] {
        assert_eq!(
            in_environment(t, "fv-rename", environment).await,
            ["not-so-cool-variant-name:1000"]
        );
    }

    // A.3.4: each environment's own list is patched; the answer is the first's.
    feature(
        t,
        "fv-each",
        json!([v("dev-variant", 1000, "variable")]),
        json!([v("prod-variant", 1000, "variable")]),
    )
    .await;
    let r = patch(
        t,
        "fv-each",
        json!([{"op": "add", "path": "/1", "value": {"name": "patched-variant-name", "weightType": "fix", "weight": 50}}]),
    )
    .await;
    assert_eq!(ok(&r), ["dev-variant:950", "patched-variant-name:50"]);
    assert_eq!(
        in_environment(t, "fv-each", "development").await,
        ["dev-variant:950", "patched-variant-name:50"]
    );
    assert_eq!(
        in_environment(t, "fv-each", "production").await,
        ["patched-variant-name:50", "prod-variant:950"]
    );
    // An event per environment, each with its own lists.
    let updated = events(t, "fv-each", UPDATED).await;
    let patched: Vec<&Value> = updated[..2].iter().collect();
    let mut seen: Vec<(String, String)> = patched
        .iter()
        .map(|e| {
            (
                e["environment"].as_str().unwrap().to_owned(),
                e["preData"]["variants"][0]["name"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("development".to_owned(), "dev-variant".to_owned()),
            ("production".to_owned(), "prod-variant".to_owned())
        ]
    );
    assert_eq!(updated.len(), 4, "two to set the feature up, two patched");

    // A.3.5: an addition, weighed.
    feature(t, "fv-add", one.clone(), one.clone()).await;
    let r = patch(
        t,
        "fv-add",
        json!([{"op": "add", "path": "/1", "value": v("not-so-cool-variant-name", 1000, "variable")}]),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        read(t, "fv-add").await,
        ["fancy-variant-patch:500", "not-so-cool-variant-name:500"]
    );

    // A.3.6: a removal.
    feature(t, "fv-remove", one.clone(), one.clone()).await;
    let r = patch(t, "fv-remove", json!([{"op": "remove", "path": "/0"}])).await;
    assert_eq!(ok(&r), Vec::<String>::new());
    assert_eq!(read(t, "fv-remove").await, Vec::<String>::new());
    assert_eq!(
        in_environment(t, "fv-remove", "production").await,
        Vec::<String>::new()
    );

    // A.3.9: a weight over 1000 (Unleash's index 1 on an empty list appends; RFC 6902,
    // followed here, refuses it, so the variant is appended with `-`).
    feature(t, "fv-heavy", json!([]), json!([])).await;
    let before = state(t).await;
    let r = patch(
        t,
        "fv-heavy",
        json!([{"op": "add", "path": "/-", "value": {"name": "not-so-cool-variant-name", "stickiness": "default", "weight": 2000, "weightType": "variable"}}]),
    )
    .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let details = body["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(details[0]["path"], "/0/weight", "{body}");
    assert!(
        details[0]["message"].as_str().unwrap().contains("1000"),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("\"development\""),
        "{body}"
    );
    assert_eq!(state(t).await, before);

    // A.3.10: only variable variants share 1000, added one after the other.
    feature(t, "fv-share", json!([]), json!([])).await;
    let mut expected: Vec<Vec<&str>> = vec![
        vec!["variant1:1000"],
        vec!["variant1:500", "variant2:500"],
        vec!["variant1:334", "variant2:333", "variant3:333"],
        vec![
            "variant1:250",
            "variant2:250",
            "variant3:250",
            "variant4:250",
        ],
    ];
    for (i, weights) in expected.drain(..).enumerate() {
        let name = format!("variant{}", i + 1);
        let r = patch(
            t,
            "fv-share",
            json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 700, "weightType": "variable"}}]),
        )
        .await;
        assert_eq!(ok(&r), weights);
        assert_eq!(in_environment(t, "fv-share", "production").await, weights);
    }

    // A.3.11: no variable variant.
    feature(t, "fv-fixed", json!([]), json!([])).await;
    let before = state(t).await;
    let r = patch(
        t,
        "fv-fixed",
        json!([{"op": "add", "path": "/0", "value": v("variant1", 900, "fix")}]),
    )
    .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let details = body["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(
        details[0]["message"], r#"There must be at least one "variable" variant"#,
        "{body}"
    );
    assert_eq!(state(t).await, before);

    // All or nothing: a patch that applies in development but not in production (which has
    // no variant 0) changes neither, and the 400 names production.
    feature(
        t,
        "fv-partial",
        json!([v("a", 1000, "variable")]),
        json!([]),
    )
    .await;
    let before = state(t).await;
    let r = patch(
        t,
        "fv-partial",
        json!([{"op": "replace", "path": "/0/name", "value": "b"}]),
    )
    .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("\"production\""), "{body}");
    assert!(!message.contains("\"development\""), "{body}");
    assert!(message.contains("Could not apply provided patch"), "{body}");
    assert_eq!(state(t).await, before);
    assert_eq!(
        in_environment(t, "fv-partial", "development").await,
        ["a:1000"]
    );
    // An event for each list a patch changes, and only for those.
    let r = patch(
        t,
        "fv-partial",
        json!([{"op": "add", "path": "/-", "value": {"name": "z", "weight": 0}}]),
    )
    .await;
    assert_eq!(ok(&r), ["a:500", "z:500"]);
    assert_eq!(
        in_environment(t, "fv-partial", "production").await,
        ["z:1000"]
    );
    let updated = events(t, "fv-partial", UPDATED).await;
    assert_eq!(updated.len(), 4);
    let r = patch(
        t,
        "fv-partial",
        json!([{"op": "replace", "path": "/0/weight", "value": 1000}]),
    )
    .await;
    assert_eq!(
        ok(&r),
        ["a:500", "z:500"],
        "variable weights are shared again"
    );
    assert_eq!(
        events(t, "fv-partial", UPDATED).await.len(),
        4,
        "nothing changed"
    );
    let r = patch(
        t,
        "fv-partial",
        json!([{"op": "replace", "path": "/0/name", "value": "a"}]),
    )
    .await;
    assert_eq!(ok(&r), ["a:500", "z:500"]);
    assert_eq!(
        in_environment(t, "fv-partial", "production").await,
        ["a:1000"]
    );
    let updated = events(t, "fv-partial", UPDATED).await;
    assert_eq!(updated.len(), 5, "production's only");
    assert_eq!(updated[0]["environment"], "production");
}

async fn replacing(t: &Setup) {
    // A.3.7: a list overwrites every environment's, weighed.
    feature(
        t,
        "fv-put",
        json!([v("dev-variant", 1000, "variable")]),
        json!([]),
    )
    .await;
    let list = json!([
        v("variant1", 250, "fix"),
        v("variant2", 375, "variable"),
        v("variant3", 450, "variable")
    ]);
    let r = t.call(Method::PUT, &path("fv-put"), Some(&list)).await;
    let written = ["variant1:250", "variant2:375", "variant3:375"];
    assert_eq!(ok(&r), written);
    assert_eq!(read(t, "fv-put").await, written);
    for environment in ["development", "production"] {
        assert_eq!(in_environment(t, "fv-put", environment).await, written);
    }
    let updated = events(t, "fv-put", UPDATED).await;
    assert_eq!(
        updated.len(),
        4,
        "two to set the feature up, one per environment"
    );
    for event in &updated[..2] {
        assert_eq!(event["data"]["variants"].as_array().unwrap().len(), 3);
    }
    // The same list again writes nothing.
    let r = t.call(Method::PUT, &path("fv-put"), Some(&list)).await;
    assert_eq!(ok(&r), written);
    assert_eq!(events(t, "fv-put", UPDATED).await.len(), 4);

    // A.3.8: a weight type that does not exist, named by its path.
    let before = state(t).await;
    let r = t
        .call(
            Method::PUT,
            &path("fv-put"),
            Some(&json!([{"name": "variant", "weight": 500, "weightType": "party", "stickiness": "userId"}])),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    let details = body["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{body}");
    assert_eq!(details[0]["path"], "/0/weightType", "{body}");
    // Not a list at all.
    t.call(Method::PUT, &path("fv-put"), Some(&json!({"variants": []})))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(state(t).await, before);
    assert_eq!(read(t, "fv-put").await, written);
}

async fn refusals(t: &Setup) {
    feature(
        t,
        "fv-guarded",
        json!([v("a", 1000, "variable")]),
        json!([v("b", 1000, "variable")]),
    )
    .await;
    let operations = json!([{"op": "remove", "path": "/0"}]);
    let list = json!([v("c", 1000, "variable")]);
    // A Viewer: 403 for both, whatever the body.
    let viewer = viewer(t, "vera").await;
    let development = t
        .key_with(vec![Grant::in_environment(
            Permission::UpdateFeatureEnvironmentVariants,
            "p",
            "development",
        )])
        .await;
    let before = state(t).await;
    for (method, body) in [
        (Method::PATCH, operations.clone()),
        (Method::PUT, list.clone()),
        (Method::PUT, json!("not a list")),
    ] {
        t.call_as(&viewer, method, &path("fv-guarded"), Some(&body))
            .await
            .error(StatusCode::FORBIDDEN, "NoAccessError");
    }
    // The permission in one environment only: 403 naming the other.
    for (method, body) in [(Method::PATCH, &operations), (Method::PUT, &list)] {
        let body = t
            .call_as(&development, method, &path("fv-guarded"), Some(body))
            .await
            .error(StatusCode::FORBIDDEN, "NoAccessError");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains("production"), "{body}");
        assert!(
            message.contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS"),
            "{body}"
        );
    }
    assert_eq!(state(t).await, before);
    assert_eq!(
        in_environment(t, "fv-guarded", "development").await,
        ["a:1000"]
    );
    assert_eq!(
        in_environment(t, "fv-guarded", "production").await,
        ["b:1000"]
    );
    // In both environments: allowed.
    let both = t
        .key_with(vec![Grant::in_project(
            Permission::UpdateFeatureEnvironmentVariants,
            "p",
        )])
        .await;
    let r = t
        .call_as(&both, Method::PUT, &path("fv-guarded"), Some(&list))
        .await;
    assert_eq!(ok(&r), ["c:1000"]);

    // An archived feature's variants are not changed.
    expect(
        t,
        Method::DELETE,
        &format!("{PROJECT}/fv-guarded"),
        None,
        StatusCode::ACCEPTED,
    )
    .await;
    let before = state(t).await;
    t.call(Method::PUT, &path("fv-guarded"), Some(&list))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(Method::PATCH, &path("fv-guarded"), Some(&operations))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(state(t).await, before);
}

async fn feature_variants(t: &Setup) {
    reading(t).await;
    patching(t).await;
    replacing(t).await;
    refusals(t).await;
}

on_every_store!(
    feature_variants => feature_variants_on_a_memory_store,
    feature_variants_on_a_file_store,
    feature_variants_on_a_postgres_store
);
