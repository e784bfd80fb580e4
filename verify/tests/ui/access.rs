//! Project access, and a Viewer's refusal on the first forms.

use axum::http::StatusCode;
use toggle_admin::KeyAccess;
use toggle_admin::access::{OWNER_ROLE, VIEWER_ROLE};
use toggle_admin::model::NewUser;

use super::support::setup;

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
