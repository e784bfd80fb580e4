//! Changing and deleting users, and finding them by name (`/api/admin/user-admin/…`).

use super::access::access_key;
use super::keys::{all_keys, key_event_data};
use super::records::{decode, decode_opt, encode};
use super::users::{decode_listing, group_key, user_key};
use super::{Authority, Need, ToggleAdmin};
use crate::access::{self, ADMIN_ROLE, EDITOR_ROLE, VIEWER_ROLE};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{
    Group, KeyAccess, Permission, ProjectAccessConfiguration, RoleType, RootRoleRef, User,
    UserUpdate,
};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::Collection;

/// The shortest query [`ToggleAdmin::search_users`] searches with, as in Unleash.
const MIN_QUERY: usize = 2;

/// What changing or deleting users needs.
fn user_needs() -> [Need<'static>; 1] {
    [Need::root(Permission::ManageUsers)]
}

fn user_not_found(id: i64) -> Error {
    Error::not_found(format!("There is no user with id {id}."))
}

impl ToggleAdmin {
    /// The users whose name contains `query`, or whose username or email starts with it,
    /// ignoring case (`GET /api/admin/user-admin/search?q=`, as Unleash searches), by id.
    /// A query shorter than two characters finds nobody, as in Unleash. Any valid key may
    /// search.
    pub async fn search_users(&self, caller: &Caller, query: &str) -> Result<Vec<User>> {
        self.permit(caller, &[]).await?;
        let query = query.trim().to_lowercase();
        if query.chars().count() < MIN_QUERY {
            return Ok(Vec::new());
        }
        let (_, mut users) = self
            .reader()
            .list_decoded::<User>(Collection::Users)
            .await?;
        let lower = |text: &Option<String>| text.as_deref().map(str::to_lowercase);
        users.retain(|u| {
            lower(&u.name).is_some_and(|n| n.contains(&query))
                || lower(&u.username).is_some_and(|n| n.starts_with(&query))
                || lower(&u.email).is_some_and(|e| e.starts_with(&query))
        });
        users.sort_by_key(|u| u.id);
        Ok(users)
    }

    /// Change the user `id` (`PUT /api/admin/user-admin/{id}`): the fields of `update` that
    /// are given and not empty replace the stored ones (as in Unleash). Needs `MANAGE_USERS`
    /// (Unleash: `ADMIN`, which Admins hold either way). The email must contain `@` and be
    /// free among the other users ([`Error::NameExists`]); the root role must be Admin,
    /// Editor or Viewer, by id (1–3) or by name. An unknown user → [`Error::NotFound`].
    /// A new root role holds from the user's keys' next call on. One `user-updated` event
    /// when something changed.
    pub async fn update_user<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        id: i64,
        update: &UserUpdate,
    ) -> Result<User> {
        let permit = self.admit(authority.into(), &user_needs()).await?;
        let given = |text: &Option<String>| {
            text.as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let (email, name) = (given(&update.email), given(&update.name));
        let mut problems = Vec::new();
        for (path, text) in [("/email", &email), ("/name", &name)] {
            if let Some(problem) = text
                .as_deref()
                .and_then(|t| display_name_problem(t, MAX_NAME))
            {
                problems.push(ErrorDetail::at(
                    path,
                    format!("the user's {} {problem}", path.trim_start_matches('/')),
                ));
            }
        }
        if email.as_deref().is_some_and(|e| !e.contains('@')) {
            problems.push(ErrorDetail::at("/email", "an email address contains an @"));
        }
        let root_role = match &update.root_role {
            None => None,
            Some(role) => match root_role_id(role) {
                Some(id) => Some(id),
                None => {
                    problems.push(ErrorDetail::at(
                        "/rootRole",
                        format!(
                            "{} is not a root role (Admin 1, Editor 2, Viewer 3)",
                            match role {
                                RootRoleRef::Id(id) => id.to_string(),
                                RootRoleRef::Name(name) => format!("\"{name}\""),
                            }
                        ),
                    ));
                    None
                }
            },
        };
        if !problems.is_empty() {
            return Err(Error::validation("The user is not valid.", problems));
        }
        let (email, name) = (&email, &name);
        self.change("update_user", permit, |tx| {
            Box::pin(async move {
                let key = user_key(id);
                let record = tx.get(&key).await?;
                let current: User =
                    decode_opt(&key, record.as_ref())?.ok_or_else(|| user_not_found(id))?;
                if let Some(email) = email {
                    let listing = tx.list(Collection::Users, "").await?;
                    let users: Vec<User> = decode_listing(Collection::Users, &listing)?;
                    if let Some(taken) = users.iter().find(|u| {
                        u.id != id
                            && (u
                                .email
                                .as_deref()
                                .is_some_and(|e| e.eq_ignore_ascii_case(email))
                                || u.username
                                    .as_deref()
                                    .is_some_and(|n| n.eq_ignore_ascii_case(email)))
                    }) {
                        return Err(Error::name_exists(format!(
                            "User {} already has this email.",
                            taken.id
                        )));
                    }
                }
                let updated = User {
                    email: email.clone().or_else(|| current.email.clone()),
                    name: name.clone().or_else(|| current.name.clone()),
                    root_role: root_role.unwrap_or(current.root_role),
                    ..current.clone()
                };
                if updated != current {
                    tx.put(key.clone(), encode(&key, &updated)?).record(
                        "user-updated",
                        None,
                        None,
                        None,
                        Some(encode(&key, &current)?),
                        Some(encode(&key, &updated)?),
                    );
                }
                Ok(updated)
            })
        })
        .await
    }

    /// Delete the user `id` (`DELETE /api/admin/user-admin/{id}`). Needs `MANAGE_USERS`
    /// (Unleash: `ADMIN`). In one atomic commit, with its events: every key acting as the
    /// user is revoked (`api-token-deleted` each), so they are refused from the next call on
    /// and no write they authorised commits after this returns; the user leaves its groups
    /// (`group-updated`) and every project role (`project-access-updated`), as Unleash wipes
    /// its permissions; then the user goes (`user-deleted`). An unknown user →
    /// [`Error::NotFound`].
    pub async fn delete_user(&self, caller: &Caller, id: i64) -> Result<()> {
        let permit = self.permit(caller, &user_needs()).await?;
        self.change("delete_user", permit, |tx| {
            Box::pin(async move {
                let key = user_key(id);
                let record = tx.get(&key).await?;
                let current: User =
                    decode_opt(&key, record.as_ref())?.ok_or_else(|| user_not_found(id))?;
                for (key_key, revision, info) in all_keys(tx.reader()).await? {
                    if info.access == (KeyAccess::User { user_id: id }) {
                        tx.expect_revision(key_key.clone(), revision)
                            .delete(key_key.clone())
                            .record(
                                "api-token-deleted",
                                None,
                                None,
                                None,
                                Some(key_event_data(&key_key, &info)?),
                                None,
                            );
                    }
                }
                let groups = tx.list(Collection::Groups, "").await?;
                for group in decode_listing::<Group>(Collection::Groups, &groups)? {
                    if !group.users.contains(&id) {
                        continue;
                    }
                    let group_key = group_key(group.id);
                    let updated = Group {
                        users: group.users.iter().copied().filter(|u| *u != id).collect(),
                        ..group.clone()
                    };
                    tx.put(group_key.clone(), encode(&group_key, &updated)?)
                        .record(
                            "group-updated",
                            None,
                            None,
                            None,
                            Some(encode(&group_key, &group)?),
                            Some(encode(&group_key, &updated)?),
                        );
                }
                let access = tx.list(Collection::ProjectAccess, "").await?;
                for (project, record) in &access.records {
                    let access_key = access_key(project);
                    let config: ProjectAccessConfiguration = decode(&access_key, &record.value)?;
                    if !config.roles.iter().any(|r| r.users.contains(&id)) {
                        continue;
                    }
                    let mut updated = config.clone();
                    for role in &mut updated.roles {
                        role.users.retain(|u| *u != id);
                    }
                    tx.put(access_key.clone(), encode(&access_key, &updated)?)
                        .record(
                            "project-access-updated",
                            Some(project),
                            None,
                            None,
                            Some(encode(&access_key, &config)?),
                            Some(encode(&access_key, &updated)?),
                        );
                }
                tx.delete(key.clone()).record(
                    "user-deleted",
                    None,
                    None,
                    None,
                    Some(encode(&key, &current)?),
                    None,
                );
                Ok(())
            })
        })
        .await
    }
}

/// The id of the root role `role` names, if it names one.
fn root_role_id(role: &RootRoleRef) -> Option<i64> {
    let id = match role {
        RootRoleRef::Id(id) => *id,
        RootRoleRef::Name(name) => match name.as_str() {
            "Admin" => ADMIN_ROLE,
            "Editor" => EDITOR_ROLE,
            "Viewer" => VIEWER_ROLE,
            _ => return None,
        },
    };
    access::builtin_role(id)
        .filter(|r| r.role_type == RoleType::Root)
        .map(|r| r.id)
}
