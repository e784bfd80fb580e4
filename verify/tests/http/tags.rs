//! Tags through the router: the tags that exist (list, read, create, delete), and tag
//! changes of one feature or many features of a project, with the state each leaves and the
//! events it writes; run over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::Grant;
use toggle_admin::model::Permission;

/// The events of `query` (`type=…&feature=…`), newest first.
async fn events(t: &Setup, query: &str) -> Vec<Value> {
    let r = t
        .call(Method::GET, &format!("/api/admin/events?{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"].as_array().cloned().unwrap_or_default()
}

/// `type:value` of each tag of a `{version, tags}` body.
fn tag_names(body: &Value) -> Vec<String> {
    assert_eq!(body["version"], 1, "{body}");
    body["tags"]
        .as_array()
        .map(|tags| {
            tags.iter()
                .map(|t| {
                    format!(
                        "{}:{}",
                        t["type"].as_str().unwrap(),
                        t["value"].as_str().unwrap()
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

async fn all_tags(t: &Setup) -> Vec<String> {
    let r = t.call(Method::GET, "/api/admin/tags", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    tag_names(&r.json())
}

async fn feature_tags(t: &Setup, feature: &str) -> Vec<String> {
    let r = t
        .call(
            Method::GET,
            &format!("/api/admin/features/{feature}/tags"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    tag_names(&r.json())
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

/// The tags that exist: create, list, read, refusals.
async fn the_tags_that_exist(t: &Setup) {
    assert_eq!(all_tags(t).await, Vec::<String>::new());
    let r = t
        .call(
            Method::POST,
            "/api/admin/tags",
            Some(&json!({"value": "  release-2 ", "type": "simple"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"version": 1, "tag": {"value": "release-2", "type": "simple"}})
    );
    assert_eq!(all_tags(t).await, ["simple:release-2"]);
    let r = t.call(Method::GET, "/api/admin/tags/simple", None).await;
    assert_eq!(tag_names(&r.json()), ["simple:release-2"]);
    let r = t.call(Method::GET, "/api/admin/tags/team", None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(tag_names(&r.json()), Vec::<String>::new());
    let r = t
        .call(Method::GET, "/api/admin/tags/simple/release-2", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"version": 1, "tag": {"value": "release-2", "type": "simple"}})
    );
    t.call(Method::GET, "/api/admin/tags/simple/absent", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    let created = events(t, "type=tag-created").await;
    assert_eq!(created.len(), 1);
    assert_eq!(
        created[0]["data"],
        json!({"value": "release-2", "type": "simple"})
    );

    // The same tag again: 409.
    t.call(
        Method::POST,
        "/api/admin/tags",
        Some(&json!({"value": "release-2", "type": "simple"})),
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    // A type that does not exist: a 400 naming it (Unleash: 500); nothing created.
    let r = t
        .call(
            Method::POST,
            "/api/admin/tags",
            Some(&json!({"value": "x1", "type": "nope"})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert!(
        body["message"].as_str().unwrap().contains("\"nope\""),
        "{body}"
    );
    assert_eq!(detail_paths(&r), ["type"]);
    // A value too short and a type name that is not URL-friendly: both named.
    let r = t
        .call(
            Method::POST,
            "/api/admin/tags",
            Some(&json!({"value": "a", "type": "no way"})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&r), ["value", "type"]);
    // Not the shape: a 400 naming the member.
    let r = t
        .call(Method::POST, "/api/admin/tags", Some(&json!({"value": 7})))
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(all_tags(t).await, ["simple:release-2"]);
    assert_eq!(events(t, "type=tag-created").await.len(), 1);
}

/// Tag changes of one feature, then of many, then deleting a tag.
async fn tag_changes(t: &Setup) {
    let r = t
        .call(
            Method::POST,
            "/api/admin/tag-types",
            Some(&json!({"name": "team"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());

    // Many changes of one feature: 200 with its tags after.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/features/f/tags",
            Some(&json!({
                "addedTags": [{"type": "simple", "value": "release-2"}, {"type": "team", "value": "core"}],
                "removedTags": []
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(tag_names(&r.json()), ["simple:release-2", "team:core"]);
    assert_eq!(
        feature_tags(t, "f").await,
        ["simple:release-2", "team:core"]
    );
    // A tag first put on a feature exists from then on.
    assert_eq!(all_tags(t).await, ["simple:release-2", "team:core"]);
    let tagged = events(t, "type=feature-tagged&feature=f").await;
    assert_eq!(tagged.len(), 2);
    assert_eq!(tagged[0]["project"], "p");
    assert_eq!(tagged[0]["data"], json!({"value": "core", "type": "team"}));

    let r = t
        .call(
            Method::PUT,
            "/api/admin/features/f/tags",
            Some(&json!({"addedTags": [], "removedTags": [{"type": "simple", "value": "release-2"}]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(tag_names(&r.json()), ["team:core"]);
    let untagged = events(t, "type=feature-untagged&feature=f").await;
    assert_eq!(untagged.len(), 1);
    assert_eq!(
        untagged[0]["preData"],
        json!({"value": "release-2", "type": "simple"})
    );
    // Off its feature, the tag still exists.
    assert_eq!(all_tags(t).await, ["simple:release-2", "team:core"]);

    // A bad body: every problem named, nothing changed.
    let before = events(t, "feature=f").await.len();
    let r = t
        .call(
            Method::PUT,
            "/api/admin/features/f/tags",
            Some(&json!({
                "addedTags": [{"type": "ghost", "value": "zz"}, {"type": "simple", "value": "q"}],
                "removedTags": [{"type": "team", "value": "core"}]
            })),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(
        detail_paths(&r),
        ["/addedTags/1/value", "/addedTags/0/type"]
    );
    let r = t
        .call(
            Method::PUT,
            "/api/admin/features/f/tags",
            Some(&json!({"addedTags": [], "removedTags": [], "extra": 1})),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(feature_tags(t, "f").await, ["team:core"]);
    assert_eq!(events(t, "feature=f").await.len(), before);
    t.call(
        Method::PUT,
        "/api/admin/features/nope/tags",
        Some(&json!({"addedTags": [], "removedTags": []})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Many features of a project at once.
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "h"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/tags",
            Some(&json!({
                "features": ["f", "h"],
                "tags": {"addedTags": [{"type": "simple", "value": "bulk-1"}],
                         "removedTags": [{"type": "team", "value": "core"}]}
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.text(), "");
    assert_eq!(feature_tags(t, "f").await, ["simple:bulk-1"]);
    assert_eq!(feature_tags(t, "h").await, ["simple:bulk-1"]);
    assert_eq!(events(t, "type=feature-tagged&feature=h").await.len(), 1);
    assert_eq!(events(t, "type=feature-untagged&feature=f").await.len(), 2);
    assert_eq!(events(t, "type=tag-created").await.len(), 3);

    // One feature not in the project, one missing, a bad tag: all named, nothing changed.
    let before = events(t, "").await.len();
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/tags",
            Some(&json!({
                "features": ["f", "g", "nope"],
                "tags": {"addedTags": [{"type": "simple", "value": "zz-1"}, {"type": "ghost", "value": "zz-2"}],
                         "removedTags": [{"type": "simple", "value": "bulk-1"}]}
            })),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(
        detail_paths(&r),
        ["/features/1", "/features/2", "/tags/addedTags/1/type"]
    );
    assert_eq!(feature_tags(t, "f").await, ["simple:bulk-1"]);
    assert_eq!(events(t, "").await.len(), before);
    // Only features that are not there: a 404 naming them, as the other bulk operations.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/tags",
            Some(&json!({"features": ["g", "nope"], "tags": {"addedTags": [{"type": "simple", "value": "zz-1"}], "removedTags": []}})),
        )
        .await;
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(detail_paths(&r), ["/features/0", "/features/1"]);
    assert_eq!(events(t, "").await.len(), before);
    t.call(
        Method::PUT,
        "/api/admin/projects/nope/tags",
        Some(&json!({"features": [], "tags": {"addedTags": [], "removedTags": []}})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // Deleting a tag takes it off every feature, an event each.
    let r = t
        .call(Method::DELETE, "/api/admin/tags/simple/bulk-1", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(feature_tags(t, "f").await, Vec::<String>::new());
    assert_eq!(feature_tags(t, "h").await, Vec::<String>::new());
    assert_eq!(events(t, "type=feature-untagged&feature=h").await.len(), 1);
    let deleted = events(t, "type=tag-deleted").await;
    assert_eq!(deleted.len(), 1);
    assert_eq!(
        deleted[0]["preData"],
        json!({"value": "bulk-1", "type": "simple"})
    );
    t.call(Method::GET, "/api/admin/tags/simple/bulk-1", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(all_tags(t).await, ["simple:release-2", "team:core"]);
    // Again: nothing to delete, 200, no event.
    let r = t
        .call(Method::DELETE, "/api/admin/tags/simple/bulk-1", None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(events(t, "type=tag-deleted").await.len(), 1);

    // Permission before the body: a key without UPDATE_FEATURE in `p` is refused, even
    // with a broken body.
    let other = t
        .key_with(vec![Grant::in_project(Permission::UpdateFeature, "other")])
        .await;
    let r = t
        .call_as(
            &other,
            Method::PUT,
            "/api/admin/features/f/tags",
            Some(&json!([1])),
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call_as(
            &other,
            Method::PUT,
            "/api/admin/projects/p/tags",
            Some(&json!({"x": 1})),
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
    let r = t
        .call_as(
            &other,
            Method::POST,
            "/api/admin/tags",
            Some(&json!({"value": "ok-1"})),
        )
        .await;
    r.error(StatusCode::FORBIDDEN, "NoAccessError");
}

/// The scenarios in order, on one store.
async fn tags(t: &Setup) {
    the_tags_that_exist(t).await;
    tag_changes(t).await;
}

on_every_store!(tags => tags_on_a_memory_store, tags_on_a_file_store, tags_on_a_postgres_store);
