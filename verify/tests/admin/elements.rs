//! The elements an import touches, one at a time: strategy definitions, segments, context
//! fields, tag types and tags, dependencies, strategies and enabled state.

use serde_json::json;
use test_support::import::*;
use toggle_admin::model::{
    ContextField, FeatureStrategy, NewSegment, ParentDependency, StrategyDefinition, Tag, TagType,
};

fn is_send<T: Send>(_: &T) {}

#[tokio::test]
async fn catalogue() {
    let (admin, caller) = setup().await;
    let names: Vec<_> = admin
        .strategy_definitions(&caller)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert!(names.contains(&"flexibleRollout".to_owned()) && names.len() == 8);
    let custom = StrategyDefinition {
        name: "custom".into(),
        ..Default::default()
    };
    assert!(
        admin
            .create_strategy_definition(&caller, &custom)
            .await
            .unwrap()
            .editable
    );
    assert_eq!(
        admin
            .create_strategy_definition(&caller, &custom)
            .await
            .unwrap_err()
            .status(),
        409
    );
    let default = StrategyDefinition {
        name: "default".into(),
        ..Default::default()
    };
    assert_eq!(
        admin
            .create_strategy_definition(&caller, &default)
            .await
            .unwrap_err()
            .status(),
        409
    );
    assert_eq!(
        admin
            .strategy_definition(&caller, "custom")
            .await
            .unwrap()
            .name,
        "custom"
    );

    let fields = admin.context_fields(&caller).await.unwrap();
    assert_eq!(fields.len(), 6);
    let field = ContextField {
        name: "region".into(),
        ..Default::default()
    };
    admin.create_context_field(&caller, &field).await.unwrap();
    assert_eq!(
        admin
            .create_context_field(&caller, &field)
            .await
            .unwrap_err()
            .status(),
        409
    );
    assert_eq!(
        admin.context_field(&caller, "region").await.unwrap().name,
        "region"
    );
    assert_eq!(
        admin
            .context_field(&caller, "nope")
            .await
            .unwrap_err()
            .status(),
        404
    );

    assert_eq!(admin.tag_types(&caller).await.unwrap()[0].name, "simple");
    let team = TagType {
        name: "team".into(),
        color: Some(Some("#00ff00".into())),
        ..Default::default()
    };
    admin.create_tag_type(&caller, &team).await.unwrap();
    let bad = TagType {
        name: "x".into(),
        ..Default::default()
    };
    assert_eq!(
        admin
            .create_tag_type(&caller, &bad)
            .await
            .unwrap_err()
            .status(),
        400
    );

    let seg = NewSegment {
        name: "beta".into(),
        constraints: serde_json::from_value(
            json!([{"contextName": "region", "operator": "IN", "values": ["x"]}]),
        )
        .unwrap(),
        ..Default::default()
    };
    let created = admin.create_segment(&caller, &seg).await.unwrap();
    assert_eq!(created.id, 1);
    assert_eq!(admin.segment(&caller, 1).await.unwrap().name, "beta");
    assert_eq!(
        admin
            .create_segment(&caller, &seg)
            .await
            .unwrap_err()
            .status(),
        409
    );
    let bad = NewSegment {
        name: "gamma".into(),
        constraints: serde_json::from_value(
            json!([{"contextName": "ghost", "operator": "IN", "values": ["x"]}]),
        )
        .unwrap(),
        ..Default::default()
    };
    let err = admin.create_segment(&caller, &bad).await.unwrap_err();
    assert_eq!(
        err.details()[0].path.as_deref(),
        Some("constraints[0].contextName")
    );
    assert_eq!(admin.segments(&caller).await.unwrap().len(), 1);
}

#[tokio::test]
async fn strategies_enabled_tags_dependencies() {
    let (admin, caller) = setup().await;
    let import = body(data_with(&["child", "parent"]));
    let future = admin.import_toggles_json(&caller, &import);
    is_send(&future);
    future.await.unwrap();
    let validation = admin.validate_import_json(&caller, &import);
    is_send(&validation);
    let export = admin.export(&caller, "default", "development", &[]);
    is_send(&export);
    assert_eq!(export.await.unwrap().features.len(), 2);
    let tag = Tag {
        value: "blue".into(),
        tag_type: "simple".into(),
    };
    is_send(&admin.add_feature_tag(&caller, "default", "child", &tag));

    let strategy: FeatureStrategy =
        serde_json::from_value(json!({"name": "flexibleRollout", "parameters": {"rollout": "30"}}))
            .unwrap();
    let future = admin.add_strategy(&caller, "default", "child", "development", &strategy);
    is_send(&future);
    let added = future.await.unwrap();
    assert_eq!(added.parameters["groupId"], "child");
    assert_eq!(added.parameters["stickiness"], "default");
    let mut changed = strategy.clone();
    changed.parameters.insert("rollout".into(), "60".into());
    let id = added.id.clone().unwrap();
    let updated = admin
        .update_strategy(&caller, "default", "child", "development", &id, &changed)
        .await
        .unwrap();
    assert_eq!(
        (
            updated.id.as_deref(),
            updated.parameters["rollout"].as_str()
        ),
        (Some(id.as_str()), "60")
    );
    let unknown: FeatureStrategy = serde_json::from_value(json!({"name": "nope"})).unwrap();
    assert_eq!(
        admin
            .add_strategy(&caller, "default", "child", "development", &unknown)
            .await
            .unwrap_err()
            .status(),
        400
    );
    admin
        .remove_strategy(&caller, "default", "child", "development", &id)
        .await
        .unwrap();
    assert!(
        admin
            .strategies(&caller, "default", "child", "development")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        admin
            .remove_strategy(&caller, "default", "child", "development", &id)
            .await
            .unwrap_err()
            .status(),
        404
    );

    admin
        .set_feature_enabled(&caller, "default", "child", "development", true)
        .await
        .unwrap();
    let now = admin
        .strategies(&caller, "default", "child", "development")
        .await
        .unwrap();
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].parameters["rollout"], "100");
    let events_before = events(&admin, &caller).await.len();
    admin
        .set_feature_enabled(&caller, "default", "child", "development", true)
        .await
        .unwrap();
    assert_eq!(events(&admin, &caller).await.len(), events_before);
    assert_eq!(
        admin
            .strategies(&caller, "default", "child", "other-env")
            .await
            .unwrap_err()
            .status(),
        404
    );

    let tag = Tag {
        value: "blue".into(),
        tag_type: "simple".into(),
    };
    admin
        .add_feature_tag(&caller, "default", "child", &tag)
        .await
        .unwrap();
    admin
        .add_feature_tag(&caller, "default", "child", &tag)
        .await
        .unwrap();
    assert_eq!(
        admin
            .feature_tags(&caller, "default", "child")
            .await
            .unwrap(),
        std::slice::from_ref(&tag)
    );
    let unknown = Tag {
        value: "blue".into(),
        tag_type: "nope".into(),
    };
    assert_eq!(
        admin
            .add_feature_tag(&caller, "default", "child", &unknown)
            .await
            .unwrap_err()
            .status(),
        400
    );
    admin
        .remove_feature_tag(&caller, "default", "child", &tag)
        .await
        .unwrap();
    assert!(
        admin
            .feature_tags(&caller, "default", "child")
            .await
            .unwrap()
            .is_empty()
    );

    let on_parent = ParentDependency {
        feature: "parent".into(),
        enabled: Some(false),
        variants: Some(vec!["x".into()]),
    };
    admin
        .add_feature_dependency(&caller, "default", "child", &on_parent)
        .await
        .unwrap();
    let deps = admin
        .feature_dependencies(&caller, "default", "child")
        .await
        .unwrap();
    assert_eq!(
        deps,
        [ParentDependency {
            feature: "parent".into(),
            enabled: Some(false),
            variants: Some(vec![])
        }]
    );
    let itself = ParentDependency {
        feature: "parent".into(),
        ..Default::default()
    };
    assert_eq!(
        admin
            .add_feature_dependency(&caller, "default", "parent", &itself)
            .await
            .unwrap_err()
            .status(),
        400
    );
    let chain = ParentDependency {
        feature: "child".into(),
        ..Default::default()
    };
    assert_eq!(
        admin
            .add_feature_dependency(&caller, "default", "parent", &chain)
            .await
            .unwrap_err()
            .status(),
        400
    );
    admin
        .remove_feature_dependency(&caller, "default", "child", "parent")
        .await
        .unwrap();
    assert!(
        admin
            .feature_dependencies(&caller, "default", "child")
            .await
            .unwrap()
            .is_empty()
    );
}
