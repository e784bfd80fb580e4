//! Users, groups and roles: who can hold a role, and what holding it allows.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Permission;

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
/// permissions may be; see [`PermissionScope`](crate::access::PermissionScope)).
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

/// A role: built-in (ids 1–5) or custom (ids after [`LAST_BUILTIN_ROLE`](crate::access::LAST_BUILTIN_ROLE)).
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
    /// The id of the user's root role ([`ADMIN_ROLE`](crate::access::ADMIN_ROLE), [`EDITOR_ROLE`](crate::access::EDITOR_ROLE) or [`VIEWER_ROLE`](crate::access::VIEWER_ROLE)).
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

/// A user to create.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct NewUser {
    /// The login name; a user needs a username, an email, or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The email address (must contain `@`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The root role: Admin 1, Editor 2 or Viewer 3; Viewer when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_role: Option<i64>,
}

/// A group to create.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewGroup {
    /// 1–100 characters, unique among groups.
    pub name: String,
    /// What the group is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The ids of its members; each must be a user that exists.
    #[serde(default)]
    pub users: Vec<i64>,
}

/// A custom project role to create.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct NewRole {
    /// 1–100 characters, unique among roles (built-in ones included).
    pub name: String,
    /// What the role is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Project and environment permissions, each in every environment or in one.
    #[serde(default)]
    pub permissions: Vec<RolePermission>,
}

/// The body of `POST /api/admin/groups`, as Unleash takes it: members as
/// `[{"user": {"id": 1}}]` (plain ids `[1]` are accepted too).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupBody {
    /// The group's name.
    pub name: String,
    /// What the group is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Its members.
    #[serde(default)]
    pub users: Vec<GroupMember>,
    /// Unleash's SSO mapping and root role; accepted and ignored.
    #[serde(default)]
    pub mappings_sso: Option<Vec<String>>,
    /// Unleash's root role of the group; accepted and ignored.
    #[serde(default)]
    pub root_role: Option<Option<i64>>,
}

impl GroupBody {
    /// The group to create.
    pub fn into_new_group(self) -> NewGroup {
        NewGroup {
            users: self.users.iter().map(GroupMember::id).collect(),
            name: self.name,
            description: self.description,
        }
    }
}

/// A member of a group to create: `{"user": {"id": 1}}`, or the user id itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum GroupMember {
    /// The user's id.
    Id(i64),
    /// `{"user": {"id": 1}}`, as Unleash takes it.
    User {
        /// The user.
        user: GroupMemberUser,
    },
}

impl GroupMember {
    /// The member's user id.
    pub fn id(&self) -> i64 {
        match self {
            GroupMember::Id(id) => *id,
            GroupMember::User { user } => user.id,
        }
    }
}

/// `{"id": 1}`: the user's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct GroupMemberUser {
    /// The user's id.
    pub id: i64,
}
