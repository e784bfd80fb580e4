//! Project access: who holds which role in a project (the fourth operation of the
//! specification), and what a key acting as a user may do.

use std::collections::{BTreeMap, BTreeSet};

use super::reader::Reader;
use super::records::project_not_found;
use super::records::{decode_opt, encode, project_key, revision_of};
use super::users::{group_key, role_key, user_key};
use super::{Authority, Need, Permit, ToggleAdmin};
use crate::access::{self, AccessChange, KnownIds};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::ProjectAccessConfiguration;
use crate::model::{Grant, Permission};
use crate::model::{Group, Role, RoleType, User};
use crate::store::{Collection, Key, Revision};

pub(crate) fn access_key(project: &str) -> Key {
    Key::new(Collection::ProjectAccess, project)
}

impl ToggleAdmin {
    /// Admit `caller`, before the body is read, to try changing `project`'s access: it
    /// holds `PROJECT_USER_ACCESS_WRITE` or `PROJECT_GROUP_ACCESS_WRITE` there (the HTTP
    /// order of checks: permission before body shape). Which of them the change needs is
    /// known only from the body, and is decided by
    /// [`set_project_access`](Self::set_project_access), which takes this permit.
    pub async fn permit_access_change(&self, caller: &Caller, project: &str) -> Result<Permit> {
        self.permit_any(
            caller,
            &[
                Need::project(Permission::ProjectUserAccessWrite, project),
                Need::project(Permission::ProjectGroupAccessWrite, project),
            ],
        )
        .await
    }

    /// Replace the whole role assignment of `project` with `config`: `PUT
    /// /api/admin/projects/{projectId}/access` (an enterprise endpoint in Unleash, so the
    /// rules below are this crate's design, following Unleash's service rules).
    ///
    /// In order:
    /// 1. **Permission** in the project: `PROJECT_USER_ACCESS_WRITE` when some user gains or
    ///    loses a role, `PROJECT_GROUP_ACCESS_WRITE` when some group does (both when both
    ///    do; `PROJECT_USER_ACCESS_WRITE` when nothing changes). Admins and the project's
    ///    Owners hold both. → 403 naming what is missing.
    /// 2. The project must exist → 404.
    /// 3. **Validation**, all problems in one 400 listing every offending id with its path
    ///    (`roles[2].users[0]`): role id < 1, unknown role, root role instead of a project
    ///    role, unknown user, unknown group, a role listed twice. The same id twice inside
    ///    one role is merged.
    /// 4. **No escalation**: changing who holds a role (adding or removing holders) needs
    ///    every permission of that role in this project; a caller who is not Admin or Owner
    ///    there can therefore not appoint (or remove) Owners → 403 `User tried to assign a
    ///    role they did not have access to`, naming what is missing.
    /// 5. One commit: the configuration, stored in normal form (roles by id, ids ascending),
    ///    and one `project-access-updated` event with the old configuration as `preData`
    ///    and the new one as `data`. Setting the configuration the project already has
    ///    writes nothing. Concurrent calls on one project never interleave: the result is
    ///    exactly one of the submitted configurations.
    ///
    /// Roles are given by id: the built-in project roles are
    /// [`OWNER_ROLE`](crate::access::OWNER_ROLE) (4) and [`MEMBER_ROLE`](crate::access::MEMBER_ROLE)
    /// (5); custom roles have the ids [`create_role`](Self::create_role) returned.
    ///
    /// The new assignment takes effect at the next permission check of the users concerned.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toggle_admin::{MemoryStore, ToggleAdmin, model::{Environment, NewFeature, Project}};
    /// # let admin = ToggleAdmin::new(MemoryStore::new());
    /// # let key = admin.bootstrap_admin_key("ops").await?;
    /// # let caller = admin.authenticate(Some(&key.secret)).await?;
    /// # admin.create_environment(&caller, &Environment {
    /// #     name: "production".into(), environment_type: "production".into(), ..Default::default()
    /// # }).await?;
    /// # admin.create_project(&caller, &Project {
    /// #     id: "shop".into(), name: "Shop".into(), environments: vec!["production".into()],
    /// #     ..Default::default()
    /// # }).await?;
    /// use toggle_admin::access::{MEMBER_ROLE, OWNER_ROLE};
    /// use toggle_admin::model::{ProjectAccessConfiguration, RoleAccess};
    /// let alice = admin.create_user(&caller, &toggle_admin::model::NewUser {
    ///     email: Some("alice@example.com".into()), ..Default::default()
    /// }).await?;
    /// // Roles by id: the built-in project roles are `OWNER_ROLE` (4) and `MEMBER_ROLE` (5).
    /// let config = ProjectAccessConfiguration {
    ///     roles: vec![
    ///         RoleAccess { id: OWNER_ROLE, users: vec![alice.id], groups: vec![] },
    ///         RoleAccess { id: MEMBER_ROLE, users: vec![], groups: vec![] },
    ///     ],
    /// };
    /// admin.set_project_access(&caller, "shop", &config).await?;
    /// let stored = admin.project_access(&caller, "shop").await?;
    /// assert!(stored.roles.iter().any(|r| r.id == OWNER_ROLE && r.users == [alice.id]));
    /// # Ok(()) }
    /// ```
    pub async fn set_project_access<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        config: &ProjectAccessConfiguration,
    ) -> Result<()> {
        // Which permissions the change needs depends on what it changes: decided inside
        // the flow, on the assignment it read.
        let permit = self.admit(authority.into(), &[]).await?;
        let caller = permit.caller().clone();
        let caller = &caller;
        self.change("set_project_access", permit, |tx| {
            Box::pin(async move {
                let keys = [project_key(project), access_key(project)];
                let [project_record, access_record] = tx.read(&keys).await?;
                let old: ProjectAccessConfiguration =
                    decode_opt(&keys[1], access_record.as_ref())?.unwrap_or_default();
                let change = AccessChange::between(&old, config);
                let needs: Vec<Need<'_>> = change
                    .required_permissions()
                    .into_iter()
                    .map(|p| Need::project(p, project))
                    .collect();
                tx.require(caller, &needs).await?;
                if project_record.is_none() {
                    return Err(project_not_found(project));
                }

                let known = known_ids(tx.reader(), config).await?;
                let new = access::validate_configuration(config, &known)?;

                // Roles that lose every holder are not in `config`: read the changed ones.
                let changed = roles_by_id(tx.reader(), &change.roles).await?;
                let escalation = access::escalation_requirements(changed.values());
                let needs: Vec<Need<'_>> = escalation
                    .iter()
                    .map(|entry| match &entry.environment {
                        Some(env) => Need::environment(entry.permission, project, env),
                        None => Need::project(entry.permission, project),
                    })
                    .collect();
                tx.require(caller, &needs).await.map_err(|e| match e {
                    Error::NoAccess {
                        message,
                        permissions,
                    } => Error::NoAccess {
                        message: format!(
                            "User tried to assign a role they did not have access to. {message}"
                        ),
                        permissions,
                    },
                    other => other,
                })?;

                if new == old {
                    return Ok(());
                }
                tx.put(keys[1].clone(), encode(&keys[1], &new)?).record(
                    "project-access-updated",
                    Some(project),
                    None,
                    None,
                    Some(encode(&keys[1], &old)?),
                    Some(encode(&keys[1], &new)?),
                );
                Ok(())
            })
        })
        .await
    }

    /// The role assignment of `project`, in normal form (roles by id, ids ascending); no
    /// roles when none was set. Any valid key may read it; an unknown project → 404.
    pub async fn project_access(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<ProjectAccessConfiguration> {
        self.require(caller, &[]).await?;
        let keys = [project_key(project), access_key(project)];
        let [project_record, access_record] = self.reader().read(&keys).await?;
        if project_record.is_none() {
            return Err(project_not_found(project));
        }
        Ok(decode_opt(&keys[1], access_record.as_ref())?.unwrap_or_default())
    }

    /// The grants of user `user_id` now, as far as `checks` need them: its root role's
    /// permissions, and in each project a check names, the permissions of the roles it holds
    /// there directly or through its groups. A user that no longer exists holds nothing.
    ///
    /// Read afresh at every check, so a change of access takes effect at the next call.
    ///
    /// Every record read (the user, each project's access configuration, the groups and
    /// custom roles it names) is added to `basis` with its revision, absent ones too.
    pub(crate) async fn user_grants(
        &self,
        user_id: i64,
        needs: &[Need<'_>],
        basis: &mut Vec<(Key, Revision)>,
    ) -> Result<Vec<Grant>> {
        Ok(self.user_and_grants(user_id, needs, basis).await?.1)
    }

    /// [`user_grants`](Self::user_grants) with the user's record as read for them (`None`:
    /// no such user), for a decision that also names the user (a permit's author).
    pub(crate) async fn user_and_grants(
        &self,
        user_id: i64,
        needs: &[Need<'_>],
        basis: &mut Vec<(Key, Revision)>,
    ) -> Result<(Option<User>, Vec<Grant>)> {
        let key = user_key(user_id);
        let record = self.store.get(&key).await?;
        basis.push((key.clone(), revision_of(record.as_ref())));
        let Some(user) = decode_opt::<User>(&key, record.as_ref())? else {
            return Ok((None, Vec::new()));
        };
        let root = access::builtin_role(user.root_role).filter(|r| r.role_type == RoleType::Root);
        let projects: BTreeSet<&str> = needs.iter().filter_map(|c| c.project).collect();
        let mut held: Vec<(&str, Vec<Role>)> = Vec::new();
        for project in projects {
            let key = access_key(project);
            let record = self.store.get(&key).await?;
            basis.push((key.clone(), revision_of(record.as_ref())));
            let Some(config) = decode_opt::<ProjectAccessConfiguration>(&key, record.as_ref())?
            else {
                continue;
            };
            let group_ids: BTreeSet<i64> =
                config.roles.iter().flat_map(|r| r.groups.clone()).collect();
            let keys: Vec<Key> = group_ids.iter().map(|id| group_key(*id)).collect();
            let mut groups = Vec::new();
            for (key, record) in keys.iter().zip(self.store.get_many(&keys).await?) {
                basis.push((key.clone(), revision_of(record.as_ref())));
                if let Some(group) = decode_opt::<Group>(key, record.as_ref())? {
                    groups.push(group);
                }
            }
            let role_ids = access::roles_held(user.id, &config, &groups);
            let (roles, read) = roles_with_revisions(self.reader(), &role_ids).await?;
            basis.extend(read);
            held.push((project, roles.into_values().collect()));
        }
        let grants = access::grants_of(
            root.as_ref(),
            held.iter().map(|(p, roles)| (*p, roles.as_slice())),
        );
        Ok((Some(user), grants))
    }
}

/// What the ids `config` names are, read through `reader` (in the flow, each record read
/// is a precondition: a concurrently deleted user then makes the commit retry instead of
/// assigning a ghost).
async fn known_ids(reader: Reader<'_>, config: &ProjectAccessConfiguration) -> Result<KnownIds> {
    let role_ids: BTreeSet<i64> = config.roles.iter().map(|r| r.id).collect();
    let user_ids: BTreeSet<i64> = config.roles.iter().flat_map(|r| r.users.clone()).collect();
    let group_ids: BTreeSet<i64> = config.roles.iter().flat_map(|r| r.groups.clone()).collect();
    let roles = roles_by_id(reader, &role_ids).await?;
    let mut known = KnownIds {
        roles: roles.iter().map(|(id, r)| (*id, r.role_type)).collect(),
        ..KnownIds::default()
    };
    for (ids, into, key) in [
        (&user_ids, &mut known.users, user_key as fn(i64) -> Key),
        (&group_ids, &mut known.groups, group_key),
    ] {
        let keys: Vec<Key> = ids.iter().map(|id| key(*id)).collect();
        let found = reader.get_all(&keys).await?;
        for (id, record) in ids.iter().zip(found) {
            if record.is_some() {
                into.insert(*id);
            }
        }
    }
    Ok(known)
}

/// The roles with `ids` that exist (built-in or custom), by id, read through `reader`; with
/// the custom roles' records and their revisions.
async fn roles_by_id(reader: Reader<'_>, ids: &BTreeSet<i64>) -> Result<BTreeMap<i64, Role>> {
    Ok(roles_with_revisions(reader, ids).await?.0)
}

/// [`roles_by_id`] with the custom roles' keys and the revisions read.
async fn roles_with_revisions(
    reader: Reader<'_>,
    ids: &BTreeSet<i64>,
) -> Result<(BTreeMap<i64, Role>, Vec<(Key, Revision)>)> {
    let mut roles = BTreeMap::new();
    let custom: Vec<i64> = ids
        .iter()
        .copied()
        .filter(|id| {
            if let Some(role) = access::builtin_role(*id) {
                roles.insert(*id, role);
                false
            } else {
                *id > access::LAST_BUILTIN_ROLE
            }
        })
        .collect();
    let keys: Vec<Key> = custom.iter().map(|id| role_key(*id)).collect();
    let found = reader.get_all(&keys).await?;
    let mut read = Vec::new();
    for ((id, key), record) in custom.into_iter().zip(keys).zip(found) {
        if let Some(role) = decode_opt::<Role>(&key, record.as_ref())? {
            roles.insert(id, role);
        }
        read.push((key, revision_of(record.as_ref())));
    }
    Ok((roles, read))
}
