//! The client API: client keys, `GET /api/client/features` and its ETag/304.
//! Registration and metrics: `client_reports.rs`.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use test_support::http::*;
use tower::ServiceExt;

const TOKENS: &str = "/api/admin/api-tokens";
const FEATURES: &str = "/api/client/features";

/// A client key created through the admin API: `(secret, created token)`.
async fn client_key(t: &Setup, body: Value) -> (String, Value) {
    let r = t.call(Method::POST, TOKENS, Some(&body)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let token = r.json();
    (token["secret"].as_str().unwrap().to_owned(), token)
}

/// `GET path` with `key` and extra headers.
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

fn names(document: &Value) -> Vec<String> {
    document["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect()
}

fn strategies(project: &str, feature: &str, environment: &str) -> String {
    format!(
        "/api/admin/projects/{project}/features/{feature}/environments/{environment}/strategies"
    )
}

// ---------------------------------------------------------------- 1. client keys

#[tokio::test]
async fn client_keys_have_unleash_secrets_listings_and_no_admin_access() {
    let t = setup().await;
    let (one, token) = client_key(
        &t,
        json!({"tokenName": "web", "type": "client", "projects": ["p"], "environment": "production"}),
    )
    .await;
    assert!(one.starts_with("p:production."), "{one}");
    assert_eq!(token["type"], "client");
    assert_eq!(token["projects"], json!(["p"]));
    assert_eq!(token["environment"], "production");
    let (several, token) = client_key(
        &t,
        json!({"tokenName": "both", "type": "backend", "projects": ["p", "other"], "environment": "production"}),
    )
    .await;
    assert!(several.starts_with("[]:production."), "{several}");
    assert_eq!(token["type"], "backend");
    assert_eq!(token["projects"], json!(["other", "p"]));
    let (all, _) = client_key(
        &t,
        json!({"tokenName": "all", "type": "client", "environment": "development"}),
    )
    .await;
    assert!(all.starts_with("*:development."), "{all}");
    let (single, _) = client_key(
        &t,
        json!({"tokenName": "single", "type": "client", "project": "other", "environment": "production"}),
    )
    .await;
    assert!(single.starts_with("other:production."), "{single}");

    // Listed with their real type, projects and environment, never their secrets.
    let r = t.call(Method::GET, TOKENS, None).await;
    let listing = r.json();
    let web = listing["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["tokenName"] == "web")
        .unwrap();
    assert_eq!(web["type"], "client");
    assert_eq!(web["projects"], json!(["p"]));
    assert_eq!(web["project"], "p");
    assert_eq!(web["environment"], "production");
    assert!(!r.text().contains(&one));

    // A client key on admin routes: 403, reads and writes alike.
    for (method, path, body) in [
        (Method::GET, "/api/admin/projects/p", None),
        (Method::GET, TOKENS, None),
        (Method::GET, "/api/admin/events", None),
        (
            Method::POST,
            TOKENS,
            Some(json!({"tokenName": "x", "type": "admin"})),
        ),
    ] {
        let r = t.call_as(&one, method, path, body.as_ref()).await;
        let body = r.error(StatusCode::FORBIDDEN, "NoAccessError");
        assert!(
            body.to_string()
                .contains("expected a different token type for this endpoint"),
            "{body}"
        );
    }
    // And through the library.
    let client = t.admin.authenticate(Some(&one)).await.unwrap();
    assert!(matches!(
        t.admin.api_keys(&client).await,
        Err(toggle_admin::Error::NoAccess { .. })
    ));

    // Unknown project or environment, several environments: 400, nothing created.
    for body in [
        json!({"tokenName": "x", "type": "client", "projects": ["nope"], "environment": "production"}),
        json!({"tokenName": "x", "type": "client", "environment": "nowhere"}),
        json!({"tokenName": "x", "type": "client", "environment": "*"}),
        json!({"tokenName": "x", "type": "frontend", "environment": "nowhere"}),
    ] {
        let r = t.call(Method::POST, TOKENS, Some(&body)).await;
        r.error(StatusCode::BAD_REQUEST, "ValidationError");
    }
    let r = t.call(Method::GET, TOKENS, None).await;
    assert_eq!(r.json()["tokens"].as_array().unwrap().len(), 5);

    // Revoked: 401 on the client API from the next request on.
    let r = get(&t, &one, FEATURES, &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let id = web["id"].as_str().unwrap();
    let r = t
        .call(Method::DELETE, &format!("{TOKENS}/{id}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = get(&t, &one, FEATURES, &[]).await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
    // No key: 401.
    let r = t.raw(Method::GET, FEATURES, None, None, Vec::new()).await;
    r.error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

#[tokio::test]
async fn the_facade_creates_lists_and_revokes_client_keys() {
    let t = setup().await;
    let key = t
        .admin
        .create_api_key(
            &t.caller,
            "sdk",
            toggle_admin::KeyAccess::client(vec!["p".into()], "development"),
        )
        .await
        .unwrap();
    assert!(key.secret.starts_with("p:development."));
    let listed = t.admin.api_keys(&t.caller).await.unwrap();
    assert!(
        listed
            .iter()
            .any(|k| k.id == key.info.id && k.access.is_client())
    );
    t.admin
        .revoke_api_key(&t.caller, key.info.id)
        .await
        .unwrap();
    assert!(t.admin.authenticate(Some(&key.secret)).await.is_err());
}

// ---------------------------------------------------------------- 2. client features

/// `f` (project `p`) on in production with a rollout constrained by a segment and carrying
/// variants, a disabled strategy, environment variants, a tag and a parent `parent`.
async fn configure(t: &Setup) -> i64 {
    let r = t
        .call(
            Method::POST,
            "/api/admin/segments",
            Some(&json!({"name": "beta", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["1", "2"]}
            ]})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let segment = r.json()["id"].as_i64().unwrap();
    let r = t
        .call(
            Method::POST,
            &strategies("p", "f", "production"),
            Some(&json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"},
                "constraints": [{"contextName": "appName", "operator": "IN", "values": ["web"]}],
                "segments": [segment],
                "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]
            })),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            &strategies("p", "f", "production"),
            Some(&json!({"name": "default", "disabled": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::PUT,
            "/api/admin/projects/p/features/f/environments/production/variants",
            Some(&json!([{"name": "red", "weight": 1000, "weightType": "variable", "stickiness": "default"}])),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/features/f/tags",
            Some(&json!({"type": "simple", "value": "web"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "parent"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/dependencies",
            Some(&json!({"feature": "parent", "enabled": true})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    segment
}

#[tokio::test]
async fn client_features_show_the_keys_projects_in_its_environment() {
    let t = setup().await;
    let segment = configure(&t).await;
    let (prod, _) = client_key(
        &t,
        json!({"tokenName": "prod", "type": "client", "projects": ["p"], "environment": "production"}),
    )
    .await;

    // Without Unleash-Client-Spec: segments inlined, no `segments`.
    let r = get(&t, &prod, FEATURES, &[]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.content_type().unwrap().starts_with("application/json"));
    let doc = r.json();
    assert_eq!(doc["version"], 2);
    assert_eq!(names(&doc), ["f", "parent"], "only project p: {doc}");
    assert!(doc.get("segments").is_none(), "{doc}");
    assert_eq!(doc["query"]["environment"], "production");
    assert_eq!(doc["query"]["inlineSegmentConstraints"], true);
    let f = &doc["features"][0];
    assert_eq!(f["project"], "p");
    assert_eq!(f["type"], "release");
    assert_eq!(f["enabled"], true);
    assert_eq!(f["stale"], false);
    assert_eq!(f["impressionData"], false);
    let strategies = f["strategies"].as_array().unwrap();
    assert_eq!(strategies.len(), 1, "the disabled one is left out: {f}");
    let s = &strategies[0];
    assert_eq!(s["name"], "flexibleRollout");
    assert_eq!(s["parameters"]["rollout"], "50");
    assert_eq!(s["variants"][0]["name"], "blue");
    let constraints: Vec<&str> = s["constraints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["contextName"].as_str().unwrap())
        .collect();
    assert_eq!(constraints, ["appName", "userId"], "segment inlined: {s}");
    assert!(s.get("segments").is_none(), "{s}");
    assert_eq!(f["variants"][0]["name"], "red");
    assert_eq!(
        f["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": []}])
    );
    assert_eq!(doc["features"][1]["enabled"], false);

    // With a spec that knows segments: referenced by id and listed.
    let r = get(&t, &prod, FEATURES, &[("Unleash-Client-Spec", "5.1.0")]).await;
    let doc = r.json();
    let s = &doc["features"][0]["strategies"][0];
    assert_eq!(s["segments"], json!([segment]));
    assert_eq!(s["constraints"].as_array().unwrap().len(), 1);
    assert_eq!(doc["segments"][0]["id"], segment);
    assert_eq!(
        doc["segments"][0]["constraints"][0]["values"],
        json!(["1", "2"])
    );

    // Another environment never shows this one's state.
    let (dev, _) = client_key(
        &t,
        json!({"tokenName": "dev", "type": "client", "projects": ["p"], "environment": "development"}),
    )
    .await;
    let doc = get(&t, &dev, FEATURES, &[]).await.json();
    assert_eq!(doc["features"][0]["name"], "f");
    assert_eq!(doc["features"][0]["enabled"], false);
    assert_eq!(doc["features"][0]["strategies"], json!([]));
    assert_eq!(doc["features"][0]["variants"], json!([]));

    // Filters: namePrefix, project, tag.
    let (all, _) = client_key(
        &t,
        json!({"tokenName": "all", "type": "client", "environment": "production"}),
    )
    .await;
    let doc = get(&t, &all, FEATURES, &[]).await.json();
    assert_eq!(names(&doc), ["f", "g", "parent"]);
    let doc = get(&t, &all, &format!("{FEATURES}?namePrefix=pa"), &[])
        .await
        .json();
    assert_eq!(names(&doc), ["parent"]);
    let doc = get(&t, &all, &format!("{FEATURES}?project=other"), &[])
        .await
        .json();
    assert_eq!(names(&doc), ["g"]);
    assert_eq!(doc["query"]["projects"], json!(["other"]));
    let doc = get(&t, &all, &format!("{FEATURES}?tag=simple:web"), &[])
        .await
        .json();
    assert_eq!(names(&doc), ["f"]);
    // A key limited to p asking for another project sees nothing of it.
    let doc = get(&t, &prod, &format!("{FEATURES}?project=other"), &[])
        .await
        .json();
    assert_eq!(names(&doc), Vec::<String>::new());
    let r = get(&t, &all, &format!("{FEATURES}?tag=nocolon"), &[]).await;
    r.error(StatusCode::BAD_REQUEST, "ValidationError");

    // An admin key reads the client API too, in `default` (which does not exist here).
    let doc = get(&t, &t.secret, FEATURES, &[]).await.json();
    assert_eq!(doc["query"]["environment"], "default");
    assert_eq!(names(&doc), ["f", "g", "parent"]);

    // Archived features are left out.
    let r = t
        .call(Method::DELETE, "/api/admin/projects/other/features/g", None)
        .await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.text());
    let doc = get(&t, &all, FEATURES, &[]).await.json();
    assert_eq!(names(&doc), ["f", "parent"]);
}

#[tokio::test]
async fn client_features_parse_with_unleash_types() {
    let t = setup().await;
    configure(&t).await;
    let (key, _) = client_key(
        &t,
        json!({"tokenName": "prod", "type": "client", "environment": "production"}),
    )
    .await;
    for spec in [None, Some("5.0.0")] {
        let headers: Vec<(&str, &str)> = spec
            .map(|s| ("unleash-client-spec", s))
            .into_iter()
            .collect();
        let r = get(&t, &key, FEATURES, &headers).await;
        let parsed: toggle_admin::unleash_types::client_features::ClientFeatures =
            serde_json::from_slice(&r.body).unwrap();
        assert_eq!(parsed.version, 2);
        assert_eq!(parsed.features.len(), 3);
    }
}

// ---------------------------------------------------------------- 3. ETag / 304

#[tokio::test]
async fn etags_change_exactly_when_the_key_sees_a_change() {
    let t = setup().await;
    let (key, _) = client_key(
        &t,
        json!({"tokenName": "prod", "type": "client", "projects": ["p"], "environment": "production"}),
    )
    .await;
    let first = get(&t, &key, FEATURES, &[]).await;
    let tag = etag(&first);
    assert!(tag.starts_with('"') && tag.ends_with('"'), "{tag}");
    // Unchanged: the same ETag, and If-None-Match → 304 with no body.
    let again = get(&t, &key, FEATURES, &[]).await;
    assert_eq!(etag(&again), tag);
    assert_eq!(again.body, first.body);
    let r = get(&t, &key, FEATURES, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    assert!(r.body.is_empty());
    assert_eq!(etag(&r), tag);
    let weak = format!("W/{tag}");
    let r = get(&t, &key, FEATURES, &[("if-none-match", &weak)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    let r = get(&t, &key, FEATURES, &[("if-none-match", "\"other\"")]).await;
    assert_eq!(r.status, StatusCode::OK);

    // Changes the key cannot see: another project, another environment → same ETag.
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/other/features/g/environments/production/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/development/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = get(&t, &key, FEATURES, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);

    // A change it sees: a new ETag at once, and the old one no longer answers 304.
    let r = t
        .call(
            Method::POST,
            "/api/admin/projects/p/features/f/environments/production/on",
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let r = get(&t, &key, FEATURES, &[("if-none-match", &tag)]).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_ne!(etag(&r), tag);
    assert_eq!(r.json()["features"][0]["enabled"], true);
}

#[tokio::test]
async fn documents_are_shared_between_requests_of_one_revision() {
    let t = setup().await;
    let key = t
        .admin
        .create_api_key(
            &t.caller,
            "sdk",
            toggle_admin::KeyAccess::client(vec![], "production"),
        )
        .await
        .unwrap();
    let client = t.admin.authenticate(Some(&key.secret)).await.unwrap();
    let query = toggle_admin::model::ClientFeaturesQuery::default();
    let a = t.admin.client_features(&client, &query).await.unwrap();
    let b = t.admin.client_features(&client, &query).await.unwrap();
    assert!(std::sync::Arc::ptr_eq(&a.json, &b.json), "built once");
    t.admin
        .set_feature_enabled(&t.caller, "p", "f", "production", true)
        .await
        .unwrap();
    let c = t.admin.client_features(&client, &query).await.unwrap();
    assert!(!std::sync::Arc::ptr_eq(&a.json, &c.json));
    assert_ne!(a.etag, c.etag);
}
