//! Applications: register, read, and delete as BEHAVIOUR.md §3 says.

use serde_json::json;
use test_support::access::user_with_key;
use test_support::facade::{all_events, setup};
use toggle_admin::model::Application;

fn app(value: serde_json::Value) -> Application {
    serde_json::from_value(value).unwrap()
}

fn deleted_events(events: &[toggle_admin::store::Event]) -> Vec<&toggle_admin::store::Event> {
    events
        .iter()
        .filter(|e| e.event.event_type == "application-deleted")
        .collect()
}

#[tokio::test]
async fn delete_existing_missing_and_twice() {
    let (admin, root) = setup().await;
    let billing = app(json!({
        "name": "billing",
        "description": "bills",
        "instances": [
            {"instanceId": "i-1", "sdkVersion": "unleash-client-rust:0.1", "environment": "production"},
            {"instanceId": "i-2", "lastSeen": "2024-01-01T00:00:00.000Z"}
        ]
    }));
    admin.register_application(&root, &billing).await.unwrap();
    admin
        .register_application(&root, &app(json!({"name": "other"})))
        .await
        .unwrap();
    let read = admin.application(&root, "billing").await.unwrap();
    assert!(read.created_at.is_some(), "{read:?}");
    assert_eq!(
        read.links,
        Some(toggle_admin::model::ApplicationLinks::of("billing"))
    );
    let stored = toggle_admin::model::Application {
        created_at: None,
        links: None,
        ..read
    };
    assert_eq!(stored, billing);

    admin.delete_application(&root, "billing").await.unwrap();
    admin.delete_application(&root, "billing").await.unwrap();
    admin.delete_application(&root, "never-was").await.unwrap();

    let err = admin.application(&root, "billing").await.unwrap_err();
    assert_eq!(err.status(), 404);
    assert_eq!(err.to_string(), "Could not find appName=billing");
    let names: Vec<_> = admin
        .applications(&root)
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.name)
        .collect();
    assert_eq!(names, ["other"]);
    let events = all_events(&admin, &root).await;
    let deleted = deleted_events(&events);
    assert_eq!(deleted.len(), 1);
    // The event keeps what was deleted, instances included.
    let mut pre_data = deleted[0]
        .event
        .pre_data
        .as_ref()
        .unwrap()
        .to_value()
        .unwrap();
    assert!(pre_data["createdAt"].is_string(), "{pre_data}");
    pre_data.as_object_mut().unwrap().remove("createdAt");
    assert_eq!(pre_data, serde_json::to_value(&billing).unwrap());
    assert_eq!(deleted[0].event.created_by, "test-admin");

    // Registering again after the delete starts from scratch.
    admin
        .register_application(&root, &app(json!({"name": "billing"})))
        .await
        .unwrap();
    assert!(
        admin
            .application(&root, "billing")
            .await
            .unwrap()
            .instances
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_deletes_record_one_event() {
    let (admin, root) = setup().await;
    admin
        .register_application(
            &root,
            &app(json!({"name": "a", "instances": [{"instanceId": "x"}]})),
        )
        .await
        .unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (admin, root) = (admin.clone(), root.clone());
            tokio::spawn(async move { admin.delete_application(&root, "a").await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(deleted_events(&all_events(&admin, &root).await).len(), 1);
}

#[tokio::test]
async fn delete_needs_update_application_and_a_name() {
    let (admin, root) = setup().await;
    admin
        .register_application(&root, &app(json!({"name": "a"})))
        .await
        .unwrap();
    let (_, viewer) = user_with_key(&admin, &root, "viewer", 3).await;
    let (_, editor) = user_with_key(&admin, &root, "editor", 2).await;
    let before = all_events(&admin, &root).await.len();

    let err = admin.delete_application(&viewer, "a").await.unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(err.to_string().contains("\"UPDATE_APPLICATION\""), "{err}");
    // Permission comes before validation: an empty name is still a 403 for the viewer.
    assert_eq!(
        admin
            .delete_application(&viewer, "")
            .await
            .unwrap_err()
            .status(),
        403
    );
    let err = admin.delete_application(&root, " ").await.unwrap_err();
    assert_eq!(err.name(), "ValidationError");
    assert!(admin.application(&root, "a").await.is_ok());
    assert_eq!(all_events(&admin, &root).await.len(), before);

    admin.delete_application(&editor, "a").await.unwrap();
    assert_eq!(
        admin.application(&root, "a").await.unwrap_err().status(),
        404
    );
}

#[tokio::test]
async fn registration_merges_fields_and_instances() {
    let (admin, root) = setup().await;
    admin
        .register_application(
            &root,
            &app(json!({"name": "a", "description": "d", "instances": [{"instanceId": "1", "environment": "dev"}]})),
        )
        .await
        .unwrap();
    let merged = admin
        .register_application(
            &root,
            &app(json!({"name": "a", "url": "https://a", "instances": [{"instanceId": "1", "environment": "prod"}, {"instanceId": "2"}]})),
        )
        .await
        .unwrap();
    let mut merged = serde_json::to_value(&merged).unwrap();
    let created = merged.as_object_mut().unwrap().remove("createdAt").unwrap();
    assert!(created.is_string(), "{created}");
    assert_eq!(
        merged,
        json!({"appName": "a", "description": "d", "url": "https://a", "color": null,
            "icon": null, "strategies": [], "seenToggles": [],
            "links": {"self": "/api/applications/a"}, "instances": [
            {"instanceId": "1", "environment": "prod"}, {"instanceId": "2"}
        ]})
    );
    // The same registration again writes nothing.
    let before = all_events(&admin, &root).await.len();
    admin
        .register_application(
            &root,
            &app(json!({"name": "a", "instances": [{"instanceId": "2"}]})),
        )
        .await
        .unwrap();
    assert_eq!(all_events(&admin, &root).await.len(), before);
    let types: Vec<_> = all_events(&admin, &root)
        .await
        .into_iter()
        .map(|e| e.event.event_type)
        .filter(|t| t.starts_with("application-"))
        .collect();
    assert_eq!(types, ["application-created", "application-updated"]);

    let err = admin
        .register_application(
            &root,
            &app(json!({"name": "", "instances": [{"instanceId": ""}]})),
        )
        .await
        .unwrap_err();
    assert_eq!(err.details().len(), 2);
}
