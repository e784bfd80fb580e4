//! A project's access configuration: validation, normal form, and what a change needs.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, ErrorDetail, Result};
use crate::model::Permission;
use crate::model::{ProjectAccessConfiguration, RoleAccess};
use crate::model::{Role, RolePermission, RoleType};

/// What exists, as far as a configuration refers to it: the type of each known role, and
/// the user and group ids that exist. Ids absent here are unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownIds {
    /// Known roles, by id, with their type.
    pub roles: BTreeMap<i64, RoleType>,
    /// Ids of users that exist.
    pub users: BTreeSet<i64>,
    /// Ids of groups that exist.
    pub groups: BTreeSet<i64>,
}

/// Check `config` against what exists and return its normal form (see [`normalise`]).
///
/// Every problem is listed in one [`Error::Validation`], each with its path: a role id below
/// 1, an unknown role or a root role (`roles[i].id`), a role listed a second time
/// (`roles[j].id`), an unknown user (`roles[i].users[k]`) or group (`roles[i].groups[k]`).
/// The same id twice inside one role is not a problem: the two are merged. The message
/// lists every offending id.
pub fn validate_configuration(
    config: &ProjectAccessConfiguration,
    known: &KnownIds,
) -> Result<ProjectAccessConfiguration> {
    let mut details = Vec::new();
    let mut bad_roles = BTreeSet::new();
    let mut twice = BTreeSet::new();
    let mut bad_users = BTreeSet::new();
    let mut bad_groups = BTreeSet::new();
    let mut first_at: BTreeMap<i64, usize> = BTreeMap::new();
    for (i, role) in config.roles.iter().enumerate() {
        let at = format!("roles[{i}].id");
        let id = role.id;
        if id < 1 {
            bad_roles.insert(id);
            details.push(ErrorDetail::at(
                at,
                format!("role id {id} is not valid: role ids start at 1"),
            ));
        } else {
            match known.roles.get(&id) {
                None => {
                    bad_roles.insert(id);
                    details.push(ErrorDetail::at(
                        at,
                        format!("there is no role with id {id}"),
                    ));
                }
                Some(kind) if !kind.is_project_role() => {
                    bad_roles.insert(id);
                    details.push(ErrorDetail::at(
                        at,
                        format!("role {id} is a root role, not a project role"),
                    ));
                }
                Some(_) => {}
            }
            if let Some(first) = first_at.get(&id) {
                twice.insert(id);
                details.push(ErrorDetail::at(
                    format!("roles[{i}].id"),
                    format!("role {id} is listed twice (first at roles[{first}])"),
                ));
            } else {
                first_at.insert(id, i);
            }
        }
        let mut seen = BTreeSet::new();
        for (k, user) in role.users.iter().enumerate() {
            // A repeated id is merged, so it is reported once.
            if seen.insert(*user) && !known.users.contains(user) {
                bad_users.insert(*user);
                details.push(ErrorDetail::at(
                    format!("roles[{i}].users[{k}]"),
                    format!("there is no user with id {user}"),
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for (k, group) in role.groups.iter().enumerate() {
            if seen.insert(*group) && !known.groups.contains(group) {
                bad_groups.insert(*group);
                details.push(ErrorDetail::at(
                    format!("roles[{i}].groups[{k}]"),
                    format!("there is no group with id {group}"),
                ));
            }
        }
    }
    if details.is_empty() {
        return Ok(normalise(config));
    }
    let list = |ids: &BTreeSet<i64>| {
        ids.iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !bad_roles.is_empty() {
        parts.push(format!(
            "these roles are not project roles that exist: {}",
            list(&bad_roles)
        ));
    }
    if !twice.is_empty() {
        parts.push(format!("these roles are listed twice: {}", list(&twice)));
    }
    if !bad_users.is_empty() {
        parts.push(format!("these user ids do not exist: {}", list(&bad_users)));
    }
    if !bad_groups.is_empty() {
        parts.push(format!(
            "these group ids do not exist: {}",
            list(&bad_groups)
        ));
    }
    Err(Error::validation(
        format!(
            "The project access configuration is not valid: {}.",
            parts.join("; ")
        ),
        details,
    ))
}

/// The normal form of a configuration, as it is stored and read back: roles by ascending
/// id, and each role's users and groups ascending without repeats.
pub fn normalise(config: &ProjectAccessConfiguration) -> ProjectAccessConfiguration {
    let mut roles: Vec<RoleAccess> = config
        .roles
        .iter()
        .map(|role| {
            let mut users = role.users.clone();
            users.sort_unstable();
            users.dedup();
            let mut groups = role.groups.clone();
            groups.sort_unstable();
            groups.dedup();
            RoleAccess {
                id: role.id,
                groups,
                users,
            }
        })
        .collect();
    roles.sort_by_key(|role| role.id);
    ProjectAccessConfiguration { roles }
}

/// What replacing one configuration by another changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessChange {
    /// Some user gains or loses a role.
    pub users: bool,
    /// Some group gains or loses a role.
    pub groups: bool,
    /// The roles whose holders change (gained or lost).
    pub roles: BTreeSet<i64>,
}

impl AccessChange {
    /// What replacing `old` by `new` changes. Both may be in any form: a role listed with no
    /// holders is the same as a role not listed.
    pub fn between(old: &ProjectAccessConfiguration, new: &ProjectAccessConfiguration) -> Self {
        type Holders = BTreeMap<i64, (BTreeSet<i64>, BTreeSet<i64>)>;
        fn holders(config: &ProjectAccessConfiguration) -> Holders {
            let mut map = Holders::new();
            for role in &config.roles {
                let entry = map.entry(role.id).or_default();
                entry.0.extend(&role.users);
                entry.1.extend(&role.groups);
            }
            map
        }
        let (old, new) = (holders(old), holders(new));
        let empty = (BTreeSet::new(), BTreeSet::new());
        let mut change = AccessChange::default();
        for id in old.keys().chain(new.keys()) {
            let before = old.get(id).unwrap_or(&empty);
            let after = new.get(id).unwrap_or(&empty);
            let users = before.0 != after.0;
            let groups = before.1 != after.1;
            if users || groups {
                change.roles.insert(*id);
            }
            change.users |= users;
            change.groups |= groups;
        }
        change
    }

    /// True when nothing changes.
    pub fn is_empty(&self) -> bool {
        !self.users && !self.groups
    }

    /// The permissions (in the project) that making this change needs:
    /// `PROJECT_USER_ACCESS_WRITE` when user assignments change, `PROJECT_GROUP_ACCESS_WRITE`
    /// when group assignments change. Setting the configuration a project already has still
    /// needs `PROJECT_USER_ACCESS_WRITE`: only those who manage access may probe it that way.
    pub fn required_permissions(&self) -> Vec<Permission> {
        let mut needed = Vec::new();
        if self.users || self.is_empty() {
            needed.push(Permission::ProjectUserAccessWrite);
        }
        if self.groups {
            needed.push(Permission::ProjectGroupAccessWrite);
        }
        needed
    }
}

/// The no-escalation rule: to change who holds `roles` in a project, a caller must hold
/// every permission of each of them there, in the same environments (a permission the
/// role has in every environment is needed in every environment).
///
/// Admins (`ADMIN` covers everything) and the project's Owners (who hold every project
/// permission everywhere in the project) always pass, as in Unleash. Changing a role's
/// holders counts whether they are added or removed: removing the Owners is as much beyond
/// a Member as appointing one.
pub fn escalation_requirements<'a>(
    roles: impl IntoIterator<Item = &'a Role>,
) -> Vec<RolePermission> {
    let needed: BTreeSet<RolePermission> = roles
        .into_iter()
        .flat_map(|role| role.permissions.iter().cloned())
        .collect();
    needed.into_iter().collect()
}
