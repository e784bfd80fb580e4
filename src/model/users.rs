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

/// The user id Unleash gives the author of what an admin token does (its "Unleash Admin
/// Token" user); here, of what any key acting as no user does.
pub const ADMIN_TOKEN_USER_ID: i64 = -42;

/// The user id Unleash gives the service itself as an author ("Unleash System").
pub const SYSTEM_USER_ID: i64 = -1337;

impl User {
    /// The user's picture, as Unleash makes one: a Gravatar of its email, else its username,
    /// else its id.
    pub fn image_url(&self) -> String {
        let ident = self
            .email
            .clone()
            .or_else(|| self.username.clone())
            .unwrap_or_else(|| self.id.to_string());
        gravatar_url(&ident)
    }
}

/// The Gravatar image Unleash shows for `ident` (an email, a username, a name): the SHA-256
/// of `ident` trimmed and in lower case (as Unleash, which keeps the case only of an `ident`
/// starting with `@`).
pub fn gravatar_url(ident: &str) -> String {
    use sha2::Digest;
    let ident = if ident.starts_with('@') {
        ident.trim().to_owned()
    } else {
        ident.trim().to_lowercase()
    };
    let digest = sha2::Sha256::digest(ident.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("https://gravatar.com/avatar/{hex}?s=42&d=retro&r=g")
}

/// A user as the HTTP API shows one (Unleash's `userSchema`): the user, with what Unleash
/// adds. People sign in elsewhere, so `seenAt` and `scimId` are always `null` and
/// `loginAttempts` 0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct UserView {
    /// The user.
    #[serde(flatten)]
    pub user: User,
    /// Always false: a user is not an API key.
    #[serde(rename = "isAPI")]
    pub is_api: bool,
    /// Always `User`.
    pub account_type: String,
    /// Its picture (see [`User::image_url`]).
    pub image_url: String,
    /// Always `null`.
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub seen_at: Option<DateTime<Utc>>,
    /// Always 0.
    pub login_attempts: u32,
    /// Always `null`.
    pub scim_id: Option<String>,
}

impl From<User> for UserView {
    fn from(user: User) -> Self {
        Self {
            image_url: user.image_url(),
            user,
            is_api: false,
            account_type: "User".to_owned(),
            seen_at: None,
            login_attempts: 0,
            scim_id: None,
        }
    }
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

/// A role in short, as Unleash shows a user's root role (`roleSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct RoleSummary {
    /// The role's id.
    pub id: i64,
    /// Where it applies: `root`, `project` or `custom`.
    #[serde(rename = "type")]
    pub role_type: RoleType,
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl From<&Role> for RoleSummary {
    fn from(role: &Role) -> Self {
        RoleSummary {
            id: role.id,
            role_type: role.role_type,
            name: role.name.clone(),
            description: role.description.clone(),
        }
    }
}

/// A role the caller holds, as `GET /api/admin/user/roles` lists it (Unleash's `roleSchema`):
/// its root role with `project: null`, and each project role with the project it is held in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct CallerRole {
    /// The role's id.
    pub id: i64,
    /// Where it applies: `root`, `project` or `custom`.
    #[serde(rename = "type")]
    pub role_type: RoleType,
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The project it is held in; `null` for the root role, which holds everywhere.
    pub project: Option<String>,
}

/// `GET /api/admin/user/roles` (Unleash's `rolesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct CallerRoles {
    /// Always 1.
    pub version: u32,
    /// The roles: the root role first, then the project roles by project.
    pub roles: Vec<CallerRole>,
}

/// Who the caller is, as `GET /api/admin/user` shows it (the `user` of Unleash's
/// `meSchema`): for a key acting as a user, that user; for any other key, the key itself
/// (`isAPI`, id -42 as Unleash's admin token user, the key's name as `username`). Never a
/// secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct SessionUser {
    /// The user's id; -42 for a key that acts as no user.
    pub id: i64,
    /// True for a key that acts as no user.
    #[serde(rename = "isAPI")]
    pub is_api: bool,
    /// The display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The login name (a key's name for a key that acts as no user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The email address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The root role's id (1 for an admin key; absent for a key with explicit grants).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_role: Option<i64>,
    /// `User`, or `API token` for a key that acts as no user.
    pub account_type: String,
    /// The user's picture (see [`User::image_url`]); absent for a key that acts as no user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    /// Always `null`: people sign in elsewhere.
    #[serde(default)]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub seen_at: Option<DateTime<Utc>>,
    /// Always 0 for a user (people sign in elsewhere); absent for a key that acts as no user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub login_attempts: Option<u32>,
    /// When the user (or the key) was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<DateTime<Utc>>,
}

/// One permission the caller holds, as `meSchema` lists them (`permissionSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct HeldPermission {
    /// The permission's name.
    pub permission: String,
    /// The project it is held in; absent when held in every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The environment it is held in; absent when held in every environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

/// `GET /api/admin/user` (Unleash's `meSchema`): the caller and what it may do.
/// `feedback` and `splash` (Unleash's UI state) are always empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Me {
    /// The caller.
    pub user: SessionUser,
    /// What it may do: its root role's permissions, and its project roles' in each project.
    pub permissions: Vec<HeldPermission>,
    /// Always empty.
    #[cfg_attr(feature = "http", schema(value_type = Vec<Object>))]
    pub feedback: Vec<serde_json::Value>,
    /// Always empty.
    #[cfg_attr(feature = "http", schema(value_type = Object))]
    pub splash: serde_json::Map<String, serde_json::Value>,
}

/// `GET /api/admin/user/profile` (Unleash's `profileSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Profile {
    /// The caller's root role (Admin for an admin key, Viewer for a key with explicit
    /// grants).
    pub root_role: RoleSummary,
    /// The projects where the caller holds a role, directly or through a group, and
    /// `default` for a user, as Unleash records every root role there (for a key with
    /// grants: the projects its grants name), by id.
    pub projects: Vec<String>,
    /// Always empty: this service sends no email (Unleash subscribes every user to its
    /// productivity report).
    pub subscriptions: Vec<String>,
    /// Always empty (Unleash's favourite features).
    #[cfg_attr(feature = "http", schema(value_type = Vec<Object>))]
    pub features: Vec<serde_json::Value>,
}

/// A root role as Unleash takes it in `updateUserSchema`: its id, or its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub enum RootRoleRef {
    /// `1`, `2` or `3`.
    Id(i64),
    /// `Admin`, `Editor` or `Viewer`.
    Name(String),
}

/// The body of `PUT /api/admin/user-admin/{id}` (Unleash's `updateUserSchema`): the fields to
/// change; absent or empty ones keep their value.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct UserUpdate {
    /// The new email address (must contain `@`, unique among users).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// The new display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The new root role, by id or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_role: Option<RootRoleRef>,
}

/// One permission in a user's access overview (Unleash's `userAccessOverviewSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct PermissionOverview {
    /// A stable number for the permission (its position among the permissions, from 1).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its name for people.
    pub display_name: String,
    /// `root`, `project` or `environment`.
    #[serde(rename = "type")]
    pub permission_type: String,
    /// The environment it was checked in, for environment permissions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// Whether the user holds it (in the project and environment asked about).
    pub has_permission: bool,
}

/// Every permission, grouped by where it applies, each with whether the user holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct AccessOverview {
    /// Root permissions.
    pub root: Vec<PermissionOverview>,
    /// Project permissions, checked in the project asked about.
    pub project: Vec<PermissionOverview>,
    /// Environment permissions, checked in the project and environment asked about.
    pub environment: Vec<PermissionOverview>,
}

/// A project role a user holds, with its permissions, as the access overview lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct HeldRole {
    /// The role's id.
    pub id: i64,
    /// `project` or `custom`.
    #[serde(rename = "type")]
    pub role_type: RoleType,
    /// Its name.
    pub name: String,
    /// What it is for (empty when it says nothing).
    pub description: String,
    /// The project it is held in.
    pub project: String,
    /// Its permissions.
    pub permissions: Vec<RolePermission>,
}

/// `GET /api/admin/user-admin/{id}/permissions` (Unleash's `userAccessOverviewSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct UserAccessOverview {
    /// Every permission, with whether the user holds it.
    pub overview: AccessOverview,
    /// The user.
    pub user: User,
    /// Its root role.
    pub root_role: RoleSummary,
    /// The roles it holds in the project asked about (none when no project was named).
    pub project_roles: Vec<HeldRole>,
}
