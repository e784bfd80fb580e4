//! Project access: create users and a group, make the group Member of one project, and show
//! that a key acting as one of its users can now patch variants there, and still not in
//! another project. Then take the access away again: the next call is refused.
//!
//! ```text
//! cargo run --example project_access
//! ```

use serde_json::json;
use toggle_admin::access::{MEMBER_ROLE, OWNER_ROLE, VIEWER_ROLE};
use toggle_admin::model::{Environment, Project, ProjectAccessConfiguration, RoleAccess};
use toggle_admin::model::{NewFeature, NewGroup, NewUser};
use toggle_admin::{KeyAccess, MemoryStore, ToggleAdmin};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("ops").await?;
    let ops = admin.authenticate(Some(&key.secret)).await?;

    admin
        .create_environment(
            &ops,
            &Environment {
                name: "production".into(),
                environment_type: "production".into(),
                ..Default::default()
            },
        )
        .await?;
    for (id, feature) in [("shop", "checkout"), ("billing", "invoices")] {
        admin
            .create_project(
                &ops,
                &Project {
                    id: id.into(),
                    name: id.into(),
                    environments: vec!["production".into()],
                    ..Default::default()
                },
            )
            .await?;
        admin
            .create_feature(
                &ops,
                id,
                &NewFeature {
                    name: feature.into(),
                    ..Default::default()
                },
            )
            .await?;
    }

    // Two users with the read-only root role Viewer, and a group holding one of them.
    let alice = admin
        .create_user(
            &ops,
            &NewUser {
                username: Some("alice".into()),
                root_role: Some(VIEWER_ROLE),
                ..Default::default()
            },
        )
        .await?;
    let bob = admin
        .create_user(
            &ops,
            &NewUser {
                email: Some("bob@example.com".into()),
                root_role: Some(VIEWER_ROLE),
                ..Default::default()
            },
        )
        .await?;
    let team = admin
        .create_group(
            &ops,
            &NewGroup {
                name: "shop team".into(),
                users: vec![alice.id],
                ..Default::default()
            },
        )
        .await?;
    println!("users {} and {}, group {:?}", alice.id, bob.id, team.name);

    // A key that acts as alice: its permissions are resolved at each call.
    let alice_key = admin
        .create_api_key(&ops, "alice's key", KeyAccess::User { user_id: alice.id })
        .await?;
    let alice_caller = admin.authenticate(Some(&alice_key.secret)).await?;

    let patch = serde_json::from_value(json!([
        { "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0 } }
    ]))?;
    let before = admin
        .patch_variants(&alice_caller, "shop", "checkout", "production", &patch)
        .await;
    println!("before: {}", outcome(&before));

    // The team becomes Member of shop; bob becomes its Owner.
    let access = ProjectAccessConfiguration {
        roles: vec![
            RoleAccess {
                id: MEMBER_ROLE,
                groups: vec![team.id],
                users: vec![],
            },
            RoleAccess {
                id: OWNER_ROLE,
                groups: vec![],
                users: vec![bob.id],
            },
        ],
    };
    admin.set_project_access(&ops, "shop", &access).await?;

    let in_shop = admin
        .patch_variants(&alice_caller, "shop", "checkout", "production", &patch)
        .await;
    println!("in shop: {}", outcome(&in_shop));
    let in_billing = admin
        .patch_variants(&alice_caller, "billing", "invoices", "production", &patch)
        .await;
    println!("in billing: {}", outcome(&in_billing));

    // Take the group's role away: alice's very next call is refused.
    let only_owner = ProjectAccessConfiguration {
        roles: vec![access.roles[1].clone()],
    };
    admin.set_project_access(&ops, "shop", &only_owner).await?;
    let after = admin
        .patch_variants(&alice_caller, "shop", "checkout", "production", &patch)
        .await;
    println!("after removal: {}", outcome(&after));
    Ok(())
}

fn outcome<T>(result: &toggle_admin::Result<T>) -> String {
    match result {
        Ok(_) => "allowed".to_owned(),
        Err(e) => format!("{} {}: {e}", e.status(), e.name()),
    }
}
