//! The contents of the events the facade writes, not only their number: type, createdBy,
//! project, feature, environment, preData and data, for each kind of change.

use serde_json::{Value, json};
use toggle_admin::access::OWNER_ROLE;
use toggle_admin::model::{
    Application, Environment, Project, ProjectAccessConfiguration, RoleAccess,
};
use toggle_admin::model::{NewFeature, NewGroup, NewRole, NewUser};
use toggle_admin::store::Event;
use toggle_admin::{Caller, KeyAccess, Permission, RolePermission, ToggleAdmin};

use test_support::facade::{all_events, patch, setup};

/// The events `change` wrote.
async fn written<F: std::future::Future<Output = ()>>(
    admin: &ToggleAdmin,
    caller: &Caller,
    change: F,
) -> Vec<Event> {
    let before = all_events(admin, caller).await.len();
    change.await;
    all_events(admin, caller).await.split_off(before)
}

/// The one event `change` wrote.
async fn one<F: std::future::Future<Output = ()>>(
    admin: &ToggleAdmin,
    caller: &Caller,
    change: F,
) -> Event {
    let mut events = written(admin, caller, change).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    events.remove(0)
}

fn json_of(data: &Option<toggle_admin::store::Json>) -> Value {
    data.as_ref().map_or(Value::Null, |d| d.to_value().unwrap())
}

/// Type, author and what the event is about.
fn about(
    event: &Event,
    kind: &str,
    project: Option<&str>,
    feature: Option<&str>,
    env: Option<&str>,
) {
    let e = &event.event;
    assert_eq!(e.event_type, kind);
    assert_eq!(e.created_by, "test-admin", "{kind}");
    assert_eq!(e.project.as_deref(), project, "{kind}: project");
    assert_eq!(e.feature_name.as_deref(), feature, "{kind}: feature");
    assert_eq!(e.environment.as_deref(), env, "{kind}: environment");
    let age = chrono::Utc::now() - e.created_at;
    assert!(age.num_seconds() < 60, "{kind}: createdAt {}", e.created_at);
}

#[tokio::test]
async fn the_four_operations() {
    let (admin, caller) = setup().await;

    // Variants: the old and the new list.
    let e = one(&admin, &caller, async {
        admin
            .patch_variants(
                &caller,
                "p",
                "f",
                "production",
                &patch(json!([
                    { "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0 } }
                ])),
            )
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "feature-environment-variants-updated",
        Some("p"),
        Some("f"),
        Some("production"),
    );
    assert_eq!(json_of(&e.event.pre_data), json!({ "variants": [] }));
    let data = json_of(&e.event.data);
    assert_eq!(data["variants"][0]["name"], "blue");
    assert_eq!(data["variants"][0]["weight"], 1000);

    // Project access: the old configuration and the new one.
    let user = admin
        .create_user(
            &caller,
            &NewUser {
                email: Some("a@example.com".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let config = ProjectAccessConfiguration {
        roles: vec![RoleAccess {
            id: OWNER_ROLE,
            users: vec![user.id],
            groups: vec![],
        }],
    };
    let e = one(&admin, &caller, async {
        admin
            .set_project_access(&caller, "p", &config)
            .await
            .unwrap();
    })
    .await;
    about(&e, "project-access-updated", Some("p"), None, None);
    assert_eq!(
        json_of(&e.event.data),
        serde_json::to_value(&config).unwrap()
    );
    assert!(
        json_of(&e.event.pre_data)["roles"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["users"].as_array().is_none_or(|u| u.is_empty())),
        "{:?}",
        e.event.pre_data
    );

    // Application: registered, then deleted with its state as preData.
    let app = Application {
        name: "shop-web".into(),
        ..Default::default()
    };
    let e = one(&admin, &caller, async {
        admin.register_application(&caller, &app).await.unwrap();
    })
    .await;
    about(&e, "application-created", None, None, None);
    assert_eq!(json_of(&e.event.data)["appName"], "shop-web");
    let e = one(&admin, &caller, async {
        admin.delete_application(&caller, "shop-web").await.unwrap();
    })
    .await;
    about(&e, "application-deleted", None, None, None);
    assert_eq!(json_of(&e.event.pre_data)["appName"], "shop-web");
    assert_eq!(e.event.data, None);

    // Import: a feature created in `p`, enabled in production.
    let events = written(&admin, &caller, async {
        admin
            .import_toggles_json(
                &caller,
                &json!({
                    "project": "p",
                    "environment": "production",
                    "data": {
                        "features": [{ "name": "imported", "type": "release" }],
                        "featureStrategies": [],
                        "featureEnvironments": [{ "name": "imported", "enabled": true }],
                        "tagTypes": []
                    }
                }),
            )
            .await
            .unwrap();
    })
    .await;
    assert!(!events.is_empty());
    for e in &events {
        assert_eq!(e.event.created_by, "test-admin", "{e:?}");
        assert_eq!(e.event.project.as_deref(), Some("p"), "{e:?}");
    }
    let created = events
        .iter()
        .find(|e| e.event.event_type == "feature-created")
        .expect("feature-created");
    about(
        created,
        "feature-created",
        Some("p"),
        Some("imported"),
        None,
    );
    assert_eq!(json_of(&created.event.data)["name"], "imported");
    let imported = events
        .iter()
        .find(|e| e.event.event_type == "features-imported")
        .expect("features-imported");
    about(
        imported,
        "features-imported",
        Some("p"),
        None,
        Some("production"),
    );
}

#[tokio::test]
async fn projects_environments_features() {
    let (admin, caller) = setup().await;

    let e = one(&admin, &caller, async {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: "qa".into(),
                    environment_type: "test".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "environment-created", None, None, Some("qa"));
    assert_eq!(json_of(&e.event.data)["name"], "qa");
    assert_eq!(e.event.pre_data, None);

    let e = one(&admin, &caller, async {
        admin
            .create_project(
                &caller,
                &Project {
                    id: "shop".into(),
                    name: "Shop".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "project-created", Some("shop"), None, None);
    assert_eq!(json_of(&e.event.data)["id"], "shop");
    assert_eq!(json_of(&e.event.data)["name"], "Shop");

    let e = one(&admin, &caller, async {
        admin
            .add_project_environment(&caller, "shop", "qa")
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "project-environment-added",
        Some("shop"),
        None,
        Some("qa"),
    );

    let e = one(&admin, &caller, async {
        admin
            .create_feature(
                &caller,
                "shop",
                &NewFeature {
                    name: "checkout".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "feature-created", Some("shop"), Some("checkout"), None);
    assert_eq!(json_of(&e.event.data)["name"], "checkout");
    assert_eq!(json_of(&e.event.data)["type"], "release");

    let e = one(&admin, &caller, async {
        admin
            .archive_feature(&caller, "shop", "checkout")
            .await
            .unwrap();
    })
    .await;
    about(&e, "feature-archived", Some("shop"), Some("checkout"), None);
}

#[tokio::test]
async fn users_groups_roles_and_keys() {
    let (admin, caller) = setup().await;

    let mut user_id = 0;
    let e = one(&admin, &caller, async {
        user_id = admin
            .create_user(
                &caller,
                &NewUser {
                    username: Some("ann".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .id;
    })
    .await;
    about(&e, "user-created", None, None, None);
    assert_eq!(json_of(&e.event.data)["username"], "ann");
    assert_eq!(json_of(&e.event.data)["id"], user_id);

    let e = one(&admin, &caller, async {
        admin
            .create_group(
                &caller,
                &NewGroup {
                    name: "ops".into(),
                    users: vec![user_id],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "group-created", None, None, None);
    assert_eq!(json_of(&e.event.data)["name"], "ops");
    assert_eq!(json_of(&e.event.data)["users"], json!([user_id]));

    let e = one(&admin, &caller, async {
        admin
            .create_role(
                &caller,
                &NewRole {
                    name: "Variant editor".into(),
                    permissions: vec![RolePermission::everywhere(
                        Permission::UpdateFeatureEnvironmentVariants,
                    )],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "role-created", None, None, None);
    assert_eq!(json_of(&e.event.data)["name"], "Variant editor");
    assert_eq!(
        json_of(&e.event.data)["permissions"][0]["name"],
        "UPDATE_FEATURE_ENVIRONMENT_VARIANTS"
    );

    // A key's events never carry its secret.
    let mut key = None;
    let e = one(&admin, &caller, async {
        key = Some(
            admin
                .create_api_key(&caller, "ci", KeyAccess::Admin)
                .await
                .unwrap(),
        );
    })
    .await;
    let key = key.unwrap();
    about(&e, "api-token-created", None, None, None);
    let data = json_of(&e.event.data);
    assert!(!data.to_string().contains(&key.secret), "{data}");
    assert_eq!(data["tokenName"], "ci", "{data}");
    assert_eq!(data["id"], key.info.id.to_string(), "{data}");
    assert_eq!(data["type"], "admin", "{data}");
    assert_eq!(data["projects"], json!(["*"]), "{data}");
    assert!(data.get("secret").is_none(), "{data}");
    let e = one(&admin, &caller, async {
        admin.revoke_api_key(&caller, key.info.id).await.unwrap();
    })
    .await;
    about(&e, "api-token-deleted", None, None, None);
    let pre = json_of(&e.event.pre_data);
    assert!(!pre.to_string().contains(&key.secret), "{pre}");
    assert_eq!(pre["tokenName"], "ci", "{pre}");
    assert_eq!(pre["id"], key.info.id.to_string(), "{pre}");
}

#[tokio::test]
async fn feature_configuration() {
    use toggle_admin::model::{FeatureStrategy, ParentDependency, Tag};
    let (admin, caller) = setup().await;

    let mut id = String::new();
    let e = one(&admin, &caller, async {
        let added = admin
            .add_strategy(
                &caller,
                "p",
                "f",
                "production",
                &FeatureStrategy {
                    name: "default".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        id = added.id.clone().unwrap();
    })
    .await;
    about(
        &e,
        "feature-strategy-add",
        Some("p"),
        Some("f"),
        Some("production"),
    );
    assert_eq!(json_of(&e.event.data)["name"], "default");
    assert_eq!(json_of(&e.event.data)["id"], id.as_str());
    assert_eq!(e.event.pre_data, None);

    let e = one(&admin, &caller, async {
        admin
            .update_strategy(
                &caller,
                "p",
                "f",
                "production",
                &id,
                &FeatureStrategy {
                    name: "flexibleRollout".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "feature-strategy-update",
        Some("p"),
        Some("f"),
        Some("production"),
    );
    assert_eq!(json_of(&e.event.pre_data)["name"], "default");
    assert_eq!(json_of(&e.event.data)["name"], "flexibleRollout");

    let e = one(&admin, &caller, async {
        admin
            .set_feature_enabled(&caller, "p", "f", "production", true)
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "feature-environment-enabled",
        Some("p"),
        Some("f"),
        Some("production"),
    );
    let e = one(&admin, &caller, async {
        admin
            .set_feature_enabled(&caller, "p", "f", "production", false)
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "feature-environment-disabled",
        Some("p"),
        Some("f"),
        Some("production"),
    );

    let e = one(&admin, &caller, async {
        admin
            .remove_strategy(&caller, "p", "f", "production", &id)
            .await
            .unwrap();
    })
    .await;
    about(
        &e,
        "feature-strategy-remove",
        Some("p"),
        Some("f"),
        Some("production"),
    );
    assert_eq!(json_of(&e.event.pre_data)["id"], id.as_str());
    assert_eq!(e.event.data, None);

    let tag = Tag {
        value: "checkout".into(),
        tag_type: "simple".into(),
    };
    // A tag first put on a feature is created too, as Unleash does.
    let events = written(&admin, &caller, async {
        admin
            .add_feature_tag(&caller, "p", "f", &tag)
            .await
            .unwrap();
    })
    .await;
    assert_eq!(events.len(), 2, "{events:#?}");
    about(&events[0], "tag-created", None, None, None);
    assert_eq!(
        json_of(&events[0].event.data),
        json!({ "value": "checkout", "type": "simple" })
    );
    let e = &events[1];
    about(e, "feature-tagged", Some("p"), Some("f"), None);
    assert_eq!(
        json_of(&e.event.data),
        json!({ "value": "checkout", "type": "simple" })
    );
    let e = one(&admin, &caller, async {
        admin
            .remove_feature_tag(&caller, "p", "f", &tag)
            .await
            .unwrap();
    })
    .await;
    about(&e, "feature-untagged", Some("p"), Some("f"), None);
    assert_eq!(
        json_of(&e.event.pre_data),
        json!({ "value": "checkout", "type": "simple" })
    );

    admin
        .create_feature(
            &caller,
            "p",
            &NewFeature {
                name: "parent".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let e = one(&admin, &caller, async {
        admin
            .add_feature_dependency(
                &caller,
                "p",
                "f",
                &ParentDependency {
                    feature: "parent".into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    })
    .await;
    about(&e, "feature-dependency-added", Some("p"), Some("f"), None);
    assert_eq!(json_of(&e.event.data)["feature"], "parent");
    let e = one(&admin, &caller, async {
        admin
            .remove_feature_dependency(&caller, "p", "f", "parent")
            .await
            .unwrap();
    })
    .await;
    about(&e, "feature-dependency-removed", Some("p"), Some("f"), None);
    assert_eq!(json_of(&e.event.pre_data)["feature"], "parent");
}
