//! Users, groups, roles and who may do what: the pure rules of project access.
//!
//! Nothing here touches a store. The facade reads users, groups, roles and a project's
//! assignment, and hands them to these functions:
//!
//! * [`builtin_role`]: the five roles every deployment has, with Unleash's ids and permission
//!   sets;
//! * [`validate_configuration`]: is a [`ProjectAccessConfiguration`] acceptable, and its
//!   normalised form;
//! * [`roles_held`] and [`grants_of`]: what a user may do, from its root role and the project
//!   roles it holds directly or through its groups;
//! * [`AccessChange`]: what a new configuration changes, hence which permissions setting it
//!   needs, including the no-escalation rule.
//!
//! [`ProjectAccessConfiguration`]: crate::model::ProjectAccessConfiguration

mod config;
mod grants;
#[cfg(test)]
mod tests;

use crate::model::{Permission, Role, RolePermission, RoleType};

pub use config::{
    AccessChange, KnownIds, escalation_requirements, normalise, validate_configuration,
};
pub use grants::{grants_of, roles_held};

/// Id of the root role Admin.
pub const ADMIN_ROLE: i64 = 1;
/// Id of the root role Editor.
pub const EDITOR_ROLE: i64 = 2;
/// Id of the root role Viewer.
pub const VIEWER_ROLE: i64 = 3;
/// Id of the project role Owner.
pub const OWNER_ROLE: i64 = 4;
/// Id of the project role Member.
pub const MEMBER_ROLE: i64 = 5;
/// The highest id of a built-in role: custom roles are numbered after it.
pub const LAST_BUILTIN_ROLE: i64 = MEMBER_ROLE;

/// Root role Admin: `ADMIN`, which satisfies every check.
pub const ADMIN_PERMISSIONS: &[Permission] = &[Permission::Admin];

/// Root role Editor, as in a stock Unleash install: everything about features in every
/// project and environment, plus the shared definitions (strategies, context fields,
/// segments, tag types), applications and creating projects. Not: environments, project
/// settings, project access, users — those stay with Admin and project Owners.
///
/// `CREATE_PROJECT`, `CREATE_FEATURE`, `UPDATE_FEATURE`, `DELETE_FEATURE`,
/// `UPDATE_FEATURE_ENVIRONMENT`, `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`,
/// `CREATE_FEATURE_STRATEGY`, `UPDATE_FEATURE_STRATEGY`, `DELETE_FEATURE_STRATEGY`,
/// `UPDATE_FEATURE_DEPENDENCY`, `CREATE_STRATEGY`, `CREATE_CONTEXT_FIELD`, `UPDATE_CONTEXT_FIELD`, `CREATE_SEGMENT`,
/// `UPDATE_SEGMENT`, `CREATE_TAG_TYPE`, `UPDATE_APPLICATION`, and a project's keys:
/// `CREATE_PROJECT_API_TOKEN`, `READ_PROJECT_API_TOKEN`, `DELETE_PROJECT_API_TOKEN`.
pub const EDITOR_PERMISSIONS: &[Permission] = &[
    Permission::CreateProject,
    Permission::CreateFeature,
    Permission::UpdateFeature,
    Permission::DeleteFeature,
    Permission::UpdateFeatureEnvironment,
    Permission::UpdateFeatureEnvironmentVariants,
    Permission::CreateFeatureStrategy,
    Permission::UpdateFeatureStrategy,
    Permission::DeleteFeatureStrategy,
    Permission::UpdateFeatureDependency,
    Permission::CreateStrategy,
    Permission::CreateContextField,
    Permission::UpdateContextField,
    Permission::CreateSegment,
    Permission::UpdateSegment,
    Permission::CreateTagType,
    Permission::UpdateApplication,
    Permission::CreateProjectApiToken,
    Permission::ReadProjectApiToken,
    Permission::DeleteProjectApiToken,
];

/// Root role Viewer: no permission at all; reading needs only a valid key.
pub const VIEWER_PERMISSIONS: &[Permission] = &[];

/// Project role Owner: every project permission, in every environment of the project.
///
/// `UPDATE_PROJECT`, `CREATE_FEATURE`, `UPDATE_FEATURE`, `DELETE_FEATURE`,
/// `UPDATE_FEATURE_ENVIRONMENT`, `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`,
/// `CREATE_FEATURE_STRATEGY`, `UPDATE_FEATURE_STRATEGY`, `DELETE_FEATURE_STRATEGY`,
/// `UPDATE_FEATURE_DEPENDENCY`, `PROJECT_USER_ACCESS_WRITE`, `PROJECT_GROUP_ACCESS_WRITE`,
/// `CREATE_PROJECT_API_TOKEN`, `READ_PROJECT_API_TOKEN`, `DELETE_PROJECT_API_TOKEN`.
pub const OWNER_PERMISSIONS: &[Permission] = &[
    Permission::UpdateProject,
    Permission::CreateFeature,
    Permission::UpdateFeature,
    Permission::DeleteFeature,
    Permission::UpdateFeatureEnvironment,
    Permission::UpdateFeatureEnvironmentVariants,
    Permission::CreateFeatureStrategy,
    Permission::UpdateFeatureStrategy,
    Permission::DeleteFeatureStrategy,
    Permission::UpdateFeatureDependency,
    Permission::ProjectUserAccessWrite,
    Permission::ProjectGroupAccessWrite,
    Permission::CreateProjectApiToken,
    Permission::ReadProjectApiToken,
    Permission::DeleteProjectApiToken,
];

/// Project role Member: feature work in the project, in every environment of it; not the
/// project's settings or access.
///
/// `CREATE_FEATURE`, `UPDATE_FEATURE`, `DELETE_FEATURE`, `UPDATE_FEATURE_ENVIRONMENT`,
/// `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`, `CREATE_FEATURE_STRATEGY`,
/// `UPDATE_FEATURE_STRATEGY`, `DELETE_FEATURE_STRATEGY`, `UPDATE_FEATURE_DEPENDENCY`,
/// `CREATE_PROJECT_API_TOKEN`, `READ_PROJECT_API_TOKEN`, `DELETE_PROJECT_API_TOKEN` (as in
/// Unleash, members manage the project's keys).
pub const MEMBER_PERMISSIONS: &[Permission] = &[
    Permission::CreateFeature,
    Permission::UpdateFeature,
    Permission::DeleteFeature,
    Permission::UpdateFeatureEnvironment,
    Permission::UpdateFeatureEnvironmentVariants,
    Permission::CreateFeatureStrategy,
    Permission::UpdateFeatureStrategy,
    Permission::DeleteFeatureStrategy,
    Permission::UpdateFeatureDependency,
    Permission::CreateProjectApiToken,
    Permission::ReadProjectApiToken,
    Permission::DeleteProjectApiToken,
];

/// Where a permission can be granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PermissionScope {
    /// Only everywhere: through a root role.
    Root,
    /// In a project (through a project role).
    Project,
    /// In a project, optionally limited to one environment.
    Environment,
}

/// Where `permission` can be granted, as Unleash's permission types say.
pub fn permission_scope(permission: Permission) -> PermissionScope {
    match permission {
        Permission::UpdateFeatureEnvironment
        | Permission::UpdateFeatureEnvironmentVariants
        | Permission::CreateFeatureStrategy
        | Permission::UpdateFeatureStrategy
        | Permission::DeleteFeatureStrategy => PermissionScope::Environment,
        Permission::UpdateProject
        | Permission::CreateFeature
        | Permission::UpdateFeature
        | Permission::DeleteFeature
        | Permission::UpdateFeatureDependency
        | Permission::CreateProjectApiToken
        | Permission::ReadProjectApiToken
        | Permission::DeleteProjectApiToken
        | Permission::ProjectUserAccessWrite
        | Permission::ProjectGroupAccessWrite => PermissionScope::Project,
        Permission::Admin
        | Permission::CreateProject
        | Permission::CreateEnvironment
        | Permission::CreateStrategy
        | Permission::CreateContextField
        | Permission::UpdateContextField
        | Permission::CreateSegment
        | Permission::UpdateSegment
        | Permission::CreateTagType
        | Permission::UpdateApplication
        | Permission::ManageUsers => PermissionScope::Root,
    }
}

/// The built-in role with id `id` (1–5), if it is one. Names and descriptions are Unleash's
/// (the Editor's says what an Editor may do here: Unleash's also makes Editors owners of the
/// projects they create, which this crate does not).
pub fn builtin_role(id: i64) -> Option<Role> {
    let (name, description, role_type, permissions) = match id {
        ADMIN_ROLE => (
            "Admin",
            "Users with the root admin role have superuser access to Unleash and can perform any operation within the Unleash platform.",
            RoleType::Root,
            ADMIN_PERMISSIONS,
        ),
        EDITOR_ROLE => (
            "Editor",
            "Users with the root editor role have access to most features in Unleash, but can not manage users and roles in the root scope. They can work on the features of every project and manage shared definitions and applications.",
            RoleType::Root,
            EDITOR_PERMISSIONS,
        ),
        VIEWER_ROLE => (
            "Viewer",
            "Users with the root viewer role can only read root resources in Unleash. Viewers can be added to specific projects as project members. Users with the viewer role may not view API tokens.",
            RoleType::Root,
            VIEWER_PERMISSIONS,
        ),
        OWNER_ROLE => (
            "Owner",
            "Users with the project owner role have full control over the project, and can add and manage other users within the project context, manage feature toggles within the project, and control advanced project features like archiving and deleting the project.",
            RoleType::Project,
            OWNER_PERMISSIONS,
        ),
        MEMBER_ROLE => (
            "Member",
            "Users with the project member role are allowed to view, create, and update feature toggles within a project, but have limited permissions in regards to managing the project's user access and can not archive or delete the project.",
            RoleType::Project,
            MEMBER_PERMISSIONS,
        ),
        _ => return None,
    };
    Some(Role {
        id,
        name: name.to_owned(),
        description: Some(description.to_owned()),
        role_type,
        permissions: permissions
            .iter()
            .map(|&p| RolePermission::everywhere(p))
            .collect(),
    })
}

/// The five built-in roles, by id.
pub fn builtin_roles() -> Vec<Role> {
    (1..=LAST_BUILTIN_ROLE).filter_map(builtin_role).collect()
}

/// What is wrong with a custom role's permissions, one `(index, message)` per problem:
/// only project and environment permissions can be in a project role, only environment
/// permissions may name an environment, and a named environment must be one of
/// `environments`.
pub fn custom_role_problems(
    permissions: &[RolePermission],
    environments: &[String],
) -> Vec<(usize, String)> {
    let mut problems = Vec::new();
    for (i, entry) in permissions.iter().enumerate() {
        let scope = permission_scope(entry.permission);
        if scope == PermissionScope::Root {
            problems.push((
                i,
                format!(
                    "{} is a root permission; a project role can only hold project and environment permissions",
                    entry.permission
                ),
            ));
            continue;
        }
        if let Some(environment) = &entry.environment {
            if scope != PermissionScope::Environment {
                problems.push((
                    i,
                    format!(
                        "{} applies to the whole project and cannot be limited to an environment",
                        entry.permission
                    ),
                ));
            } else if !environments.iter().any(|e| e == environment) {
                problems.push((
                    i,
                    format!("there is no environment named \"{environment}\""),
                ));
            }
        }
    }
    problems
}
