//! Users, groups, roles and project access through the public API: access changes taking
//! effect at the next call, no escalation, validation, concurrency. The permission matrix
//! is in `access_matrix.rs`.
//!
//! Project "A" is `p` (feature `f`), project "B" is `other` (feature `g`); see `common`.

use serde_json::json;
use test_support::access::{access_events, add_blue, config, role, user_with_key};
use test_support::facade::{all_events, patch, setup};
use toggle_admin::access::{MEMBER_ROLE, OWNER_ROLE};
use toggle_admin::model::ProjectAccessConfiguration;
use toggle_admin::model::{NewGroup, NewRole, NewUser};
use toggle_admin::{Permission, RolePermission};

#[tokio::test]
async fn group_access_takes_effect_and_ends_at_the_next_call() {
    let (admin, root) = setup().await;
    let (user_id, user) = user_with_key(&admin, &root, "dev", 3).await;
    let group = admin
        .create_group(
            &root,
            &NewGroup {
                name: "devs".into(),
                users: vec![user_id],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let denied = admin
        .patch_variants(&user, "p", "f", "production", &add_blue())
        .await
        .unwrap_err();
    assert_eq!(denied.status(), 403);

    admin
        .set_project_access(
            &root,
            "p",
            &config(vec![role(MEMBER_ROLE, &[group.id], &[])]),
        )
        .await
        .unwrap();
    admin
        .patch_variants(&user, "p", "f", "production", &add_blue())
        .await
        .unwrap();
    // Only in that project.
    let elsewhere = admin
        .patch_variants(&user, "other", "g", "production", &add_blue())
        .await
        .unwrap_err();
    assert_eq!(elsewhere.status(), 403);

    admin
        .set_project_access(&root, "p", &config(vec![]))
        .await
        .unwrap();
    let again = admin
        .patch_variants(&user, "p", "f", "production", &patch(json!([])))
        .await
        .unwrap_err();
    assert_eq!(again.status(), 403);
    assert!(
        again
            .to_string()
            .contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS")
    );

    // Group membership counts at the next call too.
    admin
        .set_project_access(
            &root,
            "p",
            &config(vec![role(MEMBER_ROLE, &[group.id], &[])]),
        )
        .await
        .unwrap();
    admin.set_group_users(&root, group.id, &[]).await.unwrap();
    assert_eq!(
        admin
            .patch_variants(&user, "p", "f", "production", &patch(json!([])))
            .await
            .unwrap_err()
            .status(),
        403
    );
}

#[tokio::test]
async fn members_cannot_escalate_owners_can() {
    let (admin, root) = setup().await;
    let (member_id, member) = user_with_key(&admin, &root, "member", 3).await;
    let (manager_id, manager) = user_with_key(&admin, &root, "manager", 3).await;
    let (owner_id, owner) = user_with_key(&admin, &root, "owner", 3).await;
    let (other_id, _) = user_with_key(&admin, &root, "other", 3).await;
    let access_manager = admin
        .create_role(
            &root,
            &NewRole {
                name: "Access manager".into(),
                permissions: vec![
                    RolePermission::everywhere(Permission::ProjectUserAccessWrite),
                    RolePermission::everywhere(Permission::ProjectGroupAccessWrite),
                ],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(access_manager.id, 6);
    let initial = config(vec![
        role(OWNER_ROLE, &[], &[owner_id]),
        role(MEMBER_ROLE, &[], &[member_id, manager_id]),
        role(access_manager.id, &[], &[manager_id]),
    ]);
    admin
        .set_project_access(&root, "p", &initial)
        .await
        .unwrap();
    let events = all_events(&admin, &root).await.len();

    // A plain Member cannot change access at all.
    let mut grab = initial.clone();
    grab.roles[0].users.push(member_id);
    let err = admin
        .set_project_access(&member, "p", &grab)
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(
        err.to_string().contains("PROJECT_USER_ACCESS_WRITE"),
        "{err}"
    );

    // A Member who may manage access cannot hand out Owner (nor take it away) …
    let mut grab = initial.clone();
    grab.roles[0].users.push(manager_id);
    let err = admin
        .set_project_access(&manager, "p", &grab)
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(err.to_string().contains("did not have access"), "{err}");
    assert!(err.to_string().contains("UPDATE_PROJECT"), "{err}");
    let mut strip = initial.clone();
    strip.roles[0].users.clear();
    assert_eq!(
        admin
            .set_project_access(&manager, "p", &strip)
            .await
            .unwrap_err()
            .status(),
        403
    );
    assert_eq!(
        admin.project_access(&root, "p").await.unwrap(),
        toggle_admin::access::normalise(&initial)
    );
    assert_eq!(all_events(&admin, &root).await.len(), events);

    // … but can hand out Member, whose permissions it holds.
    let mut add_member = initial.clone();
    add_member.roles[1].users.push(other_id);
    admin
        .set_project_access(&manager, "p", &add_member)
        .await
        .unwrap();

    // An Owner can appoint another Owner.
    let mut appoint = add_member.clone();
    appoint.roles[0].users.push(member_id);
    admin
        .set_project_access(&owner, "p", &appoint)
        .await
        .unwrap();
    assert_eq!(
        admin.project_access(&root, "p").await.unwrap(),
        toggle_admin::access::normalise(&appoint)
    );
}

#[tokio::test]
async fn bad_configurations_are_refused_whole() {
    let (admin, root) = setup().await;
    let (user_id, _) = user_with_key(&admin, &root, "u", 3).await;
    let group = admin
        .create_group(
            &root,
            &NewGroup {
                name: "g".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let good = config(vec![role(MEMBER_ROLE, &[group.id], &[user_id])]);
    admin.set_project_access(&root, "p", &good).await.unwrap();
    let events = all_events(&admin, &root).await.len();

    let cases: Vec<(ProjectAccessConfiguration, Vec<&str>, &str)> = vec![
        (config(vec![role(0, &[], &[])]), vec!["roles[0].id"], "0"),
        (
            config(vec![role(-1, &[], &[user_id])]),
            vec!["roles[0].id"],
            "-1",
        ),
        (config(vec![role(77, &[], &[])]), vec!["roles[0].id"], "77"),
        (
            config(vec![role(2, &[], &[user_id])]),
            vec!["roles[0].id"],
            "2",
        ),
        (
            config(vec![role(MEMBER_ROLE, &[], &[user_id, 404, 405])]),
            vec!["roles[0].users[1]", "roles[0].users[2]"],
            "404, 405",
        ),
        (
            config(vec![role(OWNER_ROLE, &[group.id, 9], &[])]),
            vec!["roles[0].groups[1]"],
            "9",
        ),
        (
            config(vec![
                role(OWNER_ROLE, &[], &[user_id]),
                role(OWNER_ROLE, &[], &[]),
            ]),
            vec!["roles[1].id"],
            "4",
        ),
        (
            config(vec![
                role(1, &[], &[]),
                role(MEMBER_ROLE, &[8], &[user_id, 99]),
                role(MEMBER_ROLE, &[], &[]),
            ]),
            vec![
                "roles[0].id",
                "roles[1].users[1]",
                "roles[1].groups[0]",
                "roles[2].id",
            ],
            "99",
        ),
    ];
    for (bad, paths, ids) in cases {
        let err = admin
            .set_project_access(&root, "p", &bad)
            .await
            .unwrap_err();
        assert_eq!(err.status(), 400, "{bad:?}: {err}");
        let got: Vec<_> = err
            .details()
            .iter()
            .map(|d| d.path.clone().unwrap_or_default())
            .collect();
        assert_eq!(got, paths, "{bad:?}");
        assert!(err.to_string().contains(ids), "{bad:?}: {err}");
        assert_eq!(admin.project_access(&root, "p").await.unwrap(), good);
        assert_eq!(all_events(&admin, &root).await.len(), events);
    }
    // Duplicates inside one role are merged, not refused.
    admin
        .set_project_access(
            &root,
            "p",
            &config(vec![role(
                MEMBER_ROLE,
                &[group.id, group.id],
                &[user_id, user_id],
            )]),
        )
        .await
        .unwrap();
    assert_eq!(admin.project_access(&root, "p").await.unwrap(), good);
    // An unknown project is a 404.
    let err = admin
        .set_project_access(&root, "nope", &good)
        .await
        .unwrap_err();
    assert_eq!(err.status(), 404);
}

#[tokio::test]
async fn an_update_records_old_and_new_configuration() {
    let (admin, root) = setup().await;
    let (a, _) = user_with_key(&admin, &root, "a", 3).await;
    let (b, _) = user_with_key(&admin, &root, "b", 3).await;
    let first = config(vec![role(MEMBER_ROLE, &[], &[b, a, b])]);
    admin.set_project_access(&root, "p", &first).await.unwrap();
    let second = config(vec![role(OWNER_ROLE, &[], &[a])]);
    admin.set_project_access(&root, "p", &second).await.unwrap();
    // The same again writes nothing.
    admin.set_project_access(&root, "p", &second).await.unwrap();
    let events: Vec<_> = all_events(&admin, &root)
        .await
        .into_iter()
        .filter(|e| e.event.event_type == "project-access-updated")
        .collect();
    assert_eq!(events.len(), 2);
    let last = &events[1].event;
    assert_eq!(last.project.as_deref(), Some("p"));
    assert_eq!(
        last.pre_data,
        Some(json!({"roles": [{"id": 5, "groups": [], "users": [a, b]}]}).into())
    );
    assert_eq!(
        last.data,
        Some(json!({"roles": [{"id": 4, "groups": [], "users": [a]}]}).into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_sets_never_interleave() {
    let (admin, root) = setup().await;
    let mut users = Vec::new();
    for n in 0..6 {
        users.push(user_with_key(&admin, &root, &format!("u{n}"), 3).await.0);
    }
    let mut configs: Vec<ProjectAccessConfiguration> = Vec::new();
    for candidate in (0..12).map(|n| {
        let pick = |k: usize| users[(n + k) % users.len()];
        let mut owners = vec![pick(0)];
        let mut members = vec![pick(1), pick(2 + n % 3)];
        owners.sort();
        members.sort();
        members.dedup();
        config(vec![
            role(OWNER_ROLE, &[], &owners),
            role(MEMBER_ROLE, &[], &members),
        ])
    }) {
        if !configs.contains(&candidate) {
            configs.push(candidate);
        }
    }
    let tasks: Vec<_> = configs
        .iter()
        .cloned()
        .map(|c| {
            let (admin, root) = (admin.clone(), root.clone());
            tokio::spawn(async move { admin.set_project_access(&root, "p", &c).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let final_state = admin.project_access(&root, "p").await.unwrap();
    assert!(configs.contains(&final_state), "{final_state:?}");
    // The log is one chain: each update starts from the state the previous one left.
    let events: Vec<_> = all_events(&admin, &root)
        .await
        .into_iter()
        .filter(|e| e.event.event_type == "project-access-updated")
        .collect();
    assert!(!events.is_empty() && events.len() <= configs.len());
    assert_eq!(
        access_events(&all_events(&admin, &root).await),
        events.len()
    );
    let mut previous = json!({"roles": []});
    for e in &events {
        assert_eq!(
            e.event.pre_data.as_ref().unwrap().to_value().unwrap(),
            previous
        );
        previous = e.event.data.as_ref().unwrap().to_value().unwrap();
    }
    assert_eq!(previous, serde_json::to_value(&final_state).unwrap());
}

#[tokio::test]
async fn users_groups_and_roles_are_managed_by_admins() {
    let (admin, root) = setup().await;
    let (editor_id, editor) = user_with_key(&admin, &root, "ed", 2).await;
    assert_eq!(editor_id, 1);
    let err = admin
        .create_user(
            &editor,
            &NewUser {
                email: Some("x@example.com".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(err.to_string().contains("MANAGE_USERS"));

    let second = admin
        .create_user(
            &root,
            &NewUser {
                email: Some("x@example.com".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((second.id, second.root_role), (2, 3));
    let taken = admin
        .create_user(
            &root,
            &NewUser {
                email: Some("X@example.com".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(taken.status(), 409);
    let invalid = admin
        .create_user(
            &root,
            &NewUser {
                email: Some("nope".into()),
                root_role: Some(OWNER_ROLE),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(invalid.details().len(), 2);
    assert_eq!(admin.users(&editor).await.unwrap().len(), 2);
    assert_eq!(admin.user(&editor, 2).await.unwrap(), second);

    let bad_group = admin
        .create_group(
            &root,
            &NewGroup {
                name: "g".into(),
                users: vec![1, 50],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(bad_group.details()[0].path.as_deref(), Some("users[1]"));

    let bad_role = admin
        .create_role(
            &root,
            &NewRole {
                name: "r".into(),
                permissions: vec![
                    RolePermission::everywhere(Permission::UpdateApplication),
                    RolePermission::in_environment(
                        Permission::UpdateFeatureEnvironmentVariants,
                        "production",
                    ),
                    RolePermission::in_environment(Permission::CreateFeatureStrategy, "mars"),
                ],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    let paths: Vec<_> = bad_role
        .details()
        .iter()
        .map(|d| d.path.clone().unwrap_or_default())
        .collect();
    assert_eq!(paths, ["permissions[0]", "permissions[2]"]);
    let clash = admin
        .create_role(
            &root,
            &NewRole {
                name: "owner".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(clash.status(), 409);
    let roles = admin.roles(&editor).await.unwrap();
    assert_eq!(
        roles.iter().map(|r| r.id).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
}

#[tokio::test]
async fn environment_limited_custom_roles_grant_only_there() {
    let (admin, root) = setup().await;
    let (id, user) = user_with_key(&admin, &root, "prod-variants", 3).await;
    let custom = admin
        .create_role(
            &root,
            &NewRole {
                name: "Production variants".into(),
                permissions: vec![RolePermission::in_environment(
                    Permission::UpdateFeatureEnvironmentVariants,
                    "production",
                )],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    admin
        .set_project_access(&root, "p", &config(vec![role(custom.id, &[], &[id])]))
        .await
        .unwrap();
    admin
        .patch_variants(&user, "p", "f", "production", &add_blue())
        .await
        .unwrap();
    let err = admin
        .patch_variants(&user, "p", "f", "development", &add_blue())
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403);
    assert!(err.to_string().contains("development"), "{err}");
}
