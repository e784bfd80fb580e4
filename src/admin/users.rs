//! Users, groups and custom roles: who can hold a role.
//!
//! Ids are positive integers handed out by a counter record in [`Collection::Sequences`],
//! which each creation advances under a precondition: two concurrent creations can never get
//! the same id, whatever the store.

use std::collections::BTreeSet;

use chrono::Utc;
use serde::Serialize;
use serde_json::json;

use super::records::{decode, decode_opt, encode};
use super::{Need, ToggleAdmin, Tx};
use crate::access::{self, LAST_BUILTIN_ROLE, VIEWER_ROLE};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::Permission;
use crate::model::{Group, NewGroup, NewRole, NewUser, Role, RoleType, User};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::{Collection, Key, Listing};

pub(crate) fn user_key(id: i64) -> Key {
    Key::new(Collection::Users, id.to_string())
}

pub(crate) fn group_key(id: i64) -> Key {
    Key::new(Collection::Groups, id.to_string())
}

pub(crate) fn role_key(id: i64) -> Key {
    Key::new(Collection::Roles, id.to_string())
}

/// The next id a counter hands out (the counter's record was read through the transaction,
/// so two creations can never claim the same id).
struct NextId {
    id: i64,
    key: Key,
}

impl NextId {
    /// The next id of counter `name`, never at or below `floor`.
    async fn read(tx: &Tx<'_>, name: &str, floor: i64) -> Result<NextId> {
        let key = Key::new(Collection::Sequences, name);
        let record = tx.get(&key).await?;
        let last: i64 = decode_opt(&key, record.as_ref())?.unwrap_or(0);
        Ok(NextId {
            id: last.max(floor) + 1,
            key,
        })
    }

    /// Claim the id and create `created` under it at `key` (which must still be free), with
    /// its `event_type` event.
    fn create<T: Serialize>(
        &self,
        tx: &mut Tx<'_>,
        key: Key,
        created: &T,
        event_type: &str,
    ) -> Result<()> {
        tx.put(self.key.clone(), json!(self.id));
        let value = encode(&key, created)?;
        tx.create(key, value, event_type);
        Ok(())
    }
}

impl ToggleAdmin {
    /// Create a user. Needs `MANAGE_USERS` (Admins have it).
    ///
    /// The user needs a username or an email (with an `@`); both are unique among users,
    /// ignoring case ([`Error::NameExists`]). The root role must be Admin 1, Editor 2 or
    /// Viewer 3 (default). The id is the next of the `users` counter: 1, 2, 3 …
    pub async fn create_user(&self, caller: &Caller, user: &NewUser) -> Result<User> {
        let permit = self
            .permit(caller, &[Need::root(Permission::ManageUsers)])
            .await?;
        let trimmed = |s: &Option<String>| {
            s.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let (username, email, name) = (
            trimmed(&user.username),
            trimmed(&user.email),
            trimmed(&user.name),
        );
        let root_role = user.root_role.unwrap_or(VIEWER_ROLE);
        let mut problems = Vec::new();
        for (path, text) in [
            ("username", &user.username),
            ("email", &user.email),
            ("name", &user.name),
        ] {
            if let Some(text) = text
                && !text.trim().is_empty()
                && let Some(problem) = display_name_problem(text, MAX_NAME)
            {
                problems.push(ErrorDetail::at(
                    path,
                    format!("the user's {path} {problem}"),
                ));
            }
        }
        if username.is_none() && email.is_none() {
            problems.push(ErrorDetail::at(
                "username",
                "a user needs a username or an email",
            ));
        }
        if email.as_deref().is_some_and(|e| !e.contains('@')) {
            problems.push(ErrorDetail::at("email", "an email address contains an @"));
        }
        if access::builtin_role(root_role).is_none_or(|r| r.role_type != RoleType::Root) {
            problems.push(ErrorDetail::at(
                "rootRole",
                format!("{root_role} is not a root role (Admin 1, Editor 2, Viewer 3)"),
            ));
        }
        if !problems.is_empty() {
            return Err(Error::validation("The user is not valid.", problems));
        }
        let (username, email, name) = (&username, &email, &name);
        self.change("create_user", permit, |tx| Box::pin(async move {
            let existing = tx.list(Collection::Users, "").await?;
            let users: Vec<User> = decode_listing(Collection::Users, &existing)?;
            let same = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b));
            if let Some(taken) = users
                .iter()
                .find(|u| same(&u.username, username) || same(&u.email, email))
            {
                return Err(Error::name_exists(format!(
                    "User {} already has this username or email.",
                    taken.id
                )));
            }
            let next = NextId::read(tx, "users", 0).await?;
            let created = User {
                id: next.id,
                username: username.clone(),
                email: email.clone(),
                name: name.clone(),
                root_role,
                created_at: Utc::now(),
            };
            next.create(tx, user_key(created.id), &created, "user-created")?;
            Ok(created)
        }))
        .await
    }

    /// The user `id`. Any valid key may read it.
    pub async fn user(&self, caller: &Caller, id: i64) -> Result<User> {
        self.require(caller, &[]).await?;
        self.numbered(user_key(id), "user", id).await
    }

    /// Every user, by id. Any valid key may read them.
    pub async fn users(&self, caller: &Caller) -> Result<Vec<User>> {
        self.require(caller, &[]).await?;
        self.all_numbered(Collection::Users, Vec::new(), |u: &User| u.id)
            .await
    }

    /// Create a group. Needs `MANAGE_USERS`. The name is 1–100 characters and unique among
    /// groups ([`Error::NameExists`]); every member must be a user that exists (one 400
    /// listing the unknown ids); repeated members are merged.
    pub async fn create_group(&self, caller: &Caller, group: &NewGroup) -> Result<Group> {
        let permit = self
            .permit(caller, &[Need::root(Permission::ManageUsers)])
            .await?;
        let name = trimmed_name(&group.name, "group")?;
        self.change("create_group", permit, |tx| {
            Box::pin(async move {
                let existing = tx.list(Collection::Groups, "").await?;
                let groups: Vec<Group> = decode_listing(Collection::Groups, &existing)?;
                if groups.iter().any(|g| g.name == name) {
                    return Err(Error::name_exists(format!(
                        "A group named \"{name}\" already exists."
                    )));
                }
                let users = existing_users(tx, &group.users).await?;
                let next = NextId::read(tx, "groups", 0).await?;
                let created = Group {
                    id: next.id,
                    name: name.to_owned(),
                    description: group.description.clone(),
                    users,
                    created_at: Utc::now(),
                };
                next.create(tx, group_key(created.id), &created, "group-created")?;
                Ok(created)
            })
        })
        .await
    }

    /// Replace the members of group `id`. Needs `MANAGE_USERS`. Every member must be a user
    /// that exists; the change takes effect at the members' next permission check.
    pub async fn set_group_users(&self, caller: &Caller, id: i64, users: &[i64]) -> Result<Group> {
        let permit = self
            .permit(caller, &[Need::root(Permission::ManageUsers)])
            .await?;
        self.change("set_group_users", permit, |tx| {
            Box::pin(async move {
                let key = group_key(id);
                let record = tx.get(&key).await?;
                let current: Group = decode_opt(&key, record.as_ref())?
                    .ok_or_else(|| Error::not_found(format!("There is no group with id {id}.")))?;
                let members = existing_users(tx, users).await?;
                let updated = Group {
                    users: members,
                    ..current.clone()
                };
                tx.put(key.clone(), encode(&key, &updated)?).record(
                    "group-updated",
                    None,
                    None,
                    None,
                    Some(encode(&key, &current)?),
                    Some(encode(&key, &updated)?),
                );
                Ok(updated)
            })
        })
        .await
    }

    /// The group `id`. Any valid key may read it.
    pub async fn group(&self, caller: &Caller, id: i64) -> Result<Group> {
        self.require(caller, &[]).await?;
        self.numbered(group_key(id), "group", id).await
    }

    /// Every group, by id. Any valid key may read them.
    pub async fn groups(&self, caller: &Caller) -> Result<Vec<Group>> {
        self.require(caller, &[]).await?;
        self.all_numbered(Collection::Groups, Vec::new(), |g: &Group| g.id)
            .await
    }

    /// Create a custom project role. Needs `MANAGE_USERS`.
    ///
    /// The name is 1–100 characters and unique among roles, built-in ones included, ignoring
    /// case ([`Error::NameExists`]). Each permission must be a project or environment
    /// permission; only environment permissions may name an environment, which must exist.
    /// Ids continue after the built-in roles: 6, 7, 8 …
    pub async fn create_role(&self, caller: &Caller, role: &NewRole) -> Result<Role> {
        let permit = self
            .permit(caller, &[Need::root(Permission::ManageUsers)])
            .await?;
        let name = trimmed_name(&role.name, "role")?;
        self.change("create_role", permit, |tx| {
            Box::pin(async move {
                let environments = tx.list(Collection::Environments, "").await?;
                let names: Vec<String> = environments
                    .records
                    .iter()
                    .map(|(id, _)| id.clone())
                    .collect();
                let problems = access::custom_role_problems(&role.permissions, &names);
                if !problems.is_empty() {
                    let details = problems
                        .into_iter()
                        .map(|(i, message)| ErrorDetail::at(format!("permissions[{i}]"), message))
                        .collect();
                    return Err(Error::validation("The role is not valid.", details));
                }
                let existing = tx.list(Collection::Roles, "").await?;
                let mut roles: Vec<Role> = decode_listing(Collection::Roles, &existing)?;
                roles.extend(access::builtin_roles());
                if roles.iter().any(|r| r.name.eq_ignore_ascii_case(name)) {
                    return Err(Error::name_exists(format!(
                        "A role named \"{name}\" already exists."
                    )));
                }
                let mut permissions = role.permissions.clone();
                permissions.sort();
                permissions.dedup();
                let next = NextId::read(tx, "roles", LAST_BUILTIN_ROLE).await?;
                let created = Role {
                    id: next.id,
                    name: name.to_owned(),
                    description: role.description.clone(),
                    role_type: RoleType::Custom,
                    permissions,
                };
                next.create(tx, role_key(created.id), &created, "role-created")?;
                Ok(created)
            })
        })
        .await
    }

    /// The role `id`, built-in or custom. Any valid key may read it.
    pub async fn role(&self, caller: &Caller, id: i64) -> Result<Role> {
        self.require(caller, &[]).await?;
        if let Some(role) = access::builtin_role(id) {
            return Ok(role);
        }
        self.numbered(role_key(id), "role", id).await
    }

    /// Every role, built-in ones first, by id. Any valid key may read them.
    pub async fn roles(&self, caller: &Caller) -> Result<Vec<Role>> {
        self.require(caller, &[]).await?;
        self.all_numbered(Collection::Roles, access::builtin_roles(), |r: &Role| r.id)
            .await
    }

    /// The record of a numbered thing (a user, group or role) at `key`, or a 404 naming it
    /// by `noun` and `id`.
    async fn numbered<T: serde::de::DeserializeOwned>(
        &self,
        key: Key,
        noun: &str,
        id: i64,
    ) -> Result<T> {
        decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| Error::not_found(format!("There is no {noun} with id {id}.")))
    }

    /// `first` and every record of `collection`, sorted by their ids.
    async fn all_numbered<T: serde::de::DeserializeOwned>(
        &self,
        collection: Collection,
        mut first: Vec<T>,
        id: impl Fn(&T) -> i64,
    ) -> Result<Vec<T>> {
        let listing = self.store.list(collection, "").await?;
        first.extend(decode_listing::<T>(collection, &listing)?);
        first.sort_by_key(id);
        Ok(first)
    }
}

/// `ids` ascending without repeats, if each is a user that exists (read through `tx`, so the
/// commit requires that they still do). Otherwise one 400 naming every unknown id.
async fn existing_users(tx: &Tx<'_>, ids: &[i64]) -> Result<Vec<i64>> {
    let unique: BTreeSet<i64> = ids.iter().copied().collect();
    let keys: Vec<Key> = unique.iter().map(|id| user_key(*id)).collect();
    let found = tx.reader().get_all(&keys).await?;
    let mut details = Vec::new();
    let mut unknown = Vec::new();
    for (id, record) in unique.iter().zip(&found) {
        if record.is_none() {
            unknown.push(id.to_string());
            let at = ids.iter().position(|u| u == id).unwrap_or_default();
            details.push(ErrorDetail::at(
                format!("users[{at}]"),
                format!("there is no user with id {id}"),
            ));
        }
    }
    if !details.is_empty() {
        return Err(Error::validation(
            format!("These user ids do not exist: {}.", unknown.join(", ")),
            details,
        ));
    }
    Ok(unique.into_iter().collect())
}

/// A group's or role's name (`what`), trimmed: 1 to 100 characters, free of control
/// characters. Groups and roles take names by the same rule.
fn trimmed_name<'a>(name: &'a str, what: &str) -> Result<&'a str> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Error::invalid_at(
            "name",
            format!("a {what}'s name must be 1 to 100 characters"),
        ));
    }
    if let Some(problem) = display_name_problem(name, MAX_NAME) {
        return Err(Error::invalid_at(
            "name",
            format!("a {what}'s name {problem}"),
        ));
    }
    Ok(name)
}

/// Every record of a listing, decoded.
pub(crate) fn decode_listing<T: serde::de::DeserializeOwned>(
    collection: Collection,
    listing: &Listing,
) -> Result<Vec<T>> {
    listing
        .records
        .iter()
        .map(|(id, record)| decode(&Key::new(collection, id.clone()), &record.value))
        .collect()
}
