//! The playground a page at a time (`ToggleAdmin::playground_page`) answers what the whole
//! playground answers: over flags of three projects (strategies with constraints, segments
//! and variants, disabled strategies, flags off in the environment, dependencies satisfied
//! and not), for several name filters, pages and project choices, its page is the slice of
//! the whole answer filtered by name, and its counts are that filtered answer's.

use serde_json::{Value, json};
use toggle_admin::model::{
    ContextField, Environment, NewFeature, NewSegment, ParentDependency, PlaygroundFeature,
    PlaygroundPageQuery, PlaygroundProjects, PlaygroundRequest, Project,
};
use toggle_admin::{Caller, MemoryStore, ToggleAdmin};

/// A store of 3 projects, 33 flags in all, and the admin caller.
async fn store() -> (ToggleAdmin, Caller) {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("ops").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for name in ["production", "development"] {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: name.into(),
                    environment_type: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    admin
        .create_context_field(
            &caller,
            &ContextField {
                name: "country".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let segment = admin
        .create_segment(
            &caller,
            &NewSegment {
                name: "early".into(),
                constraints: serde_json::from_value(json!([
                    {"contextName": "userId", "operator": "STR_STARTS_WITH", "values": ["user-"]}
                ]))
                .unwrap(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for project in ["shop", "books", "tools"] {
        admin
            .create_project(
                &caller,
                &Project {
                    id: project.into(),
                    name: project.into(),
                    environments: vec!["production".into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        for i in 0..11 {
            // Names that a filter cuts differently: "Pay" in some, upper case in some.
            let name = match i % 3 {
                0 => format!("{project}-Pay-{i:02}"),
                1 => format!("{project}-search-{i:02}"),
                _ => format!("{project}-PAYOUT-{i:02}"),
            };
            admin
                .create_feature(
                    &caller,
                    project,
                    &NewFeature {
                        name: name.clone(),
                        ..Default::default()
                    },
                )
                .await
                .unwrap();
            let strategy = match i % 4 {
                0 => json!({
                    "name": "flexibleRollout",
                    "parameters": {"rollout": "100", "stickiness": "userId", "groupId": name},
                    "constraints": [{"contextName": "country", "operator": "IN", "values": ["NO", "SE"]}],
                    "segments": [segment.id],
                    "variants": [{"name": "blue", "weight": 1000, "weightType": "variable",
                                  "stickiness": "default",
                                  "payload": {"type": "string", "value": "b"}}]
                }),
                1 => json!({
                    "name": "flexibleRollout",
                    "parameters": {"rollout": "50", "stickiness": "userId", "groupId": name}
                }),
                2 => json!({
                    "name": "default",
                    "disabled": true,
                    "constraints": [{"contextName": "country", "operator": "IN", "values": ["DK"]}]
                }),
                _ => json!({
                    "name": "userWithId",
                    "parameters": {"userIds": "user-1,user-7"},
                    "segments": [segment.id]
                }),
            };
            admin
                .add_strategy_json(&caller, project, &name, "production", &strategy)
                .await
                .unwrap();
            if i % 5 != 4 {
                admin
                    .set_feature_enabled(&caller, project, &name, "production", true)
                    .await
                    .unwrap();
            }
            // The last few depend on the first: on it being on, or on its being off.
            if i >= 8 {
                let parent = format!("{project}-Pay-00");
                admin
                    .add_feature_dependency(
                        &caller,
                        project,
                        &name,
                        &ParentDependency {
                            feature: parent,
                            enabled: Some(i != 9),
                            variants: None,
                        },
                    )
                    .await
                    .unwrap();
            }
        }
    }
    (admin, caller)
}

fn request(projects: PlaygroundProjects, user: &str, country: &str) -> PlaygroundRequest {
    let context = json!({"appName": "web", "userId": user, "properties": {"country": country}});
    let Value::Object(context) = context else {
        unreachable!()
    };
    PlaygroundRequest {
        environment: "production".into(),
        projects: Some(projects),
        context,
    }
}

/// The name filter of `ToggleAdmin::playground_page`, written out again for the comparison.
fn matches(search: Option<&str>, feature: &PlaygroundFeature) -> bool {
    let needle = search.unwrap_or_default().trim().to_lowercase();
    needle.is_empty() || feature.name.to_lowercase().contains(&needle)
}

#[tokio::test]
async fn a_page_is_the_slice_of_the_whole_playground_filtered_by_name() {
    let (admin, caller) = store().await;
    let searches = [
        None,
        Some(""),
        Some("  pay "),
        Some("PAYOUT"),
        Some("search-1"),
        Some("nothing"),
    ];
    let windows = [
        (0, 4),
        (4, 4),
        (8, 50),
        (0, 10_000),
        (30, 5),
        (1000, 5),
        (3, 0),
    ];
    let requests = [
        request(PlaygroundProjects::All, "user-1", "NO"),
        request(
            PlaygroundProjects::Only(vec!["shop".into(), "books".into()]),
            "user-7",
            "SE",
        ),
        request(
            PlaygroundProjects::Only(vec!["tools".into()]),
            "other-3",
            "DK",
        ),
    ];
    let (mut compared, mut unsatisfied, mut enabled, mut explained) = (0, 0, 0, 0);
    for request in &requests {
        let whole = admin.playground(&caller, request).await.unwrap().features;
        assert!(whole.len() >= 11, "{}", whole.len());
        for search in searches {
            let filtered: Vec<&PlaygroundFeature> =
                whole.iter().filter(|f| matches(search, f)).collect();
            for (offset, limit) in windows {
                let query = PlaygroundPageQuery {
                    search: search.map(str::to_owned),
                    offset,
                    limit,
                };
                let page = admin
                    .playground_page(&caller, request, &query)
                    .await
                    .unwrap();
                let at = format!("{:?} {search:?} {offset}+{limit}", request.projects);
                assert_eq!(page.total, filtered.len(), "{at}");
                assert_eq!(
                    page.enabled,
                    filtered.iter().filter(|f| f.is_enabled).count(),
                    "{at}"
                );
                let expected: Vec<&PlaygroundFeature> =
                    filtered.iter().skip(offset).take(limit).copied().collect();
                assert_eq!(page.features.iter().collect::<Vec<_>>(), expected, "{at}");
                compared += page.features.len();
                unsatisfied += page
                    .features
                    .iter()
                    .filter(|f| f.has_unsatisfied_dependency)
                    .count();
                enabled += page.features.iter().filter(|f| f.is_enabled).count();
                explained += page
                    .features
                    .iter()
                    .filter(|f| f.strategies.data.iter().any(|s| !s.segments.is_empty()))
                    .count();
            }
        }
    }
    // The comparison saw what it is about.
    assert!(compared > 300, "{compared}");
    assert!(unsatisfied > 0 && enabled > 0 && explained > 0);
}

#[tokio::test]
async fn a_page_is_refused_as_the_whole_playground_is() {
    let (admin, caller) = store().await;
    let query = PlaygroundPageQuery {
        search: None,
        offset: 0,
        limit: 10,
    };
    let mut unknown = request(PlaygroundProjects::Only(vec!["nowhere".into()]), "u", "NO");
    let error = admin
        .playground_page(&caller, &unknown, &query)
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400);
    assert!(format!("{error:?}").contains("/projects/0"), "{error:?}");
    unknown.projects = None;
    unknown.context.remove("appName");
    let error = admin
        .playground_page(&caller, &unknown, &query)
        .await
        .unwrap_err();
    assert!(
        format!("{error:?}").contains("/context/appName"),
        "{error:?}"
    );
    // A limit past every flag answers them all.
    let all = request(PlaygroundProjects::All, "user-1", "NO");
    let page = admin
        .playground_page(
            &caller,
            &all,
            &PlaygroundPageQuery {
                limit: usize::MAX,
                ..query
            },
        )
        .await
        .unwrap();
    assert_eq!(
        page.features.len(),
        page.total.min(toggle_admin::model::MAX_PLAYGROUND_PAGE)
    );
}
