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

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::auth::Permission;

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
/// `UPDATE_SEGMENT`, `CREATE_TAG_TYPE`, `UPDATE_APPLICATION`.
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
];

/// Root role Viewer: no permission at all; reading needs only a valid key.
pub const VIEWER_PERMISSIONS: &[Permission] = &[];

/// Project role Owner: every project permission, in every environment of the project.
///
/// `UPDATE_PROJECT`, `CREATE_FEATURE`, `UPDATE_FEATURE`, `DELETE_FEATURE`,
/// `UPDATE_FEATURE_ENVIRONMENT`, `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`,
/// `CREATE_FEATURE_STRATEGY`, `UPDATE_FEATURE_STRATEGY`, `DELETE_FEATURE_STRATEGY`,
/// `UPDATE_FEATURE_DEPENDENCY`, `PROJECT_USER_ACCESS_WRITE`, `PROJECT_GROUP_ACCESS_WRITE`.
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
];

/// Project role Member: feature work in the project, in every environment of it; not the
/// project's settings or access.
///
/// `CREATE_FEATURE`, `UPDATE_FEATURE`, `DELETE_FEATURE`, `UPDATE_FEATURE_ENVIRONMENT`,
/// `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`, `CREATE_FEATURE_STRATEGY`,
/// `UPDATE_FEATURE_STRATEGY`, `DELETE_FEATURE_STRATEGY`, `UPDATE_FEATURE_DEPENDENCY`.
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
];

/// Where a role applies, by Unleash's role types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub enum RoleType {
    /// A root role (Admin, Editor, Viewer): held by a user everywhere.
    Root,
    /// A built-in project role (Owner, Member): held in a project.
    Project,
    /// A custom project role: held in a project.
    Custom,
}

impl RoleType {
    /// True for roles that are held in a project (built-in project roles and custom ones).
    pub fn is_project_role(self) -> bool {
        matches!(self, RoleType::Project | RoleType::Custom)
    }
}

/// One permission of a role, optionally limited to an environment (only environment
/// permissions may be; see [`PermissionScope`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct RolePermission {
    /// The permission.
    #[serde(rename = "name")]
    #[cfg_attr(feature = "http", schema(value_type = String))]
    pub permission: Permission,
    /// The environment it is limited to; `None` for every environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl RolePermission {
    /// `permission` in every environment.
    pub fn everywhere(permission: Permission) -> Self {
        Self {
            permission,
            environment: None,
        }
    }

    /// `permission` in `environment` only.
    pub fn in_environment(permission: Permission, environment: impl Into<String>) -> Self {
        Self {
            permission,
            environment: Some(environment.into()),
        }
    }
}

/// A role: built-in (ids 1–5) or custom (ids after [`LAST_BUILTIN_ROLE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Role {
    /// The role's id.
    pub id: i64,
    /// Its name, unique among roles.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where it applies.
    #[serde(rename = "type")]
    pub role_type: RoleType,
    /// What holding it allows.
    pub permissions: Vec<RolePermission>,
}

/// A user that keys can act as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct User {
    /// The user's id, assigned by the store: 1, 2, 3 …
    pub id: i64,
    /// The login name; a user has a username, an email, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The email address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The id of the user's root role ([`ADMIN_ROLE`], [`EDITOR_ROLE`] or [`VIEWER_ROLE`]).
    pub root_role: i64,
    /// When the user was created.
    pub created_at: DateTime<Utc>,
}

/// A group of users; a project role given to a group is held by each of its members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Group {
    /// The group's id, assigned by the store: 1, 2, 3 …
    pub id: i64,
    /// Its name, unique among groups.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The ids of its members, ascending.
    #[serde(default)]
    pub users: Vec<i64>,
    /// When the group was created.
    pub created_at: DateTime<Utc>,
}

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

/// The built-in role with id `id` (1–5), if it is one.
pub fn builtin_role(id: i64) -> Option<Role> {
    let (name, description, role_type, permissions) = match id {
        ADMIN_ROLE => (
            "Admin",
            "Users with the root role Admin can do everything.",
            RoleType::Root,
            ADMIN_PERMISSIONS,
        ),
        EDITOR_ROLE => (
            "Editor",
            "Users with the root role Editor can work on features in every project and manage shared definitions and applications.",
            RoleType::Root,
            EDITOR_PERMISSIONS,
        ),
        VIEWER_ROLE => (
            "Viewer",
            "Users with the root role Viewer can only read.",
            RoleType::Root,
            VIEWER_PERMISSIONS,
        ),
        OWNER_ROLE => (
            "Owner",
            "Users with the project role Owner can do everything in the project, including managing its access.",
            RoleType::Project,
            OWNER_PERMISSIONS,
        ),
        MEMBER_ROLE => (
            "Member",
            "Users with the project role Member can work on the project's features.",
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
