//! The feature operations of the control plane through the router: a project's feature list,
//! replace, patch, clone, name validation, one feature environment, the bulk operations, the
//! archive (archive, revive, delete) and search, with the state each changes seen from the
//! admin, client and frontend APIs and the event log; run over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;

const FEATURES: &str = "/api/admin/projects/p/features";

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|f| f["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

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

async fn project_features(t: &Setup) -> Vec<String> {
    let r = t.call(Method::GET, FEATURES, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json()["features"])
}

async fn client_features(t: &Setup, client: &str) -> Vec<String> {
    let r = t
        .call_as(client, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json()["features"])
}

async fn frontend_toggles(t: &Setup, frontend: &str) -> Vec<String> {
    let r = t
        .call_as(frontend, Method::GET, "/api/frontend?userId=1", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json()["toggles"])
}

async fn archived(t: &Setup, path: &str) -> Vec<String> {
    let r = t.call(Method::GET, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    names(&r.json()["features"])
}

async fn event_types(t: &Setup, feature: &str) -> Vec<String> {
    let r = t
        .call(
            Method::GET,
            &format!("/api/admin/events?feature={feature}"),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn post(t: &Setup, path: &str, body: Value, status: StatusCode) -> Reply {
    let r = t.call(Method::POST, path, Some(&body)).await;
    assert_eq!(r.status, status, "POST {path} {body}: {}", r.text());
    r
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

/// The whole life of a feature, on one store.
async fn lifecycle(t: &Setup) {
    let client = key(t, "client").await;
    let frontend = key(t, "frontend").await;

    // 1. The project's features, in Unleash's projectFeaturesSchema.
    let r = t.call(Method::GET, FEATURES, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["version"], 2);
    assert_eq!(names(&r.json()["features"]), ["f"]);
    assert_eq!(
        names(&r.json()["features"][0]["environments"]),
        ["development", "production"]
    );
    t.call(Method::GET, "/api/admin/projects/nope/features", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    // 2. PUT replaces (null environments and variants accepted, as Terraform sends them);
    // fields left out are reset.
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/features/f",
            Some(
                &json!({"name": "f", "type": "experiment", "description": "d",
                "impressionData": true, "environments": null, "variants": null}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["type"], "experiment");
    assert_eq!(r.json()["description"], "d");
    assert_eq!(r.json()["impressionData"], true);
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/features/f",
            Some(&json!({})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["type"], "release");
    assert_eq!(r.json()["description"], Value::Null);
    assert_eq!(r.json()["impressionData"], false);
    assert!(
        event_types(t, "f")
            .await
            .contains(&"feature-metadata-updated".to_owned())
    );
    // PATCH: stale on through the patch.
    let r = t
        .call(
            Method::PATCH,
            "/api/admin/projects/p/features/f",
            Some(&json!([{"op": "replace", "path": "/stale", "value": true},
                         {"op": "replace", "path": "/description", "value": "patched"}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["stale"], true);
    assert_eq!(r.json()["description"], "patched");
    assert_eq!(event_types(t, "f").await[0], "feature-stale-on");

    // 3. Clone with its environments and strategies.
    post(
        t,
        "/api/admin/projects/p/features/f/environments/production/on",
        json!({}),
        StatusCode::OK,
    )
    .await;
    let r = post(
        t,
        "/api/admin/projects/p/features/f/clone",
        json!({"name": "f2"}),
        StatusCode::CREATED,
    )
    .await;
    let cloned = r.json();
    let production = cloned["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "production")
        .unwrap();
    assert_eq!(production["name"], "production");
    assert_eq!(production["enabled"], true);
    assert_eq!(production["strategies"].as_array().unwrap().len(), 1);
    assert_eq!(
        production["strategies"][0]["parameters"]["groupId"], "f2",
        "{production}"
    );
    assert_eq!(r.json()["description"], "patched");
    post(
        t,
        "/api/admin/projects/p/features/f/clone",
        json!({"name": "g"}),
        StatusCode::CONFLICT,
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");

    // 4. Validate a name.
    post(
        t,
        "/api/admin/features/validate",
        json!({"name": "fresh"}),
        StatusCode::OK,
    )
    .await;
    post(
        t,
        "/api/admin/features/validate",
        json!({"name": "f2"}),
        StatusCode::CONFLICT,
    )
    .await
    .error(StatusCode::CONFLICT, "NameExistsError");
    post(
        t,
        "/api/admin/features/validate",
        json!({"name": "a b"}),
        StatusCode::BAD_REQUEST,
    )
    .await
    .error(StatusCode::BAD_REQUEST, "ValidationError");

    // 5. One feature environment.
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/f2/environments/production",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(r.json()["enabled"], true);
    // Named for its feature, as in Unleash.
    assert_eq!(r.json()["name"], "f2");
    assert_eq!(r.json()["environment"], "production");
    t.call(
        Method::GET,
        "/api/admin/projects/p/features/f2/environments/staging",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");

    // 6. Bulk off; a bulk on with bad features changes nothing and names each.
    post(
        t,
        "/api/admin/projects/p/bulk_features/environments/production/off",
        json!({"features": ["f", "f2"]}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(client_features(t, &client).await, ["f", "f2", "g"]);
    assert!(frontend_toggles(t, &frontend).await.is_empty());
    let r = post(
        t,
        "/api/admin/projects/p/bulk_features/environments/production/on",
        json!({"features": ["f", "nope", "g"]}),
        StatusCode::NOT_FOUND,
    )
    .await;
    // Features the project lacks: 404 as in Unleash, every one named, nothing changed.
    r.error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(detail_paths(&r), ["/features/1", "/features/2"]);
    assert!(frontend_toggles(t, &frontend).await.is_empty());
    post(
        t,
        "/api/admin/projects/p/bulk_features/environments/production/on",
        json!({"features": ["f", "f2"]}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(frontend_toggles(t, &frontend).await, ["f", "f2"]);

    // 7. Stale in bulk.
    post(
        t,
        "/api/admin/projects/p/stale",
        json!({"features": ["f", "f2"], "stale": false}),
        StatusCode::ACCEPTED,
    )
    .await;
    let r = t.call(Method::GET, FEATURES, None).await;
    assert!(
        r.json()["features"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["stale"] == false)
    );

    // 8. Archive: f2 depends on f; archiving f2 removes its dependency.
    post(
        t,
        "/api/admin/projects/p/features/f2/dependencies",
        json!({"feature": "f"}),
        StatusCode::OK,
    )
    .await;
    let r = post(
        t,
        "/api/admin/projects/p/archive/validate",
        json!({"features": ["f"]}),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        r.json(),
        json!({"parentsWithChildFeatures": ["f"], "hasDeletedDependencies": false})
    );
    let r = post(
        t,
        "/api/admin/projects/p/archive",
        json!({"features": ["f2", "nope"]}),
        StatusCode::NOT_FOUND,
    )
    .await;
    assert_eq!(detail_paths(&r), ["/features/1"]);
    assert_eq!(project_features(t).await, ["f", "f2"]);
    post(
        t,
        "/api/admin/projects/p/archive",
        json!({"features": ["f2"]}),
        StatusCode::ACCEPTED,
    )
    .await;
    let events = event_types(t, "f2").await;
    assert!(
        events.contains(&"feature-archived".to_owned()),
        "{events:?}"
    );
    assert!(
        events.contains(&"feature-dependencies-removed".to_owned()),
        "{events:?}"
    );
    let r = t
        .call(Method::DELETE, "/api/admin/projects/p/features/f", None)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    assert!(project_features(t).await.is_empty());
    assert_eq!(client_features(t, &client).await, ["g"]);
    assert!(frontend_toggles(t, &frontend).await.is_empty());
    assert_eq!(
        archived(t, "/api/admin/archive/features/p").await,
        ["f", "f2"]
    );
    assert_eq!(
        archived(t, "/api/admin/archive/features").await,
        ["f", "f2"]
    );
    assert_eq!(event_types(t, "f").await[0], "feature-archived");

    // 9. Revive: back, every environment off, the dependency gone.
    post(t, "/api/admin/archive/revive/f", json!({}), StatusCode::OK).await;
    post(
        t,
        "/api/admin/projects/p/revive",
        json!({"features": ["f2"]}),
        StatusCode::OK,
    )
    .await;
    let r = t.call(Method::GET, FEATURES, None).await;
    assert_eq!(names(&r.json()["features"]), ["f", "f2"]);
    for feature in r.json()["features"].as_array().unwrap() {
        for env in feature["environments"].as_array().unwrap() {
            assert_eq!(env["enabled"], false, "{feature}");
        }
    }
    assert_eq!(
        t.call(Method::GET, "/api/admin/projects/p/features/f2", None)
            .await
            .json()["dependencies"],
        json!([])
    );
    let events = event_types(t, "f").await;
    assert!(
        events[..2].contains(&"feature-revived".to_owned()),
        "{events:?}"
    );
    assert!(
        events[..2].contains(&"feature-environment-disabled".to_owned()),
        "{events:?}"
    );
    assert!(archived(t, "/api/admin/archive/features").await.is_empty());

    // 10. Delete for good: only archived features; the name is free again; the event
    // carries the tags the feature had, as Unleash's does.
    let r = t.call(Method::DELETE, "/api/admin/archive/f", None).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");
    post(
        t,
        "/api/admin/features/f/tags",
        json!({"type": "simple", "value": "kept"}),
        StatusCode::CREATED,
    )
    .await;
    post(
        t,
        "/api/admin/projects/p/archive",
        json!({"features": ["f", "f2"]}),
        StatusCode::ACCEPTED,
    )
    .await;
    let r = t.call(Method::DELETE, "/api/admin/archive/f", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    post(
        t,
        "/api/admin/projects/p/delete",
        json!({"features": ["f2"]}),
        StatusCode::OK,
    )
    .await;
    assert!(archived(t, "/api/admin/archive/features").await.is_empty());
    assert!(project_features(t).await.is_empty());
    assert_eq!(event_types(t, "f").await[0], "feature-deleted");
    let deleted = t
        .call(Method::GET, "/api/admin/events?feature=f&limit=1", None)
        .await
        .json();
    assert_eq!(
        deleted["events"][0]["tags"],
        json!([{"type": "simple", "value": "kept"}]),
        "{deleted}"
    );
    let created = t
        .call(
            Method::GET,
            "/api/admin/events?feature=f2&type=feature-created",
            None,
        )
        .await
        .json();
    let created = &created["events"][0];
    assert_eq!(created["tags"], json!([]), "{created}");
    assert_eq!(created["preData"], Value::Null, "{created}");
    assert_eq!(created["createdByUserId"], -42, "{created}");
    assert_eq!(created["data"]["lastSeenAt"], Value::Null, "{created}");
    t.call(Method::GET, "/api/admin/projects/p/features/f", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
    post(
        t,
        "/api/admin/features/validate",
        json!({"name": "f"}),
        StatusCode::OK,
    )
    .await;
    post(t, FEATURES, json!({"name": "f"}), StatusCode::CREATED).await;
    let r = t
        .call(
            Method::GET,
            "/api/admin/projects/p/features/f/environments/production",
            None,
        )
        .await;
    assert_eq!(r.json()["enabled"], false, "{}", r.text());
    assert_eq!(r.json()["strategies"], json!([]));
}

on_every_store!(lifecycle => the_feature_lifecycle_on_a_memory_store, the_feature_lifecycle_on_a_file_store, the_feature_lifecycle_on_a_postgres_store);

#[tokio::test]
async fn bad_edits_are_400s_naming_the_field_and_change_nothing() {
    let t = setup().await;
    let before = t.call(Method::GET, FEATURES, None).await.json();
    for (body, path) in [
        (json!({"type": "nope"}), "/type"),
        (json!({"name": "other"}), "/name"),
        (json!({"project": "other"}), "/project"),
        (json!({"archived": true}), "/archived"),
        (json!({"environments": [{"name": "x"}]}), "/environments"),
    ] {
        let r = t
            .call(Method::PUT, "/api/admin/projects/p/features/f", Some(&body))
            .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), [path], "{body}");
    }
    for (patch, path) in [
        (
            json!([{"op": "replace", "path": "/name", "value": "x"}]),
            "/0",
        ),
        (
            json!([{"op": "replace", "path": "/stale", "value": "yes"}]),
            "/stale",
        ),
        (
            json!([{"op": "replace", "path": "/type", "value": "nope"}]),
            "/type",
        ),
    ] {
        let r = t
            .call(
                Method::PATCH,
                "/api/admin/projects/p/features/f",
                Some(&patch),
            )
            .await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(detail_paths(&r), [path], "{patch}");
    }
    assert_eq!(t.call(Method::GET, FEATURES, None).await.json(), before);
    assert!(
        !event_types(&t, "f")
            .await
            .contains(&"feature-metadata-updated".to_owned())
    );
    // The feature of another project, a missing feature: 404.
    for path in [
        "/api/admin/projects/p/features/g",
        "/api/admin/projects/p/features/nope",
    ] {
        t.call(Method::PUT, path, Some(&json!({})))
            .await
            .error(StatusCode::NOT_FOUND, "NotFoundError");
    }
    // Archiving through PATCH.
    let r = t
        .call(
            Method::PATCH,
            "/api/admin/projects/p/features/f",
            Some(&json!([{"op": "replace", "path": "/archived", "value": true}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.json()["archivedAt"].is_string());
    assert_eq!(archived(&t, "/api/admin/archive/features/p").await, ["f"]);
}

#[tokio::test]
async fn batches_with_bad_features_change_nothing_and_name_every_problem() {
    let t = setup().await;
    post(&t, FEATURES, json!({"name": "h"}), StatusCode::CREATED).await;
    let before = t.call(Method::GET, FEATURES, None).await.json();
    for (path, body) in [
        (
            "/api/admin/projects/p/archive",
            json!({"features": ["f", "g", "nope", "h"]}),
        ),
        (
            "/api/admin/projects/p/stale",
            json!({"features": ["f", "g", "nope", "h"], "stale": true}),
        ),
        (
            "/api/admin/projects/p/revive",
            json!({"features": ["f", "g", "nope", "h"]}),
        ),
        (
            "/api/admin/projects/p/delete",
            json!({"features": ["f", "g", "nope", "h"]}),
        ),
    ] {
        if path.ends_with("archive") || path.ends_with("stale") {
            // Every problem is a feature the project lacks: 404, as Unleash answers.
            let r = post(&t, path, body, StatusCode::NOT_FOUND).await;
            r.error(StatusCode::NOT_FOUND, "NotFoundError");
            assert_eq!(detail_paths(&r), ["/features/1", "/features/2"], "{path}");
        } else {
            let r = post(&t, path, body, StatusCode::BAD_REQUEST).await;
            r.error(StatusCode::BAD_REQUEST, "ValidationError");
            let paths = detail_paths(&r);
            // Revive and delete take archived features only: every one here is a problem.
            assert_eq!(
                paths,
                ["/features/0", "/features/1", "/features/2", "/features/3"],
                "{path}"
            );
        }
    }
    assert_eq!(t.call(Method::GET, FEATURES, None).await.json(), before);
    // An unknown project, an environment the project lacks: 404.
    post(
        &t,
        "/api/admin/projects/nope/archive",
        json!({"features": ["f"]}),
        StatusCode::NOT_FOUND,
    )
    .await;
    post(
        &t,
        "/api/admin/projects/p/bulk_features/environments/staging/on",
        json!({"features": ["f"]}),
        StatusCode::NOT_FOUND,
    )
    .await;
    // An empty batch is a 400.
    post(
        &t,
        "/api/admin/projects/p/archive",
        json!({"features": []}),
        StatusCode::BAD_REQUEST,
    )
    .await;
}

#[tokio::test]
async fn search_filters_sorts_and_pages() {
    let t = setup().await;
    for (name, kind) in [
        ("alpha", "experiment"),
        ("beta", "release"),
        ("gamma", "release"),
    ] {
        post(
            &t,
            FEATURES,
            json!({"name": name, "type": kind}),
            StatusCode::CREATED,
        )
        .await;
    }
    post(
        &t,
        "/api/admin/features/beta/tags",
        json!({"type": "simple", "value": "web"}),
        StatusCode::CREATED,
    )
    .await;
    post(
        &t,
        "/api/admin/projects/p/stale",
        json!({"features": ["gamma"], "stale": true}),
        StatusCode::ACCEPTED,
    )
    .await;
    let search = |q: &'static str| {
        let t = &t;
        async move {
            let r = t
                .call(Method::GET, &format!("/api/admin/search/features{q}"), None)
                .await;
            assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.text());
            (
                names(&r.json()["features"]),
                r.json()["total"].as_u64().unwrap(),
            )
        }
    };
    assert_eq!(
        search("").await,
        (
            vec![
                "alpha".into(),
                "beta".into(),
                "f".into(),
                "g".into(),
                "gamma".into()
            ],
            5
        )
    );
    assert_eq!(search("?project=IS:other").await, (vec!["g".into()], 1));
    assert_eq!(
        search("?type=IS:experiment").await,
        (vec!["alpha".into()], 1)
    );
    assert_eq!(search("?state=IS:stale").await, (vec!["gamma".into()], 1));
    assert_eq!(
        search("?tag=INCLUDE:simple:web").await,
        (vec!["beta".into()], 1)
    );
    assert_eq!(search("?query=AMM").await, (vec!["gamma".into()], 1));
    assert_eq!(
        search("?project=IS:p&sortBy=name&sortOrder=desc&offset=1&limit=2").await,
        (vec!["f".into(), "beta".into()], 4)
    );
    let r = t
        .call(Method::GET, "/api/admin/search/features", None)
        .await;
    assert!(r.json()["features"][0]["environments"].is_array());
    assert!(r.json()["features"][0]["tags"].is_array());
    for q in [
        "?project=p",
        "?type=LIKE:x",
        "?state=IS:sleepy",
        "?tag=INCLUDE:web",
        "?sortBy=colour",
        "?sortOrder=up",
        "?offset=-1",
        "?limit=lots",
    ] {
        t.call(Method::GET, &format!("/api/admin/search/features{q}"), None)
            .await
            .error(StatusCode::BAD_REQUEST, "ValidationError");
    }
}

/// Malformed bodies on the new routes: never a 5xx, always our error body.
#[tokio::test]
async fn malformed_bodies_on_the_feature_routes_never_give_a_5xx() {
    let t = setup().await;
    let routes = [
        (Method::PUT, "/api/admin/projects/p/features/f"),
        (Method::PATCH, "/api/admin/projects/p/features/f"),
        (Method::POST, "/api/admin/projects/p/features/f/clone"),
        (Method::POST, "/api/admin/features/validate"),
        (
            Method::POST,
            "/api/admin/projects/p/bulk_features/environments/production/on",
        ),
        (
            Method::POST,
            "/api/admin/projects/p/bulk_features/environments/production/off",
        ),
        (Method::POST, "/api/admin/projects/p/stale"),
        (Method::POST, "/api/admin/projects/p/archive"),
        (Method::POST, "/api/admin/projects/p/archive/validate"),
        (Method::POST, "/api/admin/projects/p/revive"),
        (Method::POST, "/api/admin/projects/p/delete"),
        (
            Method::GET,
            "/api/admin/search/features?limit=99999999999999999999999&offset=1e9",
        ),
    ];
    let bodies: Vec<Vec<u8>> = [
        &b""[..],
        b"{}",
        b"[]",
        b"null",
        b"\xff\xfe\x00",
        br#"{"features": "f"}"#,
        br#"{"features": [1, null, {}], "stale": "yes"}"#,
        br#"{"features": ["\u0000", ""]}"#,
        br#"{"name": "\u0000"}"#,
        br#"{"name": 7, "replaceGroupId": "x"}"#,
        br#"{"type": 1, "description": [], "stale": null}"#,
        br#"[{"op": "add", "path": "/stale/x", "value": 1}]"#,
        br#"[{"op": "move", "from": "/stale", "path": "/description"}]"#,
        br#"[{"op": "remove", "path": "/type"}]"#,
        br#"[{"op": "test", "path": "/type", "value": "release"}]"#,
        br#"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"#,
    ]
    .into_iter()
    .map(<[u8]>::to_vec)
    .chain(std::iter::once(
        format!(r#"{{"features": [{}]}}"#, vec!["\"f\""; 2000].join(",")).into_bytes(),
    ))
    .collect();
    for (method, path) in routes {
        for body in &bodies {
            for content_type in [None, Some("application/json")] {
                let r = t
                    .raw(
                        method.clone(),
                        path,
                        Some(&t.secret),
                        content_type,
                        body.clone(),
                    )
                    .await;
                assert!(
                    !r.status.is_server_error(),
                    "{method} {path} {content_type:?} {:?}: {} {}",
                    String::from_utf8_lossy(body),
                    r.status,
                    r.text()
                );
                if !r.status.is_success() {
                    let name = r.json()["name"].as_str().unwrap_or_default().to_owned();
                    r.error(r.status, &name);
                }
            }
        }
    }
}
