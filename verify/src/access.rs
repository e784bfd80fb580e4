//! Users, keys and access configurations for the access and application tests.

use serde_json::json;
use toggle_admin::model::NewUser;
use toggle_admin::model::{ProjectAccessConfiguration, RoleAccess};
use toggle_admin::store::Event;
use toggle_admin::{Caller, KeyAccess, ToggleAdmin};

/// A user with `root_role` and a key acting as it.
pub async fn user_with_key(
    admin: &ToggleAdmin,
    caller: &Caller,
    username: &str,
    root_role: i64,
) -> (i64, Caller) {
    let user = admin
        .create_user(
            caller,
            &NewUser {
                username: Some(username.into()),
                root_role: Some(root_role),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let key = admin
        .create_api_key(caller, username, KeyAccess::User { user_id: user.id })
        .await
        .unwrap();
    (
        user.id,
        admin.authenticate(Some(&key.secret)).await.unwrap(),
    )
}

/// A role entry of a configuration.
pub fn role(id: i64, groups: &[i64], users: &[i64]) -> RoleAccess {
    RoleAccess {
        id,
        groups: groups.to_vec(),
        users: users.to_vec(),
    }
}

/// A configuration of these roles.
pub fn config(roles: Vec<RoleAccess>) -> ProjectAccessConfiguration {
    ProjectAccessConfiguration { roles }
}

/// A patch adding a variant `blue`.
pub fn add_blue() -> json_patch::Patch {
    super::facade::patch(
        json!([{ "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0 } }]),
    )
}

/// How many `project-access-updated` events `events` holds.
pub fn access_events(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| e.event.event_type == "project-access-updated")
        .count()
}
