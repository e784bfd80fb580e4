//! Sessions, cookies, CSRF and the headers every response carries.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use toggle_admin::model::Application;
use toggle_admin::ui::{CONTENT_SECURITY_POLICY, SecureCookie, UiConfig};

use super::support::{encode, every_page, seed, setup, setup_with};

#[tokio::test]
async fn every_page_needs_a_session() {
    let t = setup().await;
    let seeded = seed(&t).await;
    for path in every_page(&seeded) {
        let page = t.get(&path, None).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(page.header(header::LOCATION), "/admin/sign-in", "{path}");
        // An unknown or made-up session id is no session.
        let page = t.get(&path, Some("toggle_admin_session=00ff00ff")).await;
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
