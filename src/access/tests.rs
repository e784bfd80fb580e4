use std::collections::BTreeSet;

use chrono::Utc;

use super::*;
use crate::model::Grant;
use crate::model::{Group, ProjectAccessConfiguration, RoleAccess};

fn role(id: i64, groups: &[i64], users: &[i64]) -> RoleAccess {
    RoleAccess {
        id,
        groups: groups.to_vec(),
        users: users.to_vec(),
    }
}

fn config(roles: Vec<RoleAccess>) -> ProjectAccessConfiguration {
    ProjectAccessConfiguration { roles }
}

fn known() -> KnownIds {
    let mut known = KnownIds::default();
    for r in builtin_roles() {
        known.roles.insert(r.id, r.role_type);
    }
    known.roles.insert(6, RoleType::Custom);
    known.users.extend([1, 2, 3]);
    known.groups.extend([1, 2]);
    known
}

fn group(id: i64, users: &[i64]) -> Group {
    Group {
        id,
        name: format!("g{id}"),
        description: None,
        users: users.to_vec(),
        created_at: Utc::now(),
    }
}

fn covers(grants: &[Grant], p: Permission, project: Option<&str>, env: Option<&str>) -> bool {
    grants.iter().any(|g| g.covers(p, project, env))
}

#[test]
fn builtin_roles_have_unleash_ids_and_types() {
    let roles = builtin_roles();
    let summary: Vec<_> = roles
        .iter()
        .map(|r| (r.id, r.name.as_str(), r.role_type))
        .collect();
    assert_eq!(
        summary,
        [
            (1, "Admin", RoleType::Root),
            (2, "Editor", RoleType::Root),
            (3, "Viewer", RoleType::Root),
            (4, "Owner", RoleType::Project),
            (5, "Member", RoleType::Project),
        ]
    );
    assert!(builtin_role(0).is_none() && builtin_role(6).is_none());
}

#[test]
fn owner_holds_every_project_permission_and_member_a_subset() {
    let project_permissions: BTreeSet<Permission> = Permission::ALL
        .into_iter()
        .filter(|p| permission_scope(*p) != PermissionScope::Root)
        .collect();
    let owner: BTreeSet<Permission> = OWNER_PERMISSIONS.iter().copied().collect();
    assert_eq!(owner, project_permissions);
    let member: BTreeSet<Permission> = MEMBER_PERMISSIONS.iter().copied().collect();
    assert!(member.is_subset(&owner));
    assert!(!member.contains(&Permission::ProjectUserAccessWrite));
    assert!(!member.contains(&Permission::UpdateProject));
}

#[test]
fn viewer_has_no_write_permission_and_editor_no_admin_ones() {
    assert!(VIEWER_PERMISSIONS.is_empty());
    for p in [
        Permission::Admin,
        Permission::ManageUsers,
        Permission::ProjectUserAccessWrite,
        Permission::ProjectGroupAccessWrite,
        Permission::CreateEnvironment,
    ] {
        assert!(!EDITOR_PERMISSIONS.contains(&p), "{p}");
    }
    assert!(EDITOR_PERMISSIONS.contains(&Permission::UpdateApplication));
    assert!(EDITOR_PERMISSIONS.contains(&Permission::UpdateFeatureEnvironmentVariants));
}

#[test]
fn a_valid_configuration_is_normalised() {
    let got = validate_configuration(
        &config(vec![role(6, &[], &[3]), role(5, &[2, 1, 2], &[3, 1, 3])]),
        &known(),
    )
    .unwrap();
    assert_eq!(
        got,
        config(vec![role(5, &[1, 2], &[1, 3]), role(6, &[], &[3])])
    );
}

#[test]
fn every_bad_id_is_listed_with_its_path() {
    let err = validate_configuration(
        &config(vec![
            role(0, &[], &[]),
            role(99, &[], &[]),
            role(2, &[], &[]),
            role(5, &[7, 7], &[42, 1, 42]),
            role(5, &[], &[]),
            role(-3, &[8], &[]),
        ]),
        &known(),
    )
    .unwrap_err();
    let paths: Vec<_> = err
        .details()
        .iter()
        .map(|d| d.path.clone().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "roles[0].id",
            "roles[1].id",
            "roles[2].id",
            "roles[3].users[0]",
            "roles[3].groups[0]",
            "roles[4].id",
            "roles[5].id",
            "roles[5].groups[0]",
        ]
    );
    let message = err.to_string();
    for part in [
        "-3, 0, 2, 99",
        "listed twice: 5",
        "user ids do not exist: 42",
        "group ids do not exist: 7, 8",
    ] {
        assert!(message.contains(part), "{message} lacks {part}");
    }
    assert_eq!(err.status(), 400);
}

#[test]
fn changes_say_which_kind_of_assignment_moves() {
    let old = config(vec![role(4, &[], &[1]), role(5, &[1], &[])]);
    let same = config(vec![
        role(5, &[1, 1], &[]),
        role(4, &[], &[1]),
        role(6, &[], &[]),
    ]);
    let change = AccessChange::between(&old, &same);
    assert!(change.is_empty());
    assert_eq!(
        change.required_permissions(),
        [Permission::ProjectUserAccessWrite]
    );

    let groups_only = config(vec![role(4, &[], &[1])]);
    let change = AccessChange::between(&old, &groups_only);
    assert!(change.groups && !change.users);
    assert_eq!(change.roles, BTreeSet::from([5]));
    assert_eq!(
        change.required_permissions(),
        [Permission::ProjectGroupAccessWrite]
    );

    let both = config(vec![role(5, &[], &[2])]);
    let change = AccessChange::between(&old, &both);
    assert!(change.users && change.groups);
    assert_eq!(change.roles, BTreeSet::from([4, 5]));
    assert_eq!(
        change.required_permissions(),
        [
            Permission::ProjectUserAccessWrite,
            Permission::ProjectGroupAccessWrite
        ]
    );
}

#[test]
fn escalation_needs_every_permission_of_changed_roles() {
    let custom = Role {
        id: 6,
        name: "variants in prod".into(),
        description: None,
        role_type: RoleType::Custom,
        permissions: vec![
            RolePermission::in_environment(Permission::UpdateFeatureEnvironmentVariants, "prod"),
            RolePermission::everywhere(Permission::UpdateFeature),
        ],
    };
    let member = builtin_role(MEMBER_ROLE).unwrap();
    let needed = escalation_requirements([&custom, &member]);
    assert_eq!(needed.len(), MEMBER_PERMISSIONS.len() + 1);
    assert!(needed.contains(&RolePermission::in_environment(
        Permission::UpdateFeatureEnvironmentVariants,
        "prod"
    )));
    // An Owner's grants in the project cover whatever any project role needs there.
    let owner = builtin_role(OWNER_ROLE).unwrap();
    let grants = grants_of(None, [("a", std::slice::from_ref(&owner))]);
    for entry in &needed {
        assert!(covers(
            &grants,
            entry.permission,
            Some("a"),
            entry.environment.as_deref()
        ));
    }
    // A Member's do not cover the Owner role.
    let grants = grants_of(None, [("a", std::slice::from_ref(&member))]);
    let owner_needs = escalation_requirements([&owner]);
    assert!(owner_needs.iter().any(|entry| !covers(
        &grants,
        entry.permission,
        Some("a"),
        entry.environment.as_deref()
    )));
}

#[test]
fn roles_are_held_directly_or_through_groups() {
    let cfg = config(vec![
        role(4, &[], &[1]),
        role(5, &[1], &[]),
        role(6, &[2], &[3]),
    ]);
    let groups = [group(1, &[2, 3]), group(2, &[9])];
    assert_eq!(roles_held(1, &cfg, &groups), BTreeSet::from([4]));
    assert_eq!(roles_held(2, &cfg, &groups), BTreeSet::from([5]));
    assert_eq!(roles_held(3, &cfg, &groups), BTreeSet::from([5, 6]));
    assert_eq!(roles_held(4, &cfg, &groups), BTreeSet::new());
}

#[test]
fn grants_are_scoped_to_the_project_and_environment() {
    let member = builtin_role(MEMBER_ROLE).unwrap();
    let editor = builtin_role(EDITOR_ROLE).unwrap();
    let viewer = builtin_role(VIEWER_ROLE).unwrap();
    let p = Permission::UpdateFeatureEnvironmentVariants;

    let grants = grants_of(Some(&viewer), [("a", std::slice::from_ref(&member))]);
    assert!(covers(&grants, p, Some("a"), Some("production")));
    assert!(!covers(&grants, p, Some("b"), Some("production")));
    assert!(!covers(&grants, Permission::UpdateApplication, None, None));

    let grants = grants_of(Some(&editor), []);
    assert!(covers(&grants, p, Some("b"), Some("production")));
    assert!(covers(&grants, Permission::UpdateApplication, None, None));
    assert!(!covers(
        &grants,
        Permission::ProjectUserAccessWrite,
        Some("b"),
        None
    ));

    let custom = Role {
        id: 6,
        name: "prod variants".into(),
        description: None,
        role_type: RoleType::Custom,
        permissions: vec![RolePermission::in_environment(p, "production")],
    };
    let grants = grants_of(None, [("a", std::slice::from_ref(&custom))]);
    assert!(covers(&grants, p, Some("a"), Some("production")));
    assert!(!covers(&grants, p, Some("a"), Some("development")));
    assert!(grants_of(None, []).is_empty());
}

#[test]
fn custom_roles_hold_only_project_permissions() {
    let envs = vec!["production".to_owned()];
    let problems = custom_role_problems(
        &[
            RolePermission::everywhere(Permission::UpdateFeature),
            RolePermission::everywhere(Permission::Admin),
            RolePermission::in_environment(Permission::UpdateFeature, "production"),
            RolePermission::in_environment(Permission::CreateFeatureStrategy, "nowhere"),
            RolePermission::in_environment(Permission::CreateFeatureStrategy, "production"),
        ],
        &envs,
    );
    let at: Vec<usize> = problems.iter().map(|(i, _)| *i).collect();
    assert_eq!(at, [1, 2, 3]);
}
