//! A project's features page, and API keys.

use axum::http::{StatusCode, header};
use toggle_admin::model::NewFeature;

use super::support::setup;

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
