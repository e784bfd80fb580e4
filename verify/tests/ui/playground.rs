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

#[tokio::test]
async fn the_name_filter_and_the_pages_count_every_matching_flag() {
    let t = setup().await;
    for i in 0..60 {
        let name = format!("bulk-{i:02}");
        t.admin
            .create_feature(
                &t.caller,
                "shop",
                &toggle_admin::model::NewFeature {
                    name: name.clone(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        if i % 3 == 0 {
            t.admin
                .set_feature_enabled(&t.caller, "shop", &name, "production", true)
                .await
                .unwrap();
        }
    }
    // What the whole playground says of the flags the filter keeps.
    let request = toggle_admin::model::PlaygroundRequest {
        environment: "production".into(),
        projects: None,
        context: serde_json::from_value(json!({"appName": "playground"})).unwrap(),
    };
    let whole = t.admin.playground(&t.caller, &request).await.unwrap();
    let bulk: Vec<_> = whole
        .features
        .iter()
        .filter(|f| f.name.starts_with("bulk-"))
        .collect();
    let enabled = bulk.iter().filter(|f| f.is_enabled).count();
    assert_eq!(bulk.len(), 60);
    assert!(enabled > 0 && enabled < 60, "{enabled}");
    let cookie = t.sign_in(&t.secret).await;
    // The filter is trimmed and ignores case; page 2 holds the last 10.
    let page = t
        .get(
            "/admin/playground?environment=production&q=%20BULK-%20&page=2",
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body
            .contains(&format!("In production: {enabled} of 60 flags enabled")),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("Page 2 of 2 (60 in all)"),
        "{}",
        page.body
    );
    assert_eq!(page.body.matches("<tr data-flag=").count(), 10);
    for f in &bulk[50..] {
        let shown = row(&page.body, &f.name);
        let verdict = if f.is_enabled {
            "<strong>enabled</strong>"
        } else {
            ">disabled<"
        };
        assert!(shown.contains(verdict), "{shown}");
    }
    assert!(!page.body.contains("data-flag=\"bulk-49\""));
    assert!(!page.body.contains("data-flag=\"checkout\""));
    // Without a filter, every flag is counted and the first page holds 50.
    let page = t
        .get("/admin/playground?environment=production", Some(&cookie))
        .await;
    assert!(
        page.body.contains(&format!(
            "In production: {} of {} flags enabled",
            whole.features.iter().filter(|f| f.is_enabled).count(),
            whole.features.len()
        )),
        "{}",
        page.body
    );
    assert_eq!(page.body.matches("<tr data-flag=").count(), 50);
    // A page past the end: the counts, no row.
    let page = t
        .get(
            "/admin/playground?environment=production&q=bulk&page=9",
            Some(&cookie),
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("of 60 flags enabled"), "{}", page.body);
    assert_eq!(page.body.matches("<tr data-flag=").count(), 0);
}
