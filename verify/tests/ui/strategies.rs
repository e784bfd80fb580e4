//! Strategies per environment through the page: add (with constraints, a segment and
//! strategy variants), the refusals shown next to their fields (a rollout of 150 %, an empty
//! constraint value), edit, move, remove, copy to another environment (all or, refused,
//! nothing), and the rollout's one-line summary.

use axum::http::{StatusCode, header};
use serde_json::{Value, json};

use super::support::{T, seed, setup};

const FEATURE: &str = "/admin/projects/shop/features/checkout";
const STRATEGIES: &str =
    "/admin/projects/shop/features/checkout/environments/production/strategies";

async fn strategies(t: &T, environment: &str) -> Vec<Value> {
    let (status, body) = t
        .api_get(&format!(
            "/api/admin/projects/shop/features/checkout/environments/{environment}"
        ))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["strategies"].as_array().cloned().unwrap_or_default()
}

/// A flexible rollout form: `rollout`, on country NO and SE, with `extra` fields.
fn rollout_form<'a>(rollout: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut form = vec![
        ("kind", "flexibleRollout"),
        ("title", "Nordics"),
        ("parameters.rollout", rollout),
        ("parameters.stickiness", "default"),
        ("parameters.groupId", "checkout"),
        ("constraints.count", "1"),
        ("constraints.0.contextName", "country"),
        ("constraints.0.operator", "IN"),
        ("constraints.0.values", "NO"),
        ("constraints.0.values", "SE"),
        ("action", "save"),
    ];
    form.extend_from_slice(extra);
    form
}

#[tokio::test]
async fn a_rollout_with_a_constraint_a_segment_and_a_variant_is_added() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let new = format!("{STRATEGIES}/new");
    // The kinds first, then the form of the kind chosen.
    let kinds = t.get(&new, Some(&cookie)).await;
    assert!(
        kinds.body.contains("?type=flexibleRollout"),
        "{}",
        kinds.body
    );
    let form = t
        .get(&format!("{new}?type=flexibleRollout"), Some(&cookie))
        .await;
    assert!(
        form.body.contains("type=\"number\""),
        "the rollout is a number input"
    );
    assert!(form.body.contains("100 % of users"), "its share is shown");
    let segment = seeded.segment.to_string();
    let extra = [
        ("segments", segment.as_str()),
        ("variants.count", "1"),
        ("variants.0.name", "blue"),
        ("variants.0.weightType", "variable"),
        ("variants.0.stickiness", "default"),
        ("variants.0.payloadType", "json"),
        ("variants.0.payloadValue", "{\"color\":\"blue\"}"),
    ];
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=flexibleRollout"),
            &new,
            &rollout_form("25", &extra),
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(
        page.header(header::LOCATION),
        format!("{FEATURE}#env-production")
    );
    let list = strategies(&t, "production").await;
    assert_eq!(list.len(), 2, "{list:?}");
    let added = &list[1];
    assert_eq!(added["title"], "Nordics");
    assert_eq!(added["parameters"]["rollout"], "25");
    assert_eq!(added["constraints"][0]["values"], json!(["NO", "SE"]));
    assert_eq!(added["segments"], json!([seeded.segment]));
    assert_eq!(
        added["variants"][0]["payload"],
        json!({"type": "json", "value": "{\"color\":\"blue\"}"})
    );
    assert_eq!(added["variants"][0]["weight"], 1000);
    // The feature's page sums it up in a line.
    let shown = t.get(FEATURE, Some(&cookie)).await;
    assert!(
        shown
            .body
            .contains("25 % of users where country is NO or SE and in segment beta"),
        "{}",
        shown.body
    );
    assert!(
        shown
            .body
            .contains("Added the strategy flexibleRollout in production")
    );
}

#[tokio::test]
async fn a_rollout_of_150_percent_is_refused_next_to_its_field() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let new = format!("{STRATEGIES}/new");
    let before = t.event_count().await;
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=flexibleRollout"),
            &new,
            &rollout_form("150", &[]),
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    let at = page
        .body
        .find("id=\"parameters.rollout.error\"")
        .expect("the message next to the rollout");
    assert!(page.body[at..].contains("0–100"), "{}", &page.body[at..]);
    assert!(
        page.body
            .contains("aria-describedby=\"parameters.rollout.share parameters.rollout.error\""),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("value=\"150\""),
        "what was typed is kept"
    );
    assert!(page.body.contains("Nothing was changed"));
    assert_eq!(strategies(&t, "production").await.len(), 1);
    assert_eq!(t.event_count().await, before);
}

#[tokio::test]
async fn an_empty_constraint_value_is_refused_on_its_row() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let new = format!("{STRATEGIES}/new");
    let before = t.event_count().await;
    // Row 0 is removed, row 1 has no value: the facade's constraints[0] is row 1.
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=default"),
            &new,
            &[
                ("kind", "default"),
                ("constraints.count", "2"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("constraints.0.remove", "true"),
                ("constraints.1.contextName", "userId"),
                ("constraints.1.operator", "IN"),
                ("constraints.1.valuesText", " , \n"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"constraints.1.values.error\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("aria-describedby=\"constraints.1.values.error\"")
    );
    assert!(!page.body.contains("id=\"constraints.0.values.error\""));
    assert_eq!(t.event_count().await, before);
    // A single-value operator with a value that is not a number: next to its one field.
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=default"),
            &new,
            &[
                ("kind", "default"),
                ("constraints.count", "1"),
                ("constraints.0.contextName", "userId"),
                ("constraints.0.operator", "NUM_GT"),
                ("constraints.0.value", "many"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("id=\"constraints.0.value.error\""),
        "{}",
        page.body
    );
    assert_eq!(strategies(&t, "production").await.len(), 1);
}

#[tokio::test]
async fn adding_a_constraint_and_changing_its_operator_only_redraw_the_form() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let new = format!("{STRATEGIES}/new");
    let before = t.event_count().await;
    // "Add a constraint" on country: its legal values as checkboxes.
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=default"),
            &new,
            &[
                ("kind", "default"),
                ("constraints.count", "0"),
                ("constraints.add", "country"),
                ("action", "add-constraint"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    for (j, value) in ["NO", "SE", "DK"].iter().enumerate() {
        assert!(
            page.body.contains(&format!(
                "id=\"constraints.0.values.{j}\" name=\"constraints.0.values\" value=\"{value}\""
            )),
            "{}",
            page.body
        );
    }
    // A field without legal values: a text area; a single-value operator: one value field.
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=default"),
            &new,
            &[
                ("kind", "default"),
                ("constraints.count", "2"),
                ("constraints.0.contextName", "userId"),
                ("constraints.0.operator", "IN"),
                ("constraints.1.contextName", "userId"),
                ("constraints.1.operator", "SEMVER_GT"),
                ("action", "refresh"),
            ],
        )
        .await;
    assert!(
        page.body.contains("name=\"constraints.0.valuesText\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("name=\"constraints.1.value\""));
    for op in [
        "IN",
        "NOT_IN",
        "STR_CONTAINS",
        "STR_STARTS_WITH",
        "STR_ENDS_WITH",
        "NUM_EQ",
        "NUM_GT",
        "NUM_GTE",
        "NUM_LT",
        "NUM_LTE",
        "DATE_AFTER",
        "DATE_BEFORE",
        "SEMVER_EQ",
        "SEMVER_GT",
        "SEMVER_LT",
    ] {
        assert!(
            page.body.contains(&format!("<option value=\"{op}\"")),
            "{op}"
        );
    }
    assert!(page.body.contains("Case-insensitive") && page.body.contains("Inverted"));
    assert_eq!(t.event_count().await, before, "nothing was saved");
}

#[tokio::test]
async fn a_strategy_is_edited_moved_copied_and_removed() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let edit = format!("{STRATEGIES}/{}", seeded.strategy);
    // Raise to 100 %, disabled, the segment kept.
    let segment = seeded.segment.to_string();
    let page = t
        .submit(
            &cookie,
            &edit,
            &edit,
            &rollout_form("100", &[("disabled", "true"), ("segments", &segment)]),
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let list = strategies(&t, "production").await;
    assert_eq!(list[0]["parameters"]["rollout"], "100");
    assert_eq!(list[0]["disabled"], true);
    assert_eq!(list[0]["id"], seeded.strategy.as_str());

    // A second strategy (the users alice and bob), then moved up.
    let new = format!("{STRATEGIES}/new");
    let page = t
        .submit(
            &cookie,
            &format!("{new}?type=userWithId"),
            &new,
            &[
                ("kind", "userWithId"),
                ("parameters.userIds", "alice\nbob"),
                ("list.userIds", "1"),
                ("constraints.count", "0"),
                ("action", "save"),
            ],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let list = strategies(&t, "production").await;
    assert_eq!(list[1]["parameters"]["userIds"], "alice,bob");
    let second = list[1]["id"].as_str().unwrap().to_owned();
    let page = t
        .submit(
            &cookie,
            FEATURE,
            &format!("{STRATEGIES}/{second}/move"),
            &[("direction", "up")],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let order: Vec<Value> = strategies(&t, "production")
        .await
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(order, [json!(second), json!(seeded.strategy)]);

    // Copied to development: the same strategies, new ids.
    let page = t
        .submit(
            &cookie,
            FEATURE,
            &format!("{FEATURE}/environments/production/copy"),
            &[("to", "development")],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let copied = strategies(&t, "development").await;
    assert_eq!(copied.len(), 2);
    assert_eq!(copied[0]["name"], "userWithId");
    assert_eq!(copied[1]["segments"], json!([seeded.segment]));
    assert_ne!(copied[0]["id"], json!(second));
    assert_eq!(
        page.header(header::LOCATION),
        format!("{FEATURE}#env-development")
    );
    let shown = t.get(FEATURE, Some(&cookie)).await;
    assert!(
        shown
            .body
            .contains("Copied 2 strategies of checkout from production to development."),
        "{}",
        shown.body
    );

    // Removed after its confirmation step.
    let confirm = t
        .get(&format!("{STRATEGIES}/{second}/remove"), Some(&cookie))
        .await;
    assert!(
        confirm.body.contains("the users alice, bob"),
        "{}",
        confirm.body
    );
    let page = t
        .post(
            &format!("{STRATEGIES}/{second}/remove"),
            Some(&cookie),
            &[("csrf", &confirm.csrf())],
        )
        .await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let list = strategies(&t, "production").await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], seeded.strategy.as_str());
}

#[tokio::test]
async fn the_environments_summaries_say_who_gets_the_feature() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let page = t.get(FEATURE, Some(&cookie)).await;
    assert!(
        page.body.contains(">Off.<"),
        "production is off: {}",
        page.body
    );
    t.admin
        .set_feature_enabled(&t.caller, "shop", "checkout", "production", true)
        .await
        .unwrap();
    let page = t.get(FEATURE, Some(&cookie)).await;
    assert!(
        page.body
            .contains("On: 25 % of users where country is NO or SE and in segment beta."),
        "{}",
        page.body
    );
}

#[tokio::test]
async fn a_copy_over_the_limit_is_refused_whole_with_the_reason_and_changes_nothing() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    // production holds 2 strategies, development 29: 31 would be over the limit of 30.
    t.admin
        .add_strategy_json(
            &t.caller,
            "shop",
            "checkout",
            "production",
            &json!({"name": "default"}),
        )
        .await
        .unwrap();
    for n in 0..29 {
        t.admin
            .add_strategy_json(
                &t.caller,
                "shop",
                "checkout",
                "development",
                &json!({"name": "flexibleRollout", "parameters": {"rollout": n.to_string()}}),
            )
            .await
            .unwrap();
    }
    let target = strategies(&t, "development").await;
    let revision = t.admin.store().revision().await.unwrap();
    let events = t.event_count().await;

    let page = t
        .submit(
            &cookie,
            FEATURE,
            &format!("{FEATURE}/environments/production/copy"),
            &[("to", "development")],
        )
        .await;

    assert_eq!(page.status, StatusCode::BAD_REQUEST, "{}", page.body);
    assert!(
        page.body.contains("role=\"alert\""),
        "the reason is announced: {}",
        page.body
    );
    assert!(
        page.body.contains("Nothing was copied")
            && page.body.contains("29 strategies")
            && page.body.contains("2 more")
            && page.body.contains("31"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("Copy stopped"), "{}", page.body);
    assert_eq!(strategies(&t, "development").await, target);
    assert_eq!(t.admin.store().revision().await.unwrap(), revision);
    assert_eq!(t.event_count().await, events);
}

#[tokio::test]
async fn a_copy_of_an_archived_feature_or_onto_itself_is_refused() {
    let t = setup().await;
    seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let revision = t.admin.store().revision().await.unwrap();
    let token = t.get(FEATURE, Some(&cookie)).await.csrf();
    for (path, to, reason) in [
        (
            "/admin/projects/shop/features/old-flag/environments/production/copy",
            "development",
            "archived features cannot be changed",
        ),
        (
            "/admin/projects/shop/features/checkout/environments/production/copy",
            "production",
            "another environment",
        ),
        (
            "/admin/projects/shop/features/checkout/environments/production/copy",
            "",
            "choose the environment",
        ),
    ] {
        let page = t
            .post(path, Some(&cookie), &[("csrf", &token), ("to", to)])
            .await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{to}: {}", page.body);
        assert!(
            page.body.contains("role=\"alert\"") && page.body.contains(reason),
            "{to}: {}",
            page.body
        );
    }
    assert_eq!(t.admin.store().revision().await.unwrap(), revision);
}
