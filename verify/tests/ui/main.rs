//! The admin page through its router without a socket (`tower::ServiceExt::oneshot`): sign-in
//! required, the session cookie's flags, CSRF refusals, the CSP, escaping, a Viewer's refusal,
//! and the four operations through their forms, each checked through the facade.

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::json;
use toggle_admin::access::{OWNER_ROLE, VIEWER_ROLE};
use toggle_admin::model::{Application, Environment, Project};
use toggle_admin::model::{NewFeature, NewUser};
use toggle_admin::ui::{CONTENT_SECURITY_POLICY, SecureCookie, UiConfig};
use toggle_admin::{Caller, KeyAccess, MemoryStore, ToggleAdmin};
use tower::ServiceExt;

struct Page {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Page {
    fn header(&self, name: header::HeaderName) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }

    /// The value of the hidden CSRF field of the page's forms.
    fn csrf(&self) -> String {
        let at = self
            .body
            .find("name=\"csrf\" value=\"")
            .expect("a form with a CSRF token");
        let rest = &self.body[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').unwrap()].to_owned()
    }
}

struct T {
    admin: ToggleAdmin,
    caller: Caller,
    secret: String,
    app: Router,
}

async fn setup_with(config: UiConfig) -> T {
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
    T {
        admin,
        caller,
        secret: key.secret,
        app,
    }
}

async fn setup() -> T {
    setup_with(UiConfig::new()).await
}

impl T {
    async fn send(&self, request: Request<Body>) -> Page {
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

    async fn get(&self, path: &str, cookie: Option<&str>) -> Page {
        let mut request = Request::builder().method(Method::GET).uri(path);
        if let Some(cookie) = cookie {
            request = request.header(header::COOKIE, cookie);
        }
        self.send(request.body(Body::empty()).unwrap()).await
    }

    async fn post(&self, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> Page {
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
    async fn sign_in(&self, secret: &str) -> String {
        let page = self.post("/admin/sign-in", None, &[("key", secret)]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        let set = page.header(header::SET_COOKIE);
        set.split(';').next().unwrap().to_owned()
    }
}

fn serde_urlencoded_pairs(form: &[(&str, &str)]) -> String {
    form.iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn encode(text: &str) -> String {
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

#[tokio::test]
async fn every_page_needs_a_session() {
    let t = setup().await;
    for path in [
        "/admin",
        "/admin/projects/shop",
        "/admin/projects/shop/features/checkout/environments/production/variants",
        "/admin/applications",
        "/admin/keys",
        "/admin/events",
        "/admin/import",
    ] {
        let page = t.get(path, None).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(page.header(header::LOCATION), "/admin/sign-in", "{path}");
        // An unknown or made-up session id is no session.
        let page = t.get(path, Some("toggle_admin_session=00ff00ff")).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
    }
    // A POST without a session changes nothing.
    let page = t
        .post("/admin/applications/x/delete", None, &[("csrf", "x")])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn the_session_cookie_is_http_only_strict_and_holds_no_key() {
    let t = setup().await;
    let page = t.post("/admin/sign-in", None, &[("key", &t.secret)]).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.header(header::LOCATION), "/admin");
    let cookie = page.header(header::SET_COOKIE);
    assert!(cookie.starts_with("toggle_admin_session="), "{cookie}");
    assert!(cookie.contains("; HttpOnly"), "{cookie}");
    assert!(cookie.contains("; SameSite=Strict"), "{cookie}");
    assert!(cookie.contains("; Path=/admin"), "{cookie}");
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    assert!(!cookie.contains(&t.secret), "{cookie}");
    // The page after sign-in shows no key either.
    let session = cookie.split(';').next().unwrap();
    let home = t.get("/admin", Some(session)).await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(!home.body.contains(&t.secret));

    // Over TLS (a proxy says so) the cookie is Secure.
    let request = Request::builder()
        .method(Method::POST)
        .uri("/admin/sign-in")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header("x-forwarded-proto", "https")
        .body(Body::from(format!("key={}", encode(&t.secret))))
        .unwrap();
    let page = t.send(request).await;
    assert!(page.header(header::SET_COOKIE).contains("; Secure"));

    // Configured to always be Secure.
    let t = setup_with(UiConfig::new().secure_cookie(SecureCookie::Always)).await;
    let page = t.post("/admin/sign-in", None, &[("key", &t.secret)]).await;
    assert!(page.header(header::SET_COOKIE).contains("; Secure"));

    // A wrong key: 401, no cookie.
    let page = t.post("/admin/sign-in", None, &[("key", "nope")]).await;
    assert_eq!(page.status, StatusCode::UNAUTHORIZED);
    assert!(page.headers.get(header::SET_COOKIE).is_none());
    assert!(page.body.contains("unknown, revoked or expired"));
}

#[tokio::test]
async fn sign_out_ends_the_session() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let home = t.get("/admin", Some(&cookie)).await;
    let page = t
        .post("/admin/sign-out", Some(&cookie), &[("csrf", &home.csrf())])
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert!(page.header(header::SET_COOKIE).contains("Max-Age=0"));
    assert_eq!(
        t.get("/admin", Some(&cookie)).await.status,
        StatusCode::SEE_OTHER
    );
}

#[tokio::test]
async fn a_form_without_the_session_token_or_from_another_site_is_refused() {
    let t = setup().await;
    t.admin
        .register_application(
            &t.caller,
            &Application {
                name: "web".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let cookie = t.sign_in(&t.secret).await;
    let token = t.get("/admin/applications", Some(&cookie)).await.csrf();
    for form in [vec![], vec![("csrf", "0000")]] {
        let page = t
            .post("/admin/applications/web/delete", Some(&cookie), &form)
            .await;
        assert_eq!(page.status, StatusCode::FORBIDDEN, "{form:?}");
        assert!(page.body.contains("security token"), "{}", page.body);
    }
    // The right token, but the browser says the form came from another site.
    let request = Request::builder()
        .method(Method::POST)
        .uri("/admin/applications/web/delete")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, "https://evil.example")
        .header(header::COOKIE, &cookie)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("csrf={token}")))
        .unwrap();
    assert_eq!(t.send(request).await.status, StatusCode::FORBIDDEN);
    assert!(t.admin.application(&t.caller, "web").await.is_ok());
    // With it, from this page: deleted.
    let page = t
        .post(
            "/admin/applications/web/delete",
            Some(&cookie),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert!(t.admin.application(&t.caller, "web").await.is_err());
    let after = t.get("/admin/applications", Some(&cookie)).await;
    assert!(after.body.contains("Deleted the application web."));
}

#[tokio::test]
async fn every_response_carries_the_strict_csp_and_static_files_are_cached() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    for (path, cookie) in [
        ("/admin/sign-in", None),
        ("/admin", Some(cookie.as_str())),
        ("/admin/projects/shop", Some(cookie.as_str())),
        ("/admin/projects/nope", Some(cookie.as_str())),
        ("/admin/static/ui.css", None),
    ] {
        let page = t.get(path, cookie).await;
        assert_eq!(
            page.header(header::CONTENT_SECURITY_POLICY),
            CONTENT_SECURITY_POLICY,
            "{path}"
        );
        assert_eq!(
            page.header(header::X_CONTENT_TYPE_OPTIONS),
            "nosniff",
            "{path}"
        );
    }
    assert!(CONTENT_SECURITY_POLICY.contains("default-src 'self'"));
    assert!(CONTENT_SECURITY_POLICY.contains("frame-ancestors 'none'"));
    let page = t.get("/admin", Some(&cookie)).await;
    assert_eq!(page.header(header::CACHE_CONTROL), "no-store");
    // No inline script or style, nothing from another origin.
    assert!(!page.body.contains("<script>"));
    assert!(!page.body.contains("style="));
    assert!(!page.body.contains("http://") && !page.body.contains("https://"));

    let css = t.get("/admin/static/ui.css", None).await;
    assert_eq!(css.status, StatusCode::OK);
    assert_eq!(
        css.header(header::CACHE_CONTROL),
        "public, max-age=31536000, immutable"
    );
    let etag = css.header(header::ETAG);
    assert!(etag.starts_with('"') && etag.len() > 2);
    assert!(page.body.contains(&format!(
        "/admin/static/ui.css?v={}",
        etag.trim_matches('"')
    )));
    let request = Request::builder()
        .uri("/admin/static/ui.css")
        .header(header::IF_NONE_MATCH, &etag)
        .body(Body::empty())
        .unwrap();
    let again = t.send(request).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());
}

#[tokio::test]
async fn names_descriptions_and_payloads_are_escaped() {
    let t = setup().await;
    let patch = toggle_admin::variants::decode_patch(&json!([
        { "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0,
          "payload": { "type": "string", "value": "<img src=x onerror=alert(1)>" } } }
    ]))
    .unwrap();
    t.admin
        .patch_variants(&t.caller, "shop", "checkout", "production", &patch)
        .await
        .unwrap();
    let cookie = t.sign_in(&t.secret).await;
    let list = t.get("/admin/projects/shop", Some(&cookie)).await;
    assert!(
        list.body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{}",
        list.body
    );
    assert!(!list.body.contains("<script>alert"));
    let variants = t
        .get(
            "/admin/projects/shop/features/checkout/environments/production/variants",
            Some(&cookie),
        )
        .await;
    assert_eq!(variants.status, StatusCode::OK);
    assert!(variants.body.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!variants.body.contains("<img"));
}

#[tokio::test]
async fn variants_are_saved_as_a_patch_and_errors_are_shown_at_their_field() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let path = "/admin/projects/shop/features/checkout/environments/production/variants";
    let page = t.get(path, Some(&cookie)).await;
    let csrf = page.csrf();
    // Two variants, the second fixed at 150 %: refused, the message next to its weight.
    let form = |weight: &'static str| {
        vec![
            ("csrf", csrf.clone()),
            ("original", "[]".to_owned()),
            ("rows", "2".to_owned()),
            ("v0.name", "blue".to_owned()),
            ("v0.weightType", "variable".to_owned()),
            ("v0.weight", String::new()),
            ("v0.stickiness", "default".to_owned()),
            ("v0.payloadType", "json".to_owned()),
            ("v0.payloadValue", "{\"a\":1}".to_owned()),
            ("v0.overrides", "userId: alice, bob".to_owned()),
            ("v1.name", "green".to_owned()),
            ("v1.weightType", "fix".to_owned()),
            ("v1.weight", weight.to_owned()),
            ("v1.stickiness", "userId".to_owned()),
            ("v1.payloadType", String::new()),
            ("v1.payloadValue", String::new()),
            ("v1.overrides", String::new()),
        ]
    };
    let bad = form("150");
    let pairs: Vec<(&str, &str)> = bad.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = t.post(path, Some(&cookie), &pairs).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"v1.weight.error\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("aria-invalid=\"true\""));
    assert!(
        t.admin
            .variants(&t.caller, "shop", "checkout", "production")
            .await
            .unwrap()
            .variants
            .is_empty()
    );
    // Corrected: saved, and the page shows the normalised result.
    let good = form("25");
    let pairs: Vec<(&str, &str)> = good.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = t.post(path, Some(&cookie), &pairs).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let saved = t
        .admin
        .variants(&t.caller, "shop", "checkout", "production")
        .await
        .unwrap();
    let summary: Vec<(String, u32)> = saved
        .variants
        .iter()
        .map(|v| (v.name.clone(), v.weight))
        .collect();
    assert_eq!(
        summary,
        [("blue".to_owned(), 750), ("green".to_owned(), 250)]
    );
    assert_eq!(
        saved.variants[0].overrides.as_ref().unwrap()[0].values,
        ["alice", "bob"]
    );
    let after = t.get(path, Some(&cookie)).await;
    assert!(
        after.body.contains("Saved: blue 75.0 %, green 25.0 %."),
        "{}",
        after.body
    );
    // The event says it was a patch of the variants.
    let events = t.admin.events(&t.caller, 0, 1000).await.unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.event.event_type == "feature-environment-variants-updated")
    );
    // A form made from the old list, saved after this change: not applied, the user told.
    let stale = form("30");
    let pairs: Vec<(&str, &str)> = stale.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let page = t.post(path, Some(&cookie), &pairs).await;
    assert_eq!(page.status, StatusCode::CONFLICT);
    assert!(page.body.contains("Someone changed these variants"));
}

#[tokio::test]
async fn a_viewer_sees_the_refusal_with_its_reason() {
    let t = setup().await;
    let viewer = t
        .admin
        .create_user(
            &t.caller,
            &NewUser {
                name: Some("Vera".into()),
                email: Some("vera@example.com".into()),
                root_role: Some(VIEWER_ROLE),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let key = t
        .admin
        .create_api_key(&t.caller, "vera", KeyAccess::User { user_id: viewer.id })
        .await
        .unwrap();
    let cookie = t.sign_in(&key.secret).await;
    let path = "/admin/projects/shop/features/checkout/environments/production/variants";
    let page = t.get(path, Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "a Viewer may read");
    let page = t
        .post(
            path,
            Some(&cookie),
            &[
                ("csrf", &page.csrf()),
                ("original", "[]"),
                ("rows", "1"),
                ("v0.name", "blue"),
                ("v0.weightType", "variable"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.body);
    assert!(
        page.body.contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS"),
        "{}",
        page.body
    );
    // Access: refused too, with the reason.
    let access = t.get("/admin/projects/shop/access", Some(&cookie)).await;
    let page = t
        .post(
            "/admin/projects/shop/access",
            Some(&cookie),
            &[
                ("csrf", &access.csrf()),
                (&format!("role.{OWNER_ROLE}.user"), &viewer.id.to_string()),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.body);
    assert!(page.body.contains("permission"), "{}", page.body);
    assert!(
        t.admin
            .project_access(&t.caller, "shop")
            .await
            .unwrap()
            .roles
            .is_empty()
    );
    // API keys are for admins.
    assert_eq!(
        t.get("/admin/keys", Some(&cookie)).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn project_access_is_saved_whole() {
    let t = setup().await;
    let alice = t
        .admin
        .create_user(
            &t.caller,
            &NewUser {
                name: Some("Alice".into()),
                email: Some("alice@example.com".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let cookie = t.sign_in(&t.secret).await;
    let page = t.get("/admin/projects/shop/access", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Alice"));
    let field = format!("role.{OWNER_ROLE}.user");
    let id = alice.id.to_string();
    let page = t
        .post(
            "/admin/projects/shop/access",
            Some(&cookie),
            &[("csrf", &page.csrf()), (&field, &id)],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let access = t.admin.project_access(&t.caller, "shop").await.unwrap();
    assert!(
        access
            .roles
            .iter()
            .any(|r| r.id == OWNER_ROLE && r.users == [alice.id])
    );
}

/// The value of the hidden `plan` field: the fingerprint of the plan shown.
fn fingerprint(page: &Page) -> Option<String> {
    let at = page.body.find("name=\"plan\" value=\"")?;
    let rest = &page.body[at + "name=\"plan\" value=\"".len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

#[tokio::test]
async fn an_export_is_planned_then_imported_as_planned() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let token = t.get("/admin/import", Some(&cookie)).await.csrf();
    let document = json!({
        "features": [
            { "name": "imported", "project": "whatever", "type": "release", "description": "<b>new</b>" },
            { "name": "checkout", "type": "release", "description": "Pay <i>now</i>" }
        ],
        "featureStrategies": [],
        "featureEnvironments": [{ "name": "imported", "featureName": "imported", "environment": "dev", "enabled": true, "variants": [] }],
        "featureTags": [], "tagTypes": [], "contextFields": [], "segments": [], "dependencies": []
    })
    .to_string();
    let multipart = |fields: &[(&str, &str)]| {
        let boundary = "XyZ";
        let mut body = String::new();
        for (name, value) in [
            ("csrf", token.as_str()),
            ("project", "shop"),
            ("environment", "production"),
        ]
        .iter()
        .chain(fields)
        {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--{boundary}--\r\n"
        ));
        Request::builder()
            .method(Method::POST)
            .uri("/admin/import")
            .header(header::HOST, "localhost")
            .header(header::COOKIE, &cookie)
            .header(
                header::CONTENT_TYPE,
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .unwrap()
    };
    let events = t.admin.events(&t.caller, 0, 1000).await.unwrap().len();
    // Plan: what will be created and changed, with the old and new values; nothing written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "plan")]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("The document is valid"), "{}", page.body);
    assert!(
        page.body.contains("1 to create, 1 to update, 0 unchanged"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("<code>/description</code>"),
        "{}",
        page.body
    );
    // Old and new values, escaped.
    assert!(
        page.body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt;"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Pay &lt;i&gt;now&lt;/i&gt;"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("&lt;b&gt;new&lt;/b&gt;"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>new") && !page.body.contains("<script>alert"));
    assert!(!page.body.contains("style="));
    assert_eq!(
        page.header(header::CONTENT_SECURITY_POLICY),
        CONTENT_SECURITY_POLICY
    );
    let planned = fingerprint(&page).expect("the plan's fingerprint in the form");
    assert!(
        t.admin
            .feature(&t.caller, "shop", "imported")
            .await
            .is_err(),
        "planning writes nothing"
    );
    // Import without having seen the plan: the plan is shown, nothing is written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "import")]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("Nothing was written yet"),
        "{}",
        page.body
    );
    assert_eq!(fingerprint(&page).as_deref(), Some(planned.as_str()));
    // A plan seen for another document (or a store that changed since): nothing written.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", "0123"),
        ]))
        .await;
    assert!(
        page.body.contains("The plan changed since you saw it"),
        "{}",
        page.body
    );
    assert!(
        t.admin
            .feature(&t.caller, "shop", "imported")
            .await
            .is_err()
    );
    assert_eq!(
        t.admin.events(&t.caller, 0, 1000).await.unwrap().len(),
        events
    );
    // Import with the plan seen: imported, and the summary follows the plan.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", &planned),
        ]))
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains("1 created, 1 updated, 0 unchanged, 0 skipped"),
        "{}",
        page.body
    );
    let feature = t
        .admin
        .feature(&t.caller, "shop", "imported")
        .await
        .unwrap();
    let production = feature
        .environments
        .unwrap()
        .into_iter()
        .find(|e| e.name == "production")
        .unwrap();
    assert!(production.enabled);
    // Planned again: nothing to change; imported again: both unchanged, nothing written.
    let page = t
        .send(multipart(&[("document", &document), ("action", "plan")]))
        .await;
    assert!(page.body.contains("Nothing to change"), "{}", page.body);
    let again = fingerprint(&page).unwrap();
    let written = t.admin.events(&t.caller, 0, 1000).await.unwrap().len();
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "import"),
            ("plan", &again),
        ]))
        .await;
    assert!(
        page.body
            .contains("0 created, 0 updated, 2 unchanged, 0 skipped"),
        "{}",
        page.body
    );
    assert_eq!(
        t.admin.events(&t.caller, 0, 1000).await.unwrap().len(),
        written
    );
    // create-missing: the existing ones are skipped.
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "plan"),
            ("mode", "create-missing"),
        ]))
        .await;
    assert!(
        page.body
            .contains("0 to create, 0 to update, 0 unchanged, 2 skipped"),
        "{}",
        page.body
    );
    let page = t
        .send(multipart(&[
            ("document", &document),
            ("action", "plan"),
            ("mode", "merge"),
        ]))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("mode"), "{}", page.body);
    // Not JSON: said so, nothing written.
    let page = t
        .send(multipart(&[("document", "{ nope"), ("action", "import")]))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.contains("not JSON"));
}

#[tokio::test]
async fn a_large_plan_stays_under_100_kb() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let token = t.get("/admin/import", Some(&cookie)).await.csrf();
    let features: Vec<_> = (0..2000)
        .map(|i| json!({ "name": format!("flag-{i:04}"), "type": "release", "description": "x".repeat(300) }))
        .collect();
    let document = json!({
        "features": features, "featureStrategies": [], "tagTypes": []
    })
    .to_string();
    let boundary = "XyZ";
    let mut body = String::new();
    for (name, value) in [
        ("csrf", token.as_str()),
        ("project", "shop"),
        ("environment", "production"),
        ("action", "plan"),
        ("document", ""),
    ] {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"flags.json\"\r\nContent-Type: application/json\r\n\r\n{document}\r\n--{boundary}--\r\n"
    ));
    let request = Request::builder()
        .method(Method::POST)
        .uri("/admin/import")
        .header(header::HOST, "localhost")
        .header(header::COOKIE, &cookie)
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    let page = t.send(request).await;
    assert_eq!(
        page.status,
        StatusCode::OK,
        "{}",
        &page.body[..page.body.len().min(2000)]
    );
    assert!(
        page.body.contains("2000 to create"),
        "{}",
        &page.body[..2000]
    );
    assert!(
        page.body.contains("more features to create or update"),
        "the plan is summarised"
    );
    // Besides the document echoed into its textarea (the Import button sends it again), the
    // page, the plan included, stays small.
    let start = page.body.find("<textarea").unwrap();
    let end = page.body[start..].find("</textarea>").unwrap() + start;
    let without_document = page.body.len() - (end - start);
    assert!(
        without_document <= 100 * 1024,
        "{without_document} bytes besides the document"
    );
}

#[tokio::test]
async fn the_features_page_is_searched_and_paged_on_the_server() {
    let t = setup().await;
    for i in 0..120 {
        t.admin
            .create_feature(
                &t.caller,
                "shop",
                &NewFeature {
                    name: format!("f{i:03}"),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let cookie = t.sign_in(&t.secret).await;
    let page = t.get("/admin/projects/shop?page=2", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("Page 2 of 3 (121 in all)"),
        "{}",
        page.body
    );
    assert!(page.body.contains(">f049<") && page.body.contains(">f098<"));
    assert!(!page.body.contains(">f048<") && !page.body.contains(">f099<"));
    let page = t.get("/admin/projects/shop?q=F11", Some(&cookie)).await;
    assert!(
        page.body.contains("Page 1 of 1 (10 in all)"),
        "{}",
        page.body
    );
    // Turn one on from the list.
    let on = t
        .post(
            "/admin/projects/shop/features/f110/environments/production/enabled",
            Some(&cookie),
            &[
                ("csrf", &page.csrf()),
                ("enabled", "true"),
                ("back", "/admin/projects/shop?q=F11"),
            ],
        )
        .await;
    assert_eq!(on.status, StatusCode::SEE_OTHER, "{}", on.body);
    assert_eq!(on.header(header::LOCATION), "/admin/projects/shop?q=F11");
    let feature = t.admin.feature(&t.caller, "shop", "f110").await.unwrap();
    assert!(feature.environments.unwrap()[0].enabled);
}

#[tokio::test]
async fn a_created_key_secret_is_shown_once() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let page = t.get("/admin/keys", Some(&cookie)).await;
    let created = t
        .post(
            "/admin/keys",
            Some(&cookie),
            &[("csrf", &page.csrf()), ("name", "ci"), ("kind", "admin")],
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let keys = t.admin.api_keys(&t.caller).await.unwrap();
    let ci = keys.iter().find(|k| k.name == "ci").unwrap();
    let at = created.body.find("id=\"secret\"").unwrap();
    let secret_html = &created.body[at..];
    let value_at = secret_html.find("value=\"").unwrap() + 7;
    let secret = &secret_html[value_at..value_at + secret_html[value_at..].find('"').unwrap()];
    assert!(t.admin.authenticate(Some(secret)).await.is_ok());
    let again = t.get("/admin/keys", Some(&cookie)).await;
    assert!(!again.body.contains(secret));
    // Revoke it.
    let revoke = t
        .post(
            &format!("/admin/keys/{}/revoke", ci.id),
            Some(&cookie),
            &[("csrf", &again.csrf())],
        )
        .await;
    assert_eq!(revoke.status, StatusCode::SEE_OTHER);
    assert!(t.admin.authenticate(Some(secret)).await.is_err());
}
