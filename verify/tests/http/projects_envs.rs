//! Projects and environments through the router: the project list, one environment, turning
//! environments off and on, their order, the environments a project sees, removing one from
//! a project, and the default strategy a project's features get; each change read back
//! through the admin API, the client API and the event log, over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::*;
use toggle_admin::{Grant, Permission};

async fn get(t: &Setup, path: &str) -> Value {
    let r = t.call(Method::GET, path, None).await;
    assert_eq!(r.status, StatusCode::OK, "GET {path}: {}", r.text());
    r.json()
}

async fn send(
    t: &Setup,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: StatusCode,
) -> Reply {
    let r = t.call(method.clone(), path, body.as_ref()).await;
    assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.text());
    r
}

/// How many events of `event_type` the log holds.
async fn count_events(t: &Setup, event_type: &str) -> usize {
    let log = get(
        t,
        &format!("/api/admin/events?type={event_type}&limit=1000"),
    )
    .await;
    log["events"].as_array().map_or(0, Vec::len)
}

fn detail_paths(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn client_key(t: &Setup, environment: &str) -> String {
    let r = send(
        t,
        Method::POST,
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "sdk", "type": "client", "environment": environment})),
        StatusCode::CREATED,
    )
    .await;
    r.json()["secret"].as_str().unwrap().to_owned()
}

/// The feature `name` as a client key sees it.
async fn client_feature(t: &Setup, key: &str, name: &str) -> Value {
    let r = t
        .call_as(key, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

/// The project list: every project, with counts that follow the changes.
async fn project_list(t: &Setup) {
    let list = get(t, "/api/admin/projects").await;
    assert_eq!(list["version"], 1);
    let ids: Vec<&str> = list["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["other", "p"], "every project, not only default");
    let p = &list["projects"][1];
    assert_eq!(p["name"], "P");
    assert_eq!(p["featureCount"], 1);
    assert_eq!(p["health"], 100);
    assert_eq!(p["memberCount"], 0);
    assert!(p["createdAt"].is_string(), "{p}");
    assert_eq!(p["mode"], "open");

    // A stale feature lowers the health; a member counts.
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/stale",
        Some(json!({"features": ["f"], "stale": true})),
        StatusCode::ACCEPTED,
    )
    .await;
    let user = send(
        t,
        Method::POST,
        "/api/admin/user-admin",
        Some(json!({"username": "ann"})),
        StatusCode::CREATED,
    )
    .await;
    let id = user.json()["id"].as_i64().unwrap();
    send(
        t,
        Method::PUT,
        "/api/admin/projects/p/access",
        Some(json!({"roles": [{"id": 5, "users": [id]}]})),
        StatusCode::OK,
    )
    .await;
    let p = get(t, "/api/admin/projects").await["projects"][1].clone();
    assert_eq!(p["health"], 0, "{p}");
    assert_eq!(p["staleFeatureCount"], 1);
    assert_eq!(p["memberCount"], 1);
    let archived = get(t, "/api/admin/projects?archived=true").await;
    assert_eq!(archived["projects"], json!([]));
}

/// One environment; off and on; the client API keeps answering in an environment turned
/// off, as Unleash's does.
async fn environment_on_off(t: &Setup) {
    let production = get(t, "/api/admin/environments/production").await;
    assert_eq!(production["name"], "production");
    assert_eq!(production["type"], "production");
    assert_eq!(production["enabled"], true);
    assert_eq!(production["protected"], false);
    assert_eq!(production["sortOrder"], 9999);
    assert_eq!(production["projectCount"], 2);
    t.call(Method::GET, "/api/admin/environments/nope", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");

    let sdk = client_key(t, "production").await;
    assert_eq!(
        get(t, "/api/admin/environments/production").await["apiTokenCount"],
        1
    );
    let before = count_events(t, "environment-updated").await;
    send(
        t,
        Method::POST,
        "/api/admin/environments/production/off",
        None,
        StatusCode::NO_CONTENT,
    )
    .await;
    assert_eq!(
        get(t, "/api/admin/environments/production").await["enabled"],
        false
    );
    assert_eq!(count_events(t, "environment-updated").await, before + 1);
    // Off again changes nothing and writes no event.
    send(
        t,
        Method::POST,
        "/api/admin/environments/production/off",
        None,
        StatusCode::NO_CONTENT,
    )
    .await;
    assert_eq!(count_events(t, "environment-updated").await, before + 1);
    assert_eq!(
        client_feature(t, &sdk, "f").await["name"],
        "f",
        "SDKs keep working"
    );
    let listed = get(t, "/api/admin/environments").await;
    let production = listed["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "production")
        .cloned()
        .unwrap();
    assert_eq!(production["enabled"], false);
    send(
        t,
        Method::POST,
        "/api/admin/environments/production/on",
        None,
        StatusCode::NO_CONTENT,
    )
    .await;
    assert_eq!(
        get(t, "/api/admin/environments/production").await["enabled"],
        true
    );
    assert_eq!(count_events(t, "environment-updated").await, before + 2);
    t.call(Method::POST, "/api/admin/environments/nope/off", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

/// The sort order: applied atomically, bad bodies change nothing.
async fn sort_order(t: &Setup) {
    let order = |list: &Value| -> Vec<String> {
        list["environments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        order(&get(t, "/api/admin/environments").await),
        ["development", "production", "staging"]
    );
    send(
        t,
        Method::PUT,
        "/api/admin/environments/sort-order",
        Some(json!({"staging": 1, "production": 2})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        order(&get(t, "/api/admin/environments").await),
        ["staging", "production", "development"]
    );
    assert_eq!(
        get(t, "/api/admin/environments/staging").await["sortOrder"],
        1
    );

    let r = t
        .call(
            Method::PUT,
            "/api/admin/environments/sort-order",
            Some(&json!({"staging": "first"})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&body), ["/staging"], "{body}");
    let r = t
        .call(
            Method::PUT,
            "/api/admin/environments/sort-order",
            Some(&json!({"nope": 3, "staging": 5})),
        )
        .await;
    let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(detail_paths(&body), ["/nope"], "{body}");
    assert_eq!(
        get(t, "/api/admin/environments/staging").await["sortOrder"],
        1,
        "nothing changed"
    );
    let r = t
        .call(
            Method::PUT,
            "/api/admin/environments/sort-order",
            Some(&json!([1])),
        )
        .await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");

    // The environments as a project sees them, in that order.
    let seen = get(t, "/api/admin/environments/project/p").await;
    assert_eq!(seen["version"], 1);
    assert_eq!(order(&seen), ["staging", "production", "development"]);
    let visible: Vec<bool> = seen["environments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["visible"].as_bool().unwrap())
        .collect();
    assert_eq!(visible, [false, true, true]);
    t.call(Method::GET, "/api/admin/environments/project/nope", None)
        .await
        .error(StatusCode::NOT_FOUND, "NotFoundError");
}

/// The default strategy: checked as strategies are, used when a feature is enabled with
/// none.
async fn default_strategy(t: &Setup) {
    const PATH: &str = "/api/admin/projects/p/environments/production/default-strategy";
    let r = send(
        t,
        Method::POST,
        PATH,
        Some(json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "userId"}})),
        StatusCode::OK,
    )
    .await;
    assert_eq!(r.json()["name"], "flexibleRollout");
    assert_eq!(r.json()["parameters"]["rollout"], "50");
    assert_eq!(count_events(t, "default-strategy-updated").await, 1);

    for (body, path) in [
        (json!({"name": "default"}), "/name"),
        (
            json!({"name": "flexibleRollout", "parameters": {"rollout": "150"}}),
            ".parameters.rollout",
        ),
        (
            json!({"name": "flexibleRollout", "constraints": [{"contextName": "userId", "operator": "NOPE", "values": ["1"]}]}),
            ".constraints[0].operator",
        ),
    ] {
        let r = t.call(Method::POST, PATH, Some(&body)).await;
        let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        let paths = detail_paths(&error);
        assert!(paths.iter().any(|p| p.ends_with(path)), "{path} in {error}");
    }
    t.call(Method::POST, PATH, Some(&json!("flexibleRollout")))
        .await
        .error(StatusCode::BAD_REQUEST, "ValidationError");
    t.call(
        Method::POST,
        "/api/admin/projects/other/environments/development/default-strategy",
        Some(&json!({"name": "flexibleRollout"})),
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    assert_eq!(
        count_events(t, "default-strategy-updated").await,
        1,
        "bad ones wrote nothing"
    );
    let seen = get(t, "/api/admin/environments/project/p").await;
    let production = seen["environments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "production")
        .cloned()
        .unwrap();
    assert_eq!(
        production["defaultStrategy"]["parameters"]["rollout"], "50",
        "{production}"
    );

    // Enabling f there adds the default strategy, grouped by the feature's name.
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/production/on",
        None,
        StatusCode::OK,
    )
    .await;
    let strategies = get(
        t,
        "/api/admin/projects/p/features/f/environments/production/strategies",
    )
    .await;
    assert_eq!(strategies.as_array().unwrap().len(), 1, "{strategies}");
    assert_eq!(strategies[0]["parameters"]["rollout"], "50");
    assert_eq!(strategies[0]["parameters"]["stickiness"], "userId");
    assert_eq!(strategies[0]["parameters"]["groupId"], "f");
    let sdk = client_key(t, "production").await;
    let f = client_feature(t, &sdk, "f").await;
    assert_eq!(f["enabled"], true);
    assert_eq!(f["strategies"][0]["parameters"]["rollout"], "50", "{f}");
}

/// Removing an environment from a project: the features' configuration there goes with it.
async fn remove_environment(t: &Setup) {
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/features/f/environments/development/on",
        None,
        StatusCode::OK,
    )
    .await;
    let sdk = client_key(t, "development").await;
    assert_eq!(client_feature(t, &sdk, "f").await["enabled"], true);
    let before = count_events(t, "project-environment-removed").await;
    send(
        t,
        Method::DELETE,
        "/api/admin/projects/p/environments/development",
        None,
        StatusCode::OK,
    )
    .await;
    let overview = get(t, "/api/admin/projects/p").await;
    assert_eq!(
        overview["environments"].as_array().unwrap().len(),
        1,
        "{overview}"
    );
    assert_eq!(overview["environments"][0]["environment"], "production");
    assert_eq!(
        overview["environments"][0]["defaultStrategy"]["parameters"]["rollout"], "50",
        "the other environment's default strategy stays"
    );
    assert_eq!(
        client_feature(t, &sdk, "f").await["enabled"],
        false,
        "no longer there"
    );
    assert_eq!(
        count_events(t, "project-environment-removed").await,
        before + 1
    );
    // Again: nothing to do, no event.
    send(
        t,
        Method::DELETE,
        "/api/admin/projects/p/environments/development",
        None,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        count_events(t, "project-environment-removed").await,
        before + 1
    );
    t.call(
        Method::DELETE,
        "/api/admin/projects/p/environments/nope",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    t.call(
        Method::DELETE,
        "/api/admin/projects/nope/environments/development",
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "NotFoundError");
    // Added again, it starts afresh: disabled, no strategies.
    send(
        t,
        Method::POST,
        "/api/admin/projects/p/environments",
        Some(json!({"environment": "development"})),
        StatusCode::OK,
    )
    .await;
    let fe = get(
        t,
        "/api/admin/projects/p/features/f/environments/development",
    )
    .await;
    assert_eq!(fe["enabled"], false, "{fe}");
    assert_eq!(fe["strategies"], json!([]));
}

async fn scenario(t: &Setup) {
    project_list(t).await;
    environment_on_off(t).await;
    sort_order(t).await;
    default_strategy(t).await;
    remove_environment(t).await;
}

on_every_store!(scenario => projects_and_environments_on_a_memory_store, projects_and_environments_on_a_file_store, projects_and_environments_on_a_postgres_store);

/// Without the permission: 403 whatever the body, and nothing changes.
#[tokio::test]
async fn environment_changes_need_their_permissions() {
    let t = setup().await;
    let reader = t
        .key_with(vec![Grant::everywhere(Permission::CreateFeature)])
        .await;
    for (method, path, body) in [
        (Method::POST, "/api/admin/environments/production/off", None),
        (
            Method::PUT,
            "/api/admin/environments/sort-order",
            Some(json!({"x": "not even valid"})),
        ),
        (
            Method::DELETE,
            "/api/admin/projects/p/environments/production",
            None,
        ),
        (
            Method::POST,
            "/api/admin/projects/p/environments/production/default-strategy",
            Some(json!({"name": 7})),
        ),
    ] {
        t.call_as(&reader, method, path, body.as_ref())
            .await
            .error(StatusCode::FORBIDDEN, "NoAccessError");
    }
    assert_eq!(
        get(&t, "/api/admin/environments/production").await["enabled"],
        true
    );
    assert_eq!(
        get(&t, "/api/admin/projects/p").await["environments"],
        json!([{"environment": "development"}, {"environment": "production"}])
    );
    // Reads need only a valid key.
    let r = t
        .call_as(&reader, Method::GET, "/api/admin/projects", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
}
