//! The environment's variants form, and escaping.

use axum::http::StatusCode;
use serde_json::json;

use super::support::setup;

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
