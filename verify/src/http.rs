//! Shared set-up for the HTTP tests: a store with environments, projects and a feature, and
//! a way to send one request through the router.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::{Caller, Grant, KeyAccess, MemoryStore, ToggleAdmin};
use tower::ServiceExt;

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    pub fn content_type(&self) -> Option<String> {
        self.headers
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned())
    }

    /// Assert an error response: the status, the name, a UUID id, JSON content type, and no
    /// member beyond `{id, name, message, details}`. Returns the body.
    pub fn error(&self, status: StatusCode, name: &str) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_error_body(&self.json(), name);
        assert!(
            self.content_type()
                .is_some_and(|c| c.starts_with("application/json")),
            "{:?}",
            self.content_type()
        );
        self.json()
    }
}

/// `{id (UUID), name, message, details?}` and nothing else.
pub fn assert_error_body(body: &Value, name: &str) {
    let object = body
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {body}"));
    assert_eq!(object["name"], name, "{body}");
    let id = object["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id: {body}"));
    uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("id {id} is not a UUID: {e}"));
    assert!(object["message"].is_string(), "{body}");
    for key in object.keys() {
        assert!(
            ["id", "name", "message", "details"].contains(&key.as_str()),
            "unexpected member {key}: {body}"
        );
    }
}

/// One request through `app`.
pub async fn send(
    app: Router,
    method: Method,
    path: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Reply {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(key) = key {
        request = request.header(header::AUTHORIZATION, key);
    }
    if let Some(content_type) = content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    let response = app
        .oneshot(request.body(Body::from(body)).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

/// An admin core over a MemoryStore with environments `production`, `development`, `staging`,
/// project `p` (production, development), project `other` (production), feature `f` in `p`
/// and `g` in `other`; an admin key.
pub struct Setup {
    pub admin: ToggleAdmin,
    pub caller: Caller,
    pub secret: String,
    pub app: Router,
}

pub async fn setup() -> Setup {
    setup_on(ToggleAdmin::new(MemoryStore::new())).await
}

/// The same set-up over any admin core with an empty store.
pub async fn setup_on(admin: ToggleAdmin) -> Setup {
    let key = admin.bootstrap_admin_key("test-admin").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for (name, kind) in [
        ("production", "production"),
        ("development", "development"),
        ("staging", "test"),
    ] {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: name.into(),
                    environment_type: kind.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    for (id, environments) in [
        ("p", vec!["production", "development"]),
        ("other", vec!["production"]),
    ] {
        admin
            .create_project(
                &caller,
                &Project {
                    id: id.into(),
                    name: id.to_uppercase(),
                    environments: environments.into_iter().map(Into::into).collect(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    for (project, name) in [("p", "f"), ("other", "g")] {
        admin
            .create_feature(
                &caller,
                project,
                &NewFeature {
                    name: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let app = toggle_admin::http::router(admin.clone());
    Setup {
        admin,
        caller,
        secret: key.secret,
        app,
    }
}

impl Setup {
    /// A request with the admin key and, when there is a body, `application/json`.
    pub async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> Reply {
        self.call_as(&self.secret.clone(), method, path, body).await
    }

    pub async fn call_as(
        &self,
        key: &str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Reply {
        let (content_type, bytes) = match body {
            Some(body) => (Some("application/json"), body.to_string().into_bytes()),
            None => (None, Vec::new()),
        };
        send(
            self.app.clone(),
            method,
            path,
            Some(key),
            content_type,
            bytes,
        )
        .await
    }

    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Reply {
        send(self.app.clone(), method, path, key, content_type, body).await
    }

    /// The secret of a new key with exactly `grants`.
    pub async fn key_with(&self, grants: Vec<Grant>) -> String {
        self.admin
            .create_api_key(&self.caller, "limited", KeyAccess::Grants { grants })
            .await
            .unwrap()
            .secret
    }
}

/// `method path body` with the admin key, asserting the answer's `status`: its JSON
/// (`null` when empty).
pub async fn expect(
    t: &Setup,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: StatusCode,
) -> Value {
    expect_as(t, &t.secret.clone(), method, path, body, status).await
}

/// [`expect`] with `key`.
pub async fn expect_as(
    t: &Setup,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: StatusCode,
) -> Value {
    let r = t.call_as(key, method.clone(), path, body.as_ref()).await;
    assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// The `path` of every detail of an error body.
pub fn detail_paths(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["path"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}
