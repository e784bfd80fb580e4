//! Every page, signed in: it loads, carries the strict CSP and its companions, has no inline
//! script or style and no link or form to another origin, every control has a label, and it weighs at
//! most 100 KB, also with a full environment; every form refuses a missing CSRF token and
//! changes nothing.

use axum::http::{StatusCode, header};
use serde_json::json;
use toggle_admin::ui::CONTENT_SECURITY_POLICY;

use super::support::{Page, every_page, seed, setup};

/// The most a page may weigh.
const PAGE_LIMIT: usize = 100 * 1024;

/// The ids of the page's labelled controls and of its controls, roughly: every `<input>`,
/// `<select>` and `<textarea>` that is not hidden has an id a `<label for>` names, or an
/// `aria-label`.
fn unlabelled(page: &Page) -> Vec<String> {
    let body = &page.body;
    let mut missing = Vec::new();
    for tag in ["<input", "<select", "<textarea"] {
        for (at, _) in body.match_indices(tag) {
            let end = body[at..].find('>').map_or(body.len(), |e| at + e);
            let element = &body[at..end];
            if element.contains("type=\"hidden\"") || element.contains("aria-label=") {
                continue;
            }
            let id = element
                .split("id=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_default();
            if id.is_empty() || !body.contains(&format!("for=\"{id}\"")) {
                missing.push(element.to_owned());
            }
        }
    }
    missing
}

fn check(path: &str, page: &Page) {
    assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
    assert_eq!(
        page.header(header::CONTENT_SECURITY_POLICY),
        CONTENT_SECURITY_POLICY,
        "{path}"
    );
    assert_eq!(
        page.header(header::X_CONTENT_TYPE_OPTIONS),
        "nosniff",
        "{path}"
    );
    assert_eq!(page.header(header::CACHE_CONTROL), "no-store", "{path}");
    assert!(!page.body.contains("<script>"), "{path}: an inline script");
    assert!(!page.body.contains("style="), "{path}: an inline style");
    // No attribute points elsewhere (text, such as an event's data, may hold a URL).
    for attribute in ["href=\"", "src=\"", "action=\"", "formaction=\""] {
        for scheme in ["http:", "https:", "//"] {
            assert!(
                !page.body.contains(&format!("{attribute}{scheme}")),
                "{path}: {attribute}{scheme}…"
            );
        }
    }
    assert!(
        page.body.len() <= PAGE_LIMIT,
        "{path}: {} bytes",
        page.body.len()
    );
    let missing = unlabelled(page);
    assert!(
        missing.is_empty(),
        "{path}: controls without a label: {missing:#?}"
    );
}

#[tokio::test]
async fn every_page_loads_safely_labelled_and_light() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    for path in every_page(&seeded) {
        let page = t.get(&path, Some(&cookie)).await;
        check(&path, &page);
    }
}

#[tokio::test]
async fn a_full_environment_stays_under_100_kb() {
    let t = setup().await;
    let seeded = seed(&t).await;
    // 29 more strategies (30 is the most an environment holds), each with constraints and
    // strategy variants, and 50 segments.
    for i in 0..50 {
        t.api_send(
            axum::http::Method::POST,
            "/api/admin/segments",
            &json!({"name": format!("segment-{i}"), "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["a", "b", "c"]}
            ]}),
        )
        .await;
    }
    for i in 0..29 {
        let (status, body) = t
            .api_send(
                axum::http::Method::POST,
                "/api/admin/projects/shop/features/checkout/environments/production/strategies",
                &json!({
                    "name": "flexibleRollout",
                    "title": format!("Rollout number {i}"),
                    "parameters": {"rollout": "50", "stickiness": "default", "groupId": "checkout"},
                    "constraints": [
                        {"contextName": "country", "operator": "IN", "values": ["NO", "SE"]},
                        {"contextName": "userId", "operator": "STR_STARTS_WITH", "values": ["user-1", "user-2"]}
                    ],
                    "variants": [
                        {"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"},
                        {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default"}
                    ]
                }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let cookie = t.sign_in(&t.secret).await;
    for path in every_page(&seeded) {
        let page = t.get(&path, Some(&cookie)).await;
        check(&path, &page);
    }
}

#[tokio::test]
async fn every_form_refuses_a_missing_token_and_changes_nothing() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.sign_in(&t.secret).await;
    let feature = "/admin/projects/shop/features/checkout";
    let strategies = format!("{feature}/environments/production/strategies");
    let strategy = format!("{strategies}/{}", seeded.strategy);
    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            "/admin/projects/shop/new-feature".to_owned(),
            vec![("name", "sneaky")],
        ),
        (
            format!("{feature}/settings"),
            vec![("type", "experiment"), ("description", "x")],
        ),
        (format!("{feature}/stale"), vec![("stale", "true")]),
        (format!("{feature}/archive"), vec![]),
        (
            format!("{strategies}/new"),
            vec![("kind", "default"), ("action", "save")],
        ),
        (
            strategy.clone(),
            vec![
                ("kind", "flexibleRollout"),
                ("parameters.rollout", "100"),
                ("action", "save"),
            ],
        ),
        (format!("{strategy}/remove"), vec![]),
        (format!("{strategy}/move"), vec![("direction", "down")]),
        (
            format!("{feature}/environments/production/copy"),
            vec![("to", "development")],
        ),
        ("/admin/archive/old-flag/revive".to_owned(), vec![]),
        ("/admin/archive/old-flag/delete".to_owned(), vec![]),
        (
            "/admin/segments/new".to_owned(),
            vec![("name", "sneaky"), ("action", "save")],
        ),
        (
            format!("/admin/segments/{}", seeded.segment),
            vec![("name", "renamed"), ("action", "save")],
        ),
        (
            "/admin/context/new".to_owned(),
            vec![("name", "sneaky"), ("action", "save")],
        ),
        (
            "/admin/context/country".to_owned(),
            vec![("description", "x"), ("action", "save")],
        ),
    ];
    let before = t.event_count().await;
    for (path, form) in &forms {
        for token in [None, Some("0000")] {
            let mut pairs = form.clone();
            if let Some(token) = token {
                pairs.push(("csrf", token));
            }
            let page = t.post(path, Some(&cookie), &pairs).await;
            assert_eq!(page.status, StatusCode::FORBIDDEN, "{path}: {}", page.body);
            assert!(page.body.contains("security token"), "{path}");
        }
    }
    assert_eq!(
        t.event_count().await,
        before,
        "a refused form changed nothing"
    );
}
