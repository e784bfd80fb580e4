//! Archiving after a confirmation step, the archive, reviving, deleting for good after a
//! confirmation step, and finding a feature by name across projects.

use axum::http::{StatusCode, header};
use toggle_admin::model::{NewFeature, Project};

use super::support::setup;

#[tokio::test]
async fn a_feature_is_archived_revived_and_deleted_for_good() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let feature = "/admin/projects/shop/features/checkout";
    // The confirmation step says what archiving does; nothing happens by looking.
    let confirm = t.get(&format!("{feature}/archive"), Some(&cookie)).await;
    assert_eq!(confirm.status, StatusCode::OK);
    assert!(
        confirm.body.contains("Archive checkout?"),
        "{}",
        confirm.body
    );
    let (status, _) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(status, StatusCode::OK);
    let page = t
        .post(
            &format!("{feature}/archive"),
            Some(&cookie),
            &[("csrf", &confirm.csrf())],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.header(header::LOCATION), "/admin/projects/shop");
    let (status, _) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, archive) = t.api_get("/api/admin/archive/features").await;
    assert_eq!(archive["features"][0]["name"], "checkout", "{archive}");

    // The archive lists it; revive brings it back, off.
    let list = t.get("/admin/archive", Some(&cookie)).await;
    assert!(list.body.contains("Revive checkout"), "{}", list.body);
    let page = t
        .post(
            "/admin/archive/checkout/revive",
            Some(&cookie),
            &[("csrf", &list.csrf())],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.header(header::LOCATION), feature);
    let (status, revived) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(revived["environments"][0]["enabled"], false);

    // Archived again, then deleted for good after its confirmation step.
    t.admin
        .archive_feature(&t.caller, "shop", "checkout")
        .await
        .unwrap();
    let confirm = t.get("/admin/archive/checkout/delete", Some(&cookie)).await;
    assert_eq!(confirm.status, StatusCode::OK);
    assert!(confirm.body.contains("for good"), "{}", confirm.body);
    let (_, archive) = t.api_get("/api/admin/archive/features").await;
    assert_eq!(archive["features"].as_array().unwrap().len(), 1);
    let page = t
        .post(
            "/admin/archive/checkout/delete",
            Some(&cookie),
            &[("csrf", &confirm.csrf())],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, archive) = t.api_get("/api/admin/archive/features").await;
    assert!(
        archive["features"].as_array().unwrap().is_empty(),
        "{archive}"
    );
    let after = t.get("/admin/archive", Some(&cookie)).await;
    assert!(after.body.contains("Deleted checkout for good."));
    // The name is free again.
    let (status, _) = t
        .api_send(
            axum::http::Method::POST,
            "/api/admin/features/validate",
            &serde_json::json!({"name": "checkout"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn deleting_an_active_feature_is_refused_with_the_reason() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let archive = t.get("/admin/archive", Some(&cookie)).await;
    let page = t
        .post(
            "/admin/archive/checkout/delete",
            Some(&cookie),
            &[("csrf", &archive.csrf())],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(page.body.contains("role=\"alert\""));
    let (status, _) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(status, StatusCode::OK, "nothing was deleted");
}

#[tokio::test]
async fn a_feature_is_found_by_name_across_projects() {
    let t = setup().await;
    t.admin
        .create_project(
            &t.caller,
            &Project {
                id: "web".into(),
                name: "Web".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for (project, name) in [("web", "checkout-banner"), ("web", "search-box")] {
        t.admin
            .create_feature(
                &t.caller,
                project,
                &NewFeature {
                    name: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let cookie = t.sign_in(&t.secret).await;
    let page = t.get("/admin/search?q=CHECKOUT", Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("href=\"/admin/projects/shop/features/checkout\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("href=\"/admin/projects/web/features/checkout-banner\"")
    );
    assert!(!page.body.contains("search-box"));
    assert!(page.body.contains("2 in all"), "{}", page.body);
    let none = t.get("/admin/search?q=zzz", Some(&cookie)).await;
    assert!(none.body.contains("No feature matches"));
}
