//! Segments through the page: created and edited with their constraints, refusals next to
//! their fields, where one is used.

use axum::http::{StatusCode, header};
use serde_json::json;

use super::support::{seed, setup};

#[tokio::test]
async fn a_segment_is_created_edited_and_its_uses_listed() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let page = t
        .submit(
            &cookie,
            "/admin/segments/new",
            "/admin/segments/new",
            &[
                ("name", "nordics"),
                ("description", "Norway and Sweden"),
                ("project", "shop"),
                ("constraints.count", "1"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("constraints.0.values", "NO"),
                ("constraints.0.values", "SE"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, all) = t.api_get("/api/admin/segments").await;
    let nordics = all["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "nordics")
        .cloned()
        .unwrap_or_else(|| panic!("{all}"));
    assert_eq!(nordics["project"], "shop");
    assert_eq!(nordics["constraints"][0]["values"], json!(["NO", "SE"]));
    let id = nordics["id"].as_i64().unwrap();
    assert_eq!(
        page.header(header::LOCATION),
        format!("/admin/segments/{id}")
    );

    // Edited: a constraint added through its own control, then saved.
    let path = format!("/admin/segments/{id}");
    let page = t
        .submit(
            &cookie,
            &path,
            &path,
            &[
                ("name", "nordics"),
                ("project", "shop"),
                ("constraints.count", "1"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("constraints.0.values", "NO"),
                ("constraints.add", "userId"),
                ("action", "add-constraint"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("name=\"constraints.1.valuesText\""),
        "{}",
        page.body
    );
    let page = t
        .submit(
            &cookie,
            &path,
            &path,
            &[
                ("name", "nordics"),
                ("project", "shop"),
                ("constraints.count", "2"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("constraints.0.values", "NO"),
                ("constraints.1.contextName", "userId"),
                ("constraints.1.operator", "STR_ENDS_WITH"),
                ("constraints.1.caseInsensitive", "true"),
                ("constraints.1.valuesText", "@example.com"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let (_, segment) = t.api_get(&format!("/api/admin/segments/{id}")).await;
    assert_eq!(
        segment["constraints"][1]["caseInsensitive"], true,
        "{segment}"
    );
    assert_eq!(segment["constraints"][0]["values"], json!(["NO"]));

    // Where a segment is used: the seeded rollout uses beta.
    let beta = t
        .get(
            &format!("/admin/segments/{}", seeded.segment),
            Some(&cookie),
        )
        .await;
    assert!(
        beta.body.contains(&format!(
            "/admin/projects/shop/features/checkout/environments/production/strategies/{}",
            seeded.strategy
        )),
        "{}",
        beta.body
    );
}

#[tokio::test]
async fn a_taken_name_and_an_empty_value_are_refused_next_to_their_fields() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let before = t.event_count().await;
    let page = t
        .submit(
            &cookie,
            "/admin/segments/new",
            "/admin/segments/new",
            &[
                ("name", "beta"),
                ("constraints.count", "0"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::CONFLICT, "{}", page.body);
    assert!(page.body.contains("id=\"name.error\""), "{}", page.body);
    let page = t
        .submit(
            &cookie,
            "/admin/segments/new",
            "/admin/segments/new",
            &[
                ("name", "empty"),
                ("constraints.count", "1"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"constraints.0.values.error\""),
        "{}",
        page.body
    );
    assert_eq!(t.event_count().await, before);
    let (_, all) = t.api_get("/api/admin/segments").await;
    assert_eq!(all["segments"].as_array().unwrap().len(), 1);
}
