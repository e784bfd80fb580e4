//! The caller itself (`/api/admin/user…`): who it is, what it may do, the roles it holds, and a
//! user's own keys (Unleash's personal access tokens).

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::keys::all_keys;
use super::records::{decode_opt, project_key};
use super::users::user_key;
use super::{Authority, Need, ToggleAdmin};
use crate::access::{self, ADMIN_ROLE, VIEWER_ROLE};
use crate::auth::{Caller, NewApiKey};
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{
    ADMIN_TOKEN_USER_ID, ApiKeyInfo, CallerRole, Grant, HeldPermission, KeyAccess, Me, Permission,
    Profile, Project, Role, RoleSummary, SessionUser, User,
};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::Collection;

/// The most keys a user may hold for itself, as Unleash's `PAT_LIMIT`.
pub const MAX_PERSONAL_KEYS: usize = 10;

/// The project Unleash records every user's root role in.
const ROOT_ROLE_PROJECT: &str = "default";

/// The 403 of a key that acts as no user on a user's own keys.
fn no_user() -> Error {
    Error::NoAccess {
        message: "PATs require an authenticated user: this key acts as no user.".to_owned(),
        permissions: Vec::new(),
    }
}

/// The user `caller`'s key acts as, if it acts as one.
fn user_of(caller: &Caller) -> Option<i64> {
    match caller.info.access {
        KeyAccess::User { user_id } => Some(user_id),
        _ => None,
    }
}

impl ToggleAdmin {
    /// Who `caller` is and what it may do (`GET /api/admin/user`, Unleash's `meSchema`),
    /// never with a secret. A key acting as a user shows that user, and the permissions of
    /// its root role and of the roles it holds in each project; any other key shows itself
    /// (`isAPI`, as Unleash shows an admin token) with its grants (`ADMIN` for an admin key).
    pub async fn me(&self, caller: &Caller) -> Result<Me> {
        self.permit(caller, &[]).await?;
        let (user, grants) = match &caller.info.access {
            KeyAccess::User { user_id } => {
                let user = self.user_record(*user_id).await?;
                let grants = self.all_user_grants(*user_id).await?;
                (
                    SessionUser {
                        id: user.id,
                        is_api: false,
                        image_url: Some(user.image_url()),
                        name: user.name,
                        username: user.username,
                        email: user.email,
                        root_role: Some(user.root_role),
                        account_type: "User".to_owned(),
                        seen_at: None,
                        login_attempts: Some(0),
                        created_at: Some(user.created_at),
                    },
                    grants,
                )
            }
            access => (
                SessionUser {
                    id: ADMIN_TOKEN_USER_ID,
                    is_api: true,
                    name: None,
                    username: Some(caller.info.name.clone()),
                    email: None,
                    root_role: (*access == KeyAccess::Admin).then_some(ADMIN_ROLE),
                    account_type: "API token".to_owned(),
                    image_url: None,
                    seen_at: None,
                    login_attempts: None,
                    created_at: Some(caller.info.created_at),
                },
                match access {
                    KeyAccess::Grants { grants } => grants.clone(),
                    _ => vec![Grant::everywhere(Permission::Admin)],
                },
            ),
        };
        Ok(Me {
            user,
            permissions: grants
                .into_iter()
                .map(|g| HeldPermission {
                    permission: g.permission.to_string(),
                    project: g.project,
                    environment: g.environment,
                })
                .collect(),
            feedback: Vec::new(),
            splash: serde_json::Map::new(),
        })
    }

    /// The caller's root role and projects (`GET /api/admin/user/profile`, Unleash's
    /// `profileSchema`): for a key acting as a user, its root role and the projects where it
    /// holds a role (directly or through a group), `default` among them as in Unleash (which
    /// records a root role as held there); an admin key is Admin; a key with grants is
    /// Viewer, with the projects its grants name.
    pub async fn profile(&self, caller: &Caller) -> Result<Profile> {
        self.permit(caller, &[]).await?;
        let (role, projects) = match &caller.info.access {
            KeyAccess::User { user_id } => {
                let user = self.user_record(*user_id).await?;
                let projects = self.user_projects(*user_id).await?;
                (user.root_role, projects)
            }
            KeyAccess::Grants { grants } => {
                let projects: BTreeSet<String> = grants
                    .iter()
                    .filter_map(|g| g.project.clone())
                    .filter(|p| p != "*")
                    .collect();
                (VIEWER_ROLE, projects.into_iter().collect())
            }
            _ => (ADMIN_ROLE, Vec::new()),
        };
        let root_role: Role = access::builtin_role(role)
            .or_else(|| access::builtin_role(VIEWER_ROLE))
            .ok_or_else(|| Error::internal("the built-in Viewer role is missing", None))?;
        Ok(Profile {
            root_role: RoleSummary::from(&root_role),
            projects,
            subscriptions: Vec::new(),
            features: Vec::new(),
        })
    }

    /// The roles the caller holds (`GET /api/admin/user/roles`, Unleash's `rolesSchema`): its
    /// root role first (`project: null`), then the project roles it holds, directly or
    /// through a group, each with its project, by project. With `project`, only the roles
    /// held there follow the root role, as Unleash answers; a project that does not exist
    /// holds none (as in Unleash, no 404). Without it, those of every project (Unleash
    /// answers 400 without a project).
    ///
    /// A key acting as a user answers its user's roles; an admin key holds the root role
    /// Admin and a key with grants the root role Viewer (as [`profile`](Self::profile) shows
    /// them), and neither holds project roles: their grants are no roles. Any admin-API key
    /// may ask.
    pub async fn caller_roles(
        &self,
        caller: &Caller,
        project: Option<&str>,
    ) -> Result<Vec<CallerRole>> {
        self.permit(caller, &[]).await?;
        let (root, user) = match &caller.info.access {
            KeyAccess::User { user_id } => {
                let user = self.user_record(*user_id).await?;
                (user.root_role, Some(user))
            }
            KeyAccess::Grants { .. } => (VIEWER_ROLE, None),
            _ => (ADMIN_ROLE, None),
        };
        let root_role: Role = access::builtin_role(root)
            .or_else(|| access::builtin_role(VIEWER_ROLE))
            .ok_or_else(|| Error::internal("the built-in Viewer role is missing", None))?;
        let mut roles = vec![CallerRole {
            id: root_role.id,
            role_type: root_role.role_type,
            name: root_role.name,
            description: root_role.description,
            project: None,
        }];
        let Some(user) = user else {
            return Ok(roles);
        };
        let projects = match project {
            Some(project) => vec![project.to_owned()],
            None => {
                let (_, projects) = self
                    .reader()
                    .list_decoded::<Project>(Collection::Projects)
                    .await?;
                projects.into_iter().map(|p| p.id).collect()
            }
        };
        for project in &projects {
            for held in self.roles_in(&user, project).await? {
                roles.push(CallerRole {
                    id: held.id,
                    role_type: held.role_type,
                    name: held.name,
                    description: (!held.description.is_empty()).then_some(held.description),
                    project: Some(held.project),
                });
            }
        }
        Ok(roles)
    }

    /// The keys acting as the caller's user (`GET /api/admin/user/tokens`, Unleash's personal
    /// access tokens), oldest first, **never with their secrets**. A key that acts as no user
    /// → [`Error::NoAccess`] (as Unleash: "PATs require an authenticated user").
    pub async fn personal_api_keys(&self, caller: &Caller) -> Result<(i64, Vec<ApiKeyInfo>)> {
        self.permit(caller, &[]).await?;
        let user_id = user_of(caller).ok_or_else(no_user)?;
        let mut keys: Vec<ApiKeyInfo> = all_keys(self.reader())
            .await?
            .into_iter()
            .map(|(_, _, info)| info)
            .filter(|info| info.access == KeyAccess::User { user_id })
            .collect();
        keys.sort_by_key(|info| info.created_at);
        Ok((user_id, keys))
    }

    /// Create a key acting as the caller's user (`POST /api/admin/user/tokens`, Unleash's
    /// `createPatSchema`): it may do what the user may do, and expires at `expires_at`. The
    /// secret is returned only this once. Any key acting as a user may create its user's
    /// keys; a key that acts as no user → [`Error::NoAccess`].
    ///
    /// As in Unleash: the description must not be empty (400 at `/description`), the expiry
    /// must be in the future (400 at `/expiresAt`), a user holds at most
    /// [`MAX_PERSONAL_KEYS`] keys ([`Error::NoAccess`] past it) and no two with the same
    /// description ([`Error::NameExists`]); both are decided on the keys read in the commit's
    /// transaction. One `api-token-created` event.
    pub async fn create_personal_api_key<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        description: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(i64, NewApiKey)> {
        let permit = self.admit(authority.into(), &[]).await?;
        let user_id = user_of(permit.caller()).ok_or_else(no_user)?;
        let mut problems = Vec::new();
        if let Some(problem) = display_name_problem(description, MAX_NAME) {
            problems.push(ErrorDetail::at(
                "/description",
                format!("the description {problem}"),
            ));
        }
        if expires_at <= Utc::now() {
            problems.push(ErrorDetail::at(
                "/expiresAt",
                "The expiry date should be in future.",
            ));
        }
        if !problems.is_empty() {
            return Err(Error::validation("The token is not valid.", problems));
        }
        let description = description.trim();
        let may = |existing: &[ApiKeyInfo]| {
            let own: Vec<&ApiKeyInfo> = existing
                .iter()
                .filter(|k| k.access == KeyAccess::User { user_id })
                .collect();
            if own.len() >= MAX_PERSONAL_KEYS {
                return Err(Error::NoAccess {
                    message: format!(
                        "Too many PATs ({MAX_PERSONAL_KEYS}) already exist for this user."
                    ),
                    permissions: Vec::new(),
                });
            }
            if own.iter().any(|k| k.name == description) {
                return Err(Error::name_exists("PAT description already exists."));
            }
            Ok(())
        };
        let key = self
            .create_key(
                permit,
                description,
                KeyAccess::User { user_id },
                Some(expires_at),
                Some(&may),
            )
            .await?;
        Ok((user_id, key))
    }

    /// Revoke the key `id` acting as the caller's user (`DELETE /api/admin/user/tokens/{id}`):
    /// from the next call on it authenticates no more (the caller's own key included). A key
    /// that is not the user's (or does not exist) → [`Error::NotFound`]; a key that acts as no
    /// user → [`Error::NoAccess`].
    pub async fn revoke_personal_api_key(&self, caller: &Caller, id: uuid::Uuid) -> Result<()> {
        let permit = self.permit(caller, &[]).await?;
        let user_id = user_of(caller).ok_or_else(no_user)?;
        let may = |info: &ApiKeyInfo| {
            if info.access == (KeyAccess::User { user_id }) {
                Ok(())
            } else {
                Err(Error::not_found(format!(
                    "User {user_id} has no token with id {id}."
                )))
            }
        };
        self.revoke_key(permit, id, &may).await
    }

    /// The user `id`; a key acting as a user that is gone → [`Error::NotFound`].
    async fn user_record(&self, id: i64) -> Result<User> {
        let key = user_key(id);
        decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| Error::not_found(format!("There is no user with id {id}.")))
    }

    /// The grants of user `id` in every project.
    pub(super) async fn all_user_grants(&self, id: i64) -> Result<Vec<Grant>> {
        let (_, projects) = self
            .reader()
            .list_decoded::<Project>(Collection::Projects)
            .await?;
        let needs: Vec<Need<'_>> = projects
            .iter()
            .map(|p| Need::project(Permission::Admin, &p.id))
            .collect();
        let mut basis = Vec::new();
        self.user_grants(id, &needs, &mut basis).await
    }

    /// The projects where user `id` holds a role, directly or through a group, by id; and
    /// `default`, when that project exists, as in Unleash, which records every user's root
    /// role as held in the `default` project.
    async fn user_projects(&self, id: i64) -> Result<Vec<String>> {
        let grants = self.all_user_grants(id).await?;
        let mut projects: BTreeSet<String> = grants.into_iter().filter_map(|g| g.project).collect();
        let default = project_key(ROOT_ROLE_PROJECT);
        if self.store.get(&default).await?.is_some() {
            projects.insert(ROOT_ROLE_PROJECT.to_owned());
        }
        Ok(projects.into_iter().collect())
    }
}
