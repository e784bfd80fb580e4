//! Creating a feature, its settings and staleness through the page.

use axum::http::{StatusCode, header};

use super::support::setup;

#[tokio::test]
async fn a_feature_is_created_with_its_settings() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let form = "/admin/projects/shop/new-feature";
    let page = t
        .submit(
            &cookie,
            form,
            form,
            &[
                ("name", "new-checkout"),
                ("type", "experiment"),
                ("description", "The <new> checkout"),
                ("impressionData", "true"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(
        page.header(header::LOCATION),
        "/admin/projects/shop/features/new-checkout"
    );
    let (status, feature) = t
        .api_get("/api/admin/projects/shop/features/new-checkout")
        .await;
    assert_eq!(status, StatusCode::OK, "{feature}");
    assert_eq!(feature["type"], "experiment");
    assert_eq!(feature["description"], "The <new> checkout");
    assert_eq!(feature["impressionData"], true);
    let shown = t
        .get("/admin/projects/shop/features/new-checkout", Some(&cookie))
        .await;
    assert!(shown.body.contains("Created the feature new-checkout."));
    assert!(shown.body.contains("The &lt;new&gt; checkout"));
    // Its events say who did it.
    assert!(shown.body.contains("feature-created"), "{}", shown.body);
    assert!(
        shown.body.contains("<td>ops</td>"),
        "the creator is named: {}",
        shown.body
    );
}

#[tokio::test]
async fn a_taken_or_invalid_name_is_refused_next_to_the_field() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let form = "/admin/projects/shop/new-feature";
    let before = t.event_count().await;
    for (name, status, says) in [
        ("checkout", StatusCode::CONFLICT, "already exists"),
        ("not a name!", StatusCode::BAD_REQUEST, "URL-friendly"),
        ("", StatusCode::BAD_REQUEST, "name"),
    ] {
        let page = t
            .submit(&cookie, form, form, &[("name", name), ("type", "release")])
            .await;
        assert_eq!(page.status, status, "{name}: {}", page.body);
        let at = page
            .body
            .find("id=\"name.error\"")
            .unwrap_or_else(|| panic!("{name}: no message next to the name: {}", page.body));
        assert!(
            page.body[at..].contains(says),
            "{name}: {}",
            &page.body[at..]
        );
        assert!(
            page.body
                .contains("aria-describedby=\"name.hint name.error\""),
            "{name}"
        );
        assert!(page.body.contains("aria-invalid=\"true\""), "{name}");
        // What was typed is kept.
        assert!(page.body.contains(&format!("value=\"{name}\"")), "{name}");
    }
    assert_eq!(t.event_count().await, before, "nothing was changed");
    let (status, _) = t
        .api_get("/api/admin/projects/shop/features/not%20a%20name!")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn settings_and_staleness_are_changed_and_a_bad_type_is_refused() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let settings = "/admin/projects/shop/features/checkout/settings";
    let page = t
        .submit(
            &cookie,
            settings,
            settings,
            &[
                ("type", "kill-switch"),
                ("description", "Pay for the basket"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, feature) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(feature["type"], "kill-switch");
    assert_eq!(feature["description"], "Pay for the basket");
    assert_eq!(feature["impressionData"], false);

    // Stale: the button on the feature's page.
    let stale = t
        .submit(
            &cookie,
            "/admin/projects/shop/features/checkout",
            "/admin/projects/shop/features/checkout/stale",
            &[("stale", "true")],
        )
        .await;
    assert_eq!(stale.status, StatusCode::SEE_OTHER, "{}", stale.body);
    let (_, feature) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(feature["stale"], true);
    // The settings form leaves staleness as it is.
    t.submit(
        &cookie,
        settings,
        settings,
        &[("type", "release"), ("description", "")],
    )
    .await;
    let (_, feature) = t
        .api_get("/api/admin/projects/shop/features/checkout")
        .await;
    assert_eq!(feature["stale"], true);
    assert_eq!(feature["type"], "release");
    assert!(feature["description"].is_null(), "{feature}");

    // A type the select does not offer (a forged form): refused next to the field.
    let before = t.event_count().await;
    let page = t
        .submit(
            &cookie,
            settings,
            settings,
            &[("type", "nope"), ("description", "x")],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(page.body.contains("id=\"type.error\""), "{}", page.body);
    assert!(page.body.contains("is not a feature type"), "{}", page.body);
    assert_eq!(t.event_count().await, before);
}

#[tokio::test]
async fn in_maintenance_a_form_says_so_keeps_what_was_typed_and_changes_nothing() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    t.admin
        .set_maintenance(
            &t.caller,
            &toggle_admin::model::MaintenanceMode { enabled: true },
        )
        .await
        .unwrap();
    let form = "/admin/projects/shop/new-feature";
    let page = t
        .submit(&cookie, form, form, &[("name", "during-maintenance")])
        .await;
    assert_eq!(
        page.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        page.body
    );
    assert!(page.body.contains("maintenance"), "{}", page.body);
    assert!(page.body.contains("value=\"during-maintenance\""));
    let (status, _) = t
        .api_get("/api/admin/projects/shop/features/during-maintenance")
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // A button's refusal is a page saying so.
    let page = t
        .submit(
            &cookie,
            "/admin/projects/shop/features/checkout",
            "/admin/projects/shop/features/checkout/stale",
            &[("stale", "true")],
        )
        .await;
    assert_eq!(
        page.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        page.body
    );
    assert!(page.body.contains("In maintenance"), "{}", page.body);
}
