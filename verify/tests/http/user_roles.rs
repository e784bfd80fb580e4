//! `GET /api/admin/user/roles` through the router: the caller's root role, then its project
//! roles (held directly or through a group), in one project or in all; Unleash's
//! `rolesSchema` exactly; for every admin-API key and no other; over every store.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::access::{config, role};
use test_support::http::*;
use test_support::unleash_schema::assert_unleash_response;
use toggle_admin::KeyAccess;
use toggle_admin::access::{EDITOR_ROLE, MEMBER_ROLE, OWNER_ROLE};
use toggle_admin::model::{NewGroup, NewUser};

const ROLES: &str = "/api/admin/user/roles";

/// The caller's roles as `(name, project)`, the answer checked against Unleash's schema.
async fn roles(t: &Setup, key: &str, query: &str) -> Vec<(String, Value)> {
    let r = t
        .call_as(key, Method::GET, &format!("{ROLES}{query}"), None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{query}: {}", r.text());
    let body = r.json();
    assert_unleash_response("getUserRoles", 200, &body);
    assert_eq!(body["version"], 1);
    body["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|role| {
            (
                role["name"].as_str().unwrap().to_owned(),
                role["project"].clone(),
            )
        })
        .collect()
}

fn held(roles: &[(&str, Value)]) -> Vec<(String, Value)> {
    roles
        .iter()
        .map(|(name, project)| ((*name).to_owned(), project.clone()))
        .collect()
}

async fn scenario(t: &Setup) {
    // An admin key holds the root role Admin, and no project role.
    let r = t.call(Method::GET, ROLES, None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"version": 1, "roles": [{"id": 1, "type": "root", "name": "Admin",
               "description": r.json()["roles"][0]["description"], "project": null}]})
    );
    assert_unleash_response("getUserRoles", 200, &r.json());

    // A user: root role Editor, Owner of `p` directly, Member of `other` through a group.
    let user = t
        .admin
        .create_user(
            &t.caller,
            &NewUser {
                username: Some("editor".into()),
                root_role: Some(EDITOR_ROLE),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let key = t
        .admin
        .create_api_key(&t.caller, "editor", KeyAccess::User { user_id: user.id })
        .await
        .unwrap()
        .secret;
    let group = t
        .admin
        .create_group(
            &t.caller,
            &NewGroup {
                name: "squad".into(),
                users: vec![user.id],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    t.admin
        .set_project_access(
            &t.caller,
            "p",
            &config(vec![role(OWNER_ROLE, &[], &[user.id])]),
        )
        .await
        .unwrap();
    t.admin
        .set_project_access(
            &t.caller,
            "other",
            &config(vec![role(MEMBER_ROLE, &[group.id], &[])]),
        )
        .await
        .unwrap();
    let editor = ("Editor", Value::Null);
    assert_eq!(
        roles(t, &key, "").await,
        held(&[
            editor.clone(),
            ("Member", json!("other")),
            ("Owner", json!("p")),
        ])
    );
    // In one project: the root role, then the roles held there.
    assert_eq!(
        roles(t, &key, "?projectId=p").await,
        held(&[editor.clone(), ("Owner", json!("p"))])
    );
    assert_eq!(
        roles(t, &key, "?projectId=other").await,
        held(&[editor.clone(), ("Member", json!("other"))])
    );
    // A project that does not exist holds no role (as in Unleash: no 404).
    assert_eq!(
        roles(t, &key, "?projectId=nowhere").await,
        held(std::slice::from_ref(&editor))
    );
    // A key with grants is a Viewer, whatever its grants.
    let bare = t.key_with(Vec::new()).await;
    assert_eq!(roles(t, &bare, "").await, held(&[("Viewer", Value::Null)]));

    // Other parameters are ignored, as Unleash ignores them; the first `projectId` counts.
    assert_eq!(
        roles(t, &key, "?project=p&other=1").await,
        roles(t, &key, "").await
    );
    assert_eq!(
        roles(t, &key, "?projectId=p&projectId=other").await,
        held(&[editor.clone(), ("Owner", json!("p"))])
    );
    // A client key is a 403, no key a 401.
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "environment": "production"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let client = r.json()["secret"].as_str().unwrap().to_owned();
    t.call_as(&client, Method::GET, ROLES, None)
        .await
        .error(StatusCode::FORBIDDEN, "NoAccessError");
    t.raw(Method::GET, ROLES, None, None, Vec::new())
        .await
        .error(StatusCode::UNAUTHORIZED, "AuthenticationRequired");
}

on_every_store!(scenario => user_roles_on_memory, user_roles_on_file, user_roles_on_postgres);
