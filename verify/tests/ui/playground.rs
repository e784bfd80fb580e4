//! The playground page: a context and an environment, every flag with its verdict, variant
//! and reason, agreeing with the frontend API; a bad context line shown next to its field.

use axum::http::{Method, StatusCode};
use serde_json::json;
use toggle_admin::KeyAccess;

use super::support::{T, seed, setup};

/// The flag's row of the playground's results.
fn row<'a>(body: &'a str, flag: &str) -> &'a str {
    let at = body
        .find(&format!("<tr data-flag=\"{flag}\">"))
        .unwrap_or_else(|| panic!("no row for {flag}: {body}"));
    let end = body[at..].find("</tr>").map_or(body.len(), |e| at + e);
    &body[at..end]
}

/// Whether the frontend API (a frontend key of production) says `checkout` is on for alice in
/// `country`.
async fn frontend_says(t: &T, key: &str, country: &str) -> bool {
    let reply = test_support::http::send(
        t.api.clone(),
        Method::GET,
        &format!("/api/frontend?userId=alice&properties[country]={country}"),
        Some(key),
        None,
        Vec::new(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    body["toggles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "checkout" && t["enabled"] == true)
}

#[tokio::test]
async fn the_playground_agrees_with_the_frontend_api_and_says_why() {
    let t = setup().await;
    let seeded = seed(&t).await;
    // Everyone in the segment, in NO or SE, with a variant.
    t.admin
        .update_strategy_json(
            &t.caller,
            "shop",
            "checkout",
            "production",
            &seeded.strategy,
            &json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "100", "stickiness": "default", "groupId": "checkout"},
                "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO", "SE"]}],
                "segments": [seeded.segment],
                "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
                              "payload": {"type": "json", "value": "{\"color\":\"blue\"}"}}]
            }),
        )
        .await
        .unwrap();
    t.admin
        .set_feature_enabled(&t.caller, "shop", "checkout", "production", true)
        .await
        .unwrap();
    let frontend = t
        .admin
        .create_api_key(
            &t.caller,
            "web",
            KeyAccess::frontend(vec!["*".into()], "production"),
        )
        .await
        .unwrap();
    let cookie = t.sign_in(&t.secret).await;
    let ask = |country: &str| {
        format!(
            "/admin/playground?environment=production&userId=alice&properties=country%3D{country}"
        )
    };
    let page = t.get(&ask("NO"), Some(&cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let checkout = row(&page.body, "checkout");
    assert!(checkout.contains("<strong>enabled</strong>"), "{checkout}");
    assert!(checkout.contains("blue"), "the variant: {checkout}");
    assert!(
        checkout.contains("{&quot;color&quot;:&quot;blue&quot;}"),
        "its payload: {checkout}"
    );
    assert!(
        checkout.contains("Strategy 1 (flexibleRollout) lets this context in."),
        "{checkout}"
    );
    assert!(frontend_says(&t, &frontend.secret, "NO").await);

    let page = t.get(&ask("DK"), Some(&cookie)).await;
    let checkout = row(&page.body, "checkout");
    assert!(checkout.contains(">disabled<"), "{checkout}");
    assert!(
        checkout
            .contains("No strategy lets this context in (strategy 1: country is NO or SE fails)."),
        "{checkout}"
    );
    assert!(
        checkout.contains("country is NO or SE — ✗ fails"),
        "{checkout}"
    );
    assert!(checkout.contains("segment beta — ✓ holds"), "{checkout}");
    assert!(!frontend_says(&t, &frontend.secret, "DK").await);

    // Off in development: said so.
    let page = t
        .get(
            "/admin/playground?environment=development&userId=alice",
            Some(&cookie),
        )
        .await;
    assert!(row(&page.body, "checkout").contains("It is off in this environment."));
    // Archived flags are not there.
    assert!(!page.body.contains("data-flag=\"old-flag\""));
}

#[tokio::test]
async fn a_bad_context_is_shown_next_to_its_field() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let page = t
        .get(
            "/admin/playground?environment=production&properties=country",
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"context.properties.error\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("not key=value"));
    // The app name is the facade's to require.
    let page = t
        .get(
            "/admin/playground?environment=production&appName=",
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"context.appName.error\""),
        "{}",
        page.body
    );
    // An environment that does not exist.
    let page = t
        .get("/admin/playground?environment=nowhere", Some(&cookie))
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"environment.error\""),
        "{}",
        page.body
    );
}
