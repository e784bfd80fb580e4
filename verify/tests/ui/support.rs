//! What every test of the page shares: a facade over a MemoryStore with project `shop`
//! (environment `production`) and feature `checkout`, its page router and its admin API
//! router, and requests through both without a socket.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use toggle_admin::access::VIEWER_ROLE;
use toggle_admin::model::{Environment, Project};
use toggle_admin::model::{NewFeature, NewUser};
use toggle_admin::ui::UiConfig;
use toggle_admin::{Caller, KeyAccess, MemoryStore, ToggleAdmin};
use tower::ServiceExt;

pub(crate) struct Page {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: String,
}

impl Page {
    pub fn header(&self, name: header::HeaderName) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    /// The value of the hidden CSRF field of the page's forms.
    pub fn csrf(&self) -> String {
        let at = self
            .body
            .find("name=\"csrf\" value=\"")
            .expect("a form with a CSRF token");
        let rest = &self.body[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

pub(crate) struct T {
    pub admin: ToggleAdmin,
    pub caller: Caller,
    pub secret: String,
    pub app: Router,
    /// The admin API over the same facade, for reading what a form changed.
    pub api: Router,
}

pub(crate) async fn setup_with(config: UiConfig) -> T {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("ops").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    admin
        .create_environment(
            &caller,
            &Environment {
                name: "production".into(),
                environment_type: "production".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_project(
            &caller,
            &Project {
                id: "shop".into(),
                name: "Shop".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .create_feature(
            &caller,
            "shop",
            &NewFeature {
                name: "checkout".into(),
                description: Some("<script>alert('x')</script>".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let app = config.router(admin.clone());
    let api = toggle_admin::http::router(admin.clone());
    T {
        admin,
        caller,
        secret: key.secret,
        app,
        api,
    }
}

pub(crate) async fn setup() -> T {
    setup_with(UiConfig::new()).await
}

impl T {
    pub async fn send(&self, request: Request<Body>) -> Page {
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Page {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    pub async fn get(&self, path: &str, cookie: Option<&str>) -> Page {
        let mut request = Request::builder().method(Method::GET).uri(path);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Body::empty()).unwrap()).await
    }

    pub async fn post(&self, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> Page {
        let body = serde_urlencoded_pairs(form);
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Body::from(body)).unwrap()).await
    }

    /// Sign in with `secret`; the cookie to send back.
    pub async fn sign_in(&self, secret: &str) -> String {
        let page = self.post("/admin/sign-in", None, &[("key", secret)]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        let set = page.header(header::SET_COOKIE);
        set.split(';').next().unwrap().to_owned()
    }

    /// `GET` `path` through the admin API with the admin key: status and JSON.
    pub async fn api_get(&self, path: &str) -> (StatusCode, Value) {
        let reply = test_support::http::send(
            self.api.clone(),
            Method::GET,
            path,
            Some(&self.secret),
            None,
            Vec::new(),
        )
        .await;
        let json = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
        (reply.status, json)
    }

    /// Through the admin API with the admin key: `method` `path` with the JSON `body`.
    pub async fn api_send(&self, method: Method, path: &str, body: &Value) -> (StatusCode, Value) {
        let reply = test_support::http::send(
            self.api.clone(),
            method,
            path,
            Some(&self.secret),
            Some("application/json"),
            serde_json::to_vec(body).unwrap(),
        )
        .await;
        let json = serde_json::from_slice(&reply.body).unwrap_or(Value::Null);
        (reply.status, json)
    }

    /// The page at `page_path` (for its CSRF token), then its form posted to `post_path`
    /// with `form` (the token added).
    pub async fn submit(
        &self,
        cookie: &str,
        page_path: &str,
        post_path: &str,
        form: &[(&str, &str)],
    ) -> Page {
        let page = self.get(page_path, Some(cookie)).await;
        assert_eq!(page.status, StatusCode::OK, "{page_path}: {}", page.body);
        let token = page.csrf();
        let mut with_token: Vec<(&str, &str)> = vec![("csrf", token.as_str())];
        with_token.extend_from_slice(form);
        self.post(post_path, Some(cookie), &with_token).await
    }

    /// How many events the log holds.
    pub async fn event_count(&self) -> usize {
        self.admin
            .events(&self.caller, 0, 100_000)
            .await
            .unwrap()
            .len()
    }

    /// A Viewer (root role 3) with a user key, signed in: its cookie.
    pub async fn viewer(&self) -> String {
        let viewer = self
            .admin
            .create_user(
                &self.caller,
                &NewUser {
                    name: Some("Vera".into()),
                    email: Some(format!("vera-{}@example.com", uuid_ish())),
                    root_role: Some(VIEWER_ROLE),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let key = self
            .admin
            .create_api_key(&self.caller, "vera", KeyAccess::User { user_id: viewer.id })
            .await
            .unwrap();
        self.sign_in(&key.secret).await
    }

    /// Add environment `development` to project `shop`.
    pub async fn with_development(&self) {
        self.admin
            .create_environment(
                &self.caller,
                &Environment {
                    name: "development".into(),
                    environment_type: "development".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        self.admin
            .add_project_environment(&self.caller, "shop", "development")
            .await
            .unwrap();
    }
}

/// A short unique text.
fn uuid_ish() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

pub(crate) fn serde_urlencoded_pairs(form: &[(&str, &str)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

pub(crate) fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// What [`seed`] made, for the paths that name it.
pub(crate) struct Seeded {
    /// The strategy of `checkout` in `production`.
    pub strategy: String,
    /// Segment `beta`.
    pub segment: i64,
}

/// A day's state: environment `development` in `shop`, context field `country` (legal
/// values NO, SE, DK), segment `beta`, a 25 % rollout of `checkout` in `production` where
/// country is NO or SE and in `beta`, and the archived feature `old-flag`.
pub(crate) async fn seed(t: &T) -> Seeded {
    use toggle_admin::model::{ContextField, LegalValue, NewSegment};
    t.with_development().await;
    let legal = ["NO", "SE", "DK"]
        .iter()
        .map(|v| LegalValue {
            value: (*v).to_owned(),
            description: None,
        })
        .collect();
    t.admin
        .create_context_field(
            &t.caller,
            &ContextField {
                name: "country".into(),
                legal_values: Some(legal),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let segment: toggle_admin::model::Constraint = serde_json::from_value(
        serde_json::json!({"contextName": "userId", "operator": "IN", "values": ["alice", "bob"]}),
    )
    .unwrap();
    let beta = t
        .admin
        .create_segment(
            &t.caller,
            &NewSegment {
                name: "beta".into(),
                constraints: vec![segment],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let strategy = t
        .admin
        .add_strategy_json(
            &t.caller,
            "shop",
            "checkout",
            "production",
            &serde_json::json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "25", "stickiness": "default", "groupId": "checkout"},
                "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO", "SE"]}],
                "segments": [beta.id]
            }),
        )
        .await
        .unwrap();
    t.admin
        .create_feature(
            &t.caller,
            "shop",
            &NewFeature {
                name: "old-flag".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    t.admin
        .archive_feature(&t.caller, "shop", "old-flag")
        .await
        .unwrap();
    Seeded {
        strategy: strategy.id.unwrap(),
        segment: beta.id,
    }
}

/// Every page a signed-in person can open, over the [`seed`]ed state.
pub(crate) fn every_page(seeded: &Seeded) -> Vec<String> {
    let feature = "/admin/projects/shop/features/checkout";
    let strategies = format!("{feature}/environments/production/strategies");
    let strategy = format!("{strategies}/{}", seeded.strategy);
    vec![
        "/admin".to_owned(),
        "/admin/projects/shop".to_owned(),
        "/admin/projects/shop/new-feature".to_owned(),
        feature.to_owned(),
        format!("{feature}/settings"),
        format!("{feature}/archive"),
        format!("{strategies}/new"),
        format!("{strategies}/new?type=flexibleRollout"),
        format!("{strategies}/new?type=userWithId"),
        format!("{strategies}/new?type=applicationHostname"),
        strategy.clone(),
        format!("{strategy}/remove"),
        format!("{feature}/environments/production/variants"),
        "/admin/projects/shop/access".to_owned(),
        "/admin/search?q=check".to_owned(),
        "/admin/archive".to_owned(),
        "/admin/archive/old-flag/delete".to_owned(),
        "/admin/segments".to_owned(),
        "/admin/segments/new".to_owned(),
        format!("/admin/segments/{}", seeded.segment),
        "/admin/context".to_owned(),
        "/admin/context/new".to_owned(),
        "/admin/context/country".to_owned(),
        "/admin/context/userId".to_owned(),
        "/admin/playground".to_owned(),
        "/admin/playground?environment=production&userId=alice&properties=country%3DNO".to_owned(),
        "/admin/applications".to_owned(),
        "/admin/keys".to_owned(),
        "/admin/events".to_owned(),
        "/admin/import".to_owned(),
        "/admin/export".to_owned(),
    ]
}
