//! A Viewer sees every page, is told before trying that it cannot change things and why, and
//! every form it sends is refused with the missing permission named, changing nothing.

use axum::http::StatusCode;

use super::support::{every_page, seed, setup};

#[tokio::test]
async fn a_viewer_sees_everything_and_is_told_why_it_cannot_change_it() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.viewer().await;
    for path in every_page(&seeded) {
        let page = t.get(&path, Some(&cookie)).await;
        if path == "/admin/keys" {
            assert_eq!(
                page.status,
                StatusCode::FORBIDDEN,
                "API keys are for admins"
            );
            continue;
        }
        assert_eq!(page.status, StatusCode::OK, "{path}: {}", page.body);
    }
    let feature = "/admin/projects/shop/features/checkout";
    for (path, permission) in [
        (
            "/admin/projects/shop/new-feature".to_owned(),
            "CREATE_FEATURE",
        ),
        (format!("{feature}/settings"), "UPDATE_FEATURE"),
        (feature.to_owned(), "UPDATE_FEATURE"),
        (
            format!("{feature}/environments/production/strategies/new?type=default"),
            "CREATE_FEATURE_STRATEGY",
        ),
        (
            format!(
                "{feature}/environments/production/strategies/{}",
                seeded.strategy
            ),
            "UPDATE_FEATURE_STRATEGY",
        ),
        ("/admin/segments/new".to_owned(), "CREATE_SEGMENT"),
        (
            format!("/admin/segments/{}", seeded.segment),
            "UPDATE_SEGMENT",
        ),
        ("/admin/context/new".to_owned(), "CREATE_CONTEXT_FIELD"),
        ("/admin/context/country".to_owned(), "UPDATE_CONTEXT_FIELD"),
    ] {
        let page = t.get(&path, Some(&cookie)).await;
        assert!(
            page.body.contains("You can look at this but not change it")
                && page.body.contains(permission),
            "{path}: {}",
            page.body
        );
    }
    // The admin is told nothing of the kind.
    let admin = t.sign_in(&t.secret).await;
    let page = t.get(feature, Some(&admin)).await;
    assert!(!page.body.contains("You can look at this"));
}

/// A form a Viewer sends: the page with the form, where it posts, the form, the permission
/// its refusal names.
type Refusal<'a> = (String, String, Vec<(&'a str, &'a str)>, &'a str);

#[tokio::test]
async fn every_form_of_a_viewer_is_refused_with_the_reason_and_changes_nothing() {
    let t = setup().await;
    let seeded = seed(&t).await;
    let cookie = t.viewer().await;
    let feature = "/admin/projects/shop/features/checkout";
    let strategies = format!("{feature}/environments/production/strategies");
    let strategy = format!("{strategies}/{}", seeded.strategy);
    let segment = format!("/admin/segments/{}", seeded.segment);
    let forms: Vec<Refusal> = vec![
        (
            "/admin/projects/shop/new-feature".into(),
            "/admin/projects/shop/new-feature".into(),
            vec![("name", "viewer-flag"), ("type", "release")],
            "CREATE_FEATURE",
        ),
        (
            format!("{feature}/settings"),
            format!("{feature}/settings"),
            vec![("type", "experiment"), ("description", "x")],
            "UPDATE_FEATURE",
        ),
        (
            feature.into(),
            format!("{feature}/stale"),
            vec![("stale", "true")],
            "UPDATE_FEATURE",
        ),
        (
            format!("{feature}/archive"),
            format!("{feature}/archive"),
            vec![],
            "DELETE_FEATURE",
        ),
        (
            format!("{strategies}/new?type=flexibleRollout"),
            format!("{strategies}/new"),
            vec![
                ("kind", "flexibleRollout"),
                ("parameters.rollout", "50"),
                ("action", "save"),
            ],
            "CREATE_FEATURE_STRATEGY",
        ),
        (
            strategy.clone(),
            strategy.clone(),
            vec![
                ("kind", "flexibleRollout"),
                ("parameters.rollout", "100"),
                ("action", "save"),
            ],
            "UPDATE_FEATURE_STRATEGY",
        ),
        (
            format!("{strategy}/remove"),
            format!("{strategy}/remove"),
            vec![],
            "DELETE_FEATURE_STRATEGY",
        ),
        (
            feature.into(),
            format!("{strategy}/move"),
            vec![("direction", "down")],
            "UPDATE_FEATURE_STRATEGY",
        ),
        (
            feature.into(),
            format!("{feature}/environments/production/copy"),
            vec![("to", "development")],
            "CREATE_FEATURE_STRATEGY",
        ),
        (
            feature.into(),
            format!("{feature}/environments/production/enabled"),
            vec![("enabled", "true")],
            "UPDATE_FEATURE_ENVIRONMENT",
        ),
        (
            "/admin/archive".into(),
            "/admin/archive/old-flag/revive".into(),
            vec![],
            "UPDATE_FEATURE",
        ),
        (
            "/admin/archive/old-flag/delete".into(),
            "/admin/archive/old-flag/delete".into(),
            vec![],
            "DELETE_FEATURE",
        ),
        (
            "/admin/segments/new".into(),
            "/admin/segments/new".into(),
            vec![("name", "viewer-segment"), ("action", "save")],
            "CREATE_SEGMENT",
        ),
        (
            segment.clone(),
            segment.clone(),
            vec![("name", "renamed"), ("action", "save")],
            "UPDATE_SEGMENT",
        ),
        (
            "/admin/context/new".into(),
            "/admin/context/new".into(),
            vec![
                ("name", "viewer-field"),
                ("sortOrder", "0"),
                ("action", "save"),
            ],
            "CREATE_CONTEXT_FIELD",
        ),
        (
            "/admin/context/country".into(),
            "/admin/context/country".into(),
            vec![("description", "x"), ("sortOrder", "0"), ("action", "save")],
            "UPDATE_CONTEXT_FIELD",
        ),
    ];
    let before = t.event_count().await;
    for (page, post, form, permission) in &forms {
        let refused = t.submit(&cookie, page, post, form).await;
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{post}: {}",
            refused.body
        );
        assert!(
            refused.body.contains(permission),
            "{post}: the reason names {permission}: {}",
            refused.body
        );
        assert!(refused.body.contains("role=\"alert\""), "{post}");
    }
    assert_eq!(t.event_count().await, before, "nothing was changed");
}
