//! Copying a feature's strategies to another environment: all in one commit (new ids, the
//! source's order after the target's strategies, one event each) or, on any refusal (the
//! limit of 30, a permission, an archived feature, a bad target), nothing at all.

use serde_json::{Value, json};
use toggle_admin::model::{FeatureStrategy, NewSegment};
use toggle_admin::{Caller, ToggleAdmin};

use test_support::access::user_with_key;
use test_support::facade::{all_events, setup};

/// Add the strategy `raw` to `f` of `p` in `environment`.
async fn add(
    admin: &ToggleAdmin,
    caller: &Caller,
    environment: &str,
    raw: Value,
) -> FeatureStrategy {
    admin
        .add_strategy_json(caller, "p", "f", environment, &raw)
        .await
        .unwrap()
}

async fn list(admin: &ToggleAdmin, caller: &Caller, environment: &str) -> Vec<FeatureStrategy> {
    admin
        .strategies(caller, "p", "f", environment)
        .await
        .unwrap()
}

/// `rollout` % of users.
fn rollout(rollout: u32) -> Value {
    json!({"name": "flexibleRollout", "parameters": {"rollout": rollout.to_string()}})
}

/// What nothing may change: the store's revision, the event log's length and `f`'s
/// strategies in `development`.
async fn state(admin: &ToggleAdmin, caller: &Caller) -> (u64, usize, Vec<FeatureStrategy>) {
    (
        admin.store().revision().await.unwrap().0,
        all_events(admin, caller).await.len(),
        list(admin, caller, "development").await,
    )
}

#[tokio::test]
async fn a_copy_gives_new_ids_keeps_the_order_after_the_target_and_writes_one_event_each() {
    let (admin, caller) = setup().await;
    let segment = admin
        .create_segment(
            &caller,
            &NewSegment {
                name: "beta".into(),
                project: Some("p".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // Added in this order, then the user list moved first: the copy follows the list's order.
    let nordics = add(
        &admin,
        &caller,
        "production",
        json!({
            "name": "flexibleRollout",
            "title": "Nordics",
            "parameters": {"rollout": "25", "stickiness": "default", "groupId": "f"},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["a", "b"]}],
            "segments": [segment.id],
            "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]
        }),
    )
    .await;
    let users = add(
        &admin,
        &caller,
        "production",
        json!({"name": "userWithId", "disabled": true, "parameters": {"userIds": "alice"}, "sortOrder": -5}),
    )
    .await;
    let source = list(&admin, &caller, "production").await;
    assert_eq!(source, [users.clone(), nordics.clone()]);
    let existing = add(
        &admin,
        &caller,
        "development",
        json!({"name": "default", "sortOrder": 7}),
    )
    .await;
    let events_before = all_events(&admin, &caller).await.len();

    let copies = admin
        .copy_strategies(&caller, "p", "f", "production", "development")
        .await
        .unwrap();

    assert_eq!(copies.len(), 2);
    for (copy, original) in copies.iter().zip(&source) {
        assert!(copy.id.is_some());
        assert_ne!(copy.id, original.id, "a copy has an id of its own");
        let same = FeatureStrategy {
            id: original.id.clone(),
            sort_order: original.sort_order,
            ..copy.clone()
        };
        assert_eq!(
            &same, original,
            "all but id and sort order as in the source"
        );
    }
    assert_ne!(copies[0].id, copies[1].id);
    assert_eq!(
        copies.iter().map(|c| c.sort_order).collect::<Vec<_>>(),
        [Some(8), Some(9)],
        "after the target's highest, in the source's order"
    );
    let target = list(&admin, &caller, "development").await;
    assert_eq!(target, [existing, copies[0].clone(), copies[1].clone()]);
    assert_eq!(
        list(&admin, &caller, "production").await,
        source,
        "the source is left as it was"
    );
    let events = all_events(&admin, &caller).await.split_off(events_before);
    assert_eq!(events.len(), 2, "{events:#?}");
    for (event, copy) in events.iter().zip(&copies) {
        let event = &event.event;
        assert_eq!(event.event_type, "feature-strategy-add");
        assert_eq!(
            (
                event.project.as_deref(),
                event.feature_name.as_deref(),
                event.environment.as_deref()
            ),
            (Some("p"), Some("f"), Some("development"))
        );
        assert!(event.pre_data.is_none());
        let data = event.data.as_ref().unwrap().to_value().unwrap();
        assert_eq!(data, serde_json::to_value(copy).unwrap());
    }
    assert_eq!(events[0].revision, events[1].revision, "one commit");
}

#[tokio::test]
async fn a_copy_over_the_limit_is_refused_whole_and_names_the_numbers() {
    let (admin, caller) = setup().await;
    add(&admin, &caller, "production", rollout(10)).await;
    add(&admin, &caller, "production", rollout(20)).await;
    for n in 0..29 {
        add(&admin, &caller, "development", rollout(n)).await;
    }
    let before = state(&admin, &caller).await;
    assert_eq!(before.2.len(), 29);

    let error = admin
        .copy_strategies(&caller, "p", "f", "production", "development")
        .await
        .unwrap_err();

    assert_eq!(error.status(), 400, "{error}");
    let message = error.to_string();
    for number in ["29", "2 more", "31", "30"] {
        assert!(message.contains(number), "{number} in {message}");
    }
    assert_eq!(error.details()[0].path.as_deref(), Some("to"));
    assert_eq!(
        state(&admin, &caller).await,
        before,
        "no strategy, no event, no commit"
    );

    // One fewer there, and the copy fits exactly.
    let last = before.2[28].id.clone().unwrap();
    admin
        .remove_strategy(&caller, "p", "f", "development", &last)
        .await
        .unwrap();
    let copies = admin
        .copy_strategies(&caller, "p", "f", "production", "development")
        .await
        .unwrap();
    assert_eq!(copies.len(), 2);
    assert_eq!(list(&admin, &caller, "development").await.len(), 30);
}

#[tokio::test]
async fn a_viewer_is_refused_and_changes_nothing() {
    let (admin, caller) = setup().await;
    add(&admin, &caller, "production", rollout(10)).await;
    let (_, viewer) = user_with_key(&admin, &caller, "viewer", 3).await;
    let before = state(&admin, &caller).await;
    // The viewer may read the source, not add to the target.
    assert_eq!(
        admin
            .strategies(&viewer, "p", "f", "production")
            .await
            .unwrap()
            .len(),
        1
    );
    let error = admin
        .copy_strategies(&viewer, "p", "f", "production", "development")
        .await
        .unwrap_err();
    assert_eq!(error.status(), 403, "{error}");
    assert!(
        error.to_string().contains("CREATE_FEATURE_STRATEGY"),
        "{error}"
    );
    assert_eq!(state(&admin, &caller).await, before);
}

#[tokio::test]
async fn an_archived_feature_is_refused() {
    let (admin, caller) = setup().await;
    add(&admin, &caller, "production", rollout(10)).await;
    admin.archive_feature(&caller, "p", "f").await.unwrap();
    let before = state(&admin, &caller).await;
    let error = admin
        .copy_strategies(&caller, "p", "f", "production", "development")
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400, "{error}");
    assert!(error.to_string().contains("archived"), "{error}");
    assert_eq!(error.details()[0].path.as_deref(), Some("featureName"));
    assert_eq!(state(&admin, &caller).await, before);
}

#[tokio::test]
async fn bad_targets_are_refused_and_an_empty_source_writes_nothing() {
    let (admin, caller) = setup().await;
    add(&admin, &caller, "production", rollout(10)).await;
    let before = state(&admin, &caller).await;
    let refusals = [
        // Onto itself: a 400 naming the field.
        ("p", "f", "production", "production", 400),
        // An environment that is not the project's, one that does not exist, either side.
        ("p", "f", "production", "staging", 404),
        ("p", "f", "production", "nowhere", 404),
        ("p", "f", "nowhere", "development", 404),
        // A feature of another project, a project that does not exist.
        ("p", "g", "production", "development", 404),
        ("nope", "f", "production", "development", 404),
    ];
    for (project, feature, from, to, status) in refusals {
        let error = admin
            .copy_strategies(&caller, project, feature, from, to)
            .await
            .unwrap_err();
        assert_eq!(
            error.status(),
            status,
            "{project}/{feature} {from}→{to}: {error}"
        );
        if status == 400 {
            assert_eq!(error.details()[0].path.as_deref(), Some("to"));
        }
    }
    assert_eq!(state(&admin, &caller).await, before);

    // development has nothing: copying it back copies nothing and commits nothing.
    let copies = admin
        .copy_strategies(&caller, "p", "f", "development", "production")
        .await
        .unwrap();
    assert!(copies.is_empty());
    assert_eq!(state(&admin, &caller).await, before);
    assert_eq!(list(&admin, &caller, "production").await.len(), 1);
}
