//! Context fields through the page: created with legal values, edited (stickiness, legal
//! values), refusals next to their fields, built-ins refused.

use axum::http::StatusCode;
use serde_json::json;

use super::support::{seed, setup};

#[tokio::test]
async fn a_context_field_is_created_with_legal_values_and_edited() {
    let t = setup().await;
    let cookie = t.sign_in(&t.secret).await;
    let new = "/admin/context/new";
    // "Add a legal value" only redraws the form, with one more row.
    let page = t
        .submit(
            &cookie,
            new,
            new,
            &[
                ("name", "plan"),
                ("legalValues.count", "2"),
                ("legalValues.0.value", "free"),
                ("legalValues.1.value", ""),
                ("action", "add-value"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("id=\"legalValues.2.value\""),
        "{}",
        page.body
    );
    let page = t
        .submit(
            &cookie,
            new,
            new,
            &[
                ("name", "plan"),
                ("description", "The customer's plan"),
                ("sortOrder", "3"),
                ("stickiness", "true"),
                ("legalValues.count", "3"),
                ("legalValues.0.value", "free"),
                ("legalValues.1.value", "pro"),
                ("legalValues.1.description", "Paying"),
                ("legalValues.2.value", ""),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (status, field) = t.api_get("/api/admin/context/plan").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(field["stickiness"], true);
    assert_eq!(field["sortOrder"], 3);
    assert_eq!(
        field["legalValues"],
        json!([{"value": "free"}, {"value": "pro", "description": "Paying"}])
    );
    // Edited: stickiness off, "free" removed, "team" added.
    let path = "/admin/context/plan";
    let page = t
        .submit(
            &cookie,
            path,
            path,
            &[
                ("description", "The customer's plan"),
                ("sortOrder", "3"),
                ("legalValues.count", "3"),
                ("legalValues.0.value", "free"),
                ("legalValues.0.remove", "true"),
                ("legalValues.1.value", "pro"),
                ("legalValues.2.value", "team"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, field) = t.api_get("/api/admin/context/plan").await;
    assert_eq!(field["stickiness"], false);
    assert_eq!(
        field["legalValues"],
        json!([{"value": "pro"}, {"value": "team"}])
    );
    // A sticky field is offered as stickiness on the strategy form.
    t.submit(
        &cookie,
        path,
        path,
        &[
            ("sortOrder", "3"),
            ("stickiness", "true"),
            ("legalValues.count", "0"),
            ("action", "save"),
        ],
    )
    .await;
    let form = t
        .get(
            "/admin/projects/shop/features/checkout/environments/production/strategies/new?type=flexibleRollout",
            Some(&cookie),
        )
        .await;
    assert!(
        form.body.contains("<option value=\"plan\""),
        "{}",
        form.body
    );
}

#[tokio::test]
async fn a_repeated_legal_value_a_taken_name_and_a_built_in_are_refused() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let new = "/admin/context/new";
    let before = t.event_count().await;
    let page = t
        .submit(
            &cookie,
            new,
            new,
            &[
                ("name", "tier"),
                ("sortOrder", "0"),
                ("legalValues.count", "3"),
                ("legalValues.0.value", "gold"),
                ("legalValues.1.remove", "true"),
                ("legalValues.1.value", "x"),
                ("legalValues.2.value", "gold"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    // The facade's legalValues[1] is the form's row 2 (row 1 was removed).
    assert!(
        page.body.contains("id=\"legalValues.2.value.error\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("listed twice"));
    let page = t
        .submit(
            &cookie,
            new,
            new,
            &[
                ("name", "country"),
                ("sortOrder", "0"),
                ("legalValues.count", "0"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::CONFLICT, "{}", page.body);
    assert!(page.body.contains("id=\"name.error\""), "{}", page.body);
    let page = t
        .submit(
            &cookie,
            new,
            new,
            &[
                ("name", "size"),
                ("sortOrder", "big"),
                ("legalValues.count", "0"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(
        page.body.contains("id=\"sortOrder.error\""),
        "{}",
        page.body
    );
    let page = t
        .submit(
            &cookie,
            "/admin/context/userId",
            "/admin/context/userId",
            &[
                ("description", "mine"),
                ("sortOrder", "1"),
                ("legalValues.count", "0"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(page.body.contains("built-in"), "{}", page.body);
    assert_eq!(t.event_count().await, before, "nothing was changed");
    let (status, _) = t.api_get("/api/admin/context/tier").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
