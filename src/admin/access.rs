//! Project access: who holds which role in a project (the fourth operation of the
//! specification), and what a key acting as a user may do.

use std::collections::{BTreeMap, BTreeSet};

use super::records::project_not_found;
use super::records::{decode_opt, encode, project_key, revision_of};
use super::users::{group_key, role_key, user_key};
use super::{Check, ToggleAdmin, event};
use crate::access::{self, AccessChange, KnownIds};
use crate::auth::{Caller, Grant};
use crate::error::{Error, Result};
use crate::model::ProjectAccessConfiguration;
use crate::model::{Group, Role, RoleType, User};
use crate::store::{ChangeSet, Collection, Key, Revision};

pub(crate) fn access_key(project: &str) -> Key {
    Key::new(Collection::ProjectAccess, project)
}

impl ToggleAdmin {
    /// Check, before the body is read, that `caller` could change some of `project`'s access
    /// at all: it holds `PROJECT_USER_ACCESS_WRITE` or `PROJECT_GROUP_ACCESS_WRITE` there
    /// (the HTTP order of checks: permission before body shape). Which of them the change
    /// needs is known only from the body, and is checked by
    /// [`set_project_access`](Self::set_project_access).
    #[cfg(feature = "http")]
    pub(crate) async fn require_some_access_permission(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<()> {
        let users = Check::project(crate::auth::Permission::ProjectUserAccessWrite, project);
        let groups = Check::project(crate::auth::Permission::ProjectGroupAccessWrite, project);
        match self.require(caller, &[users]).await {
            Ok(_) => Ok(()),
            Err(Error::NoAccess { .. }) => self.require(caller, &[groups]).await.map(drop),
            Err(other) => Err(other),
        }
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
    /// # use toggle_admin::{MemoryStore, ToggleAdmin, model::{Environment, Project}, admin::NewFeature};
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
    /// let alice = admin.create_user(&caller, &toggle_admin::admin::NewUser {
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
    pub async fn set_project_access(
        &self,
        caller: &Caller,
        project: &str,
        config: &ProjectAccessConfiguration,
    ) -> Result<()> {
        retrying!("set_project_access", async {
            let keys = [project_key(project), access_key(project)];
            let [project_record, access_record] = self.reader().read(&keys).await?;
            let old: ProjectAccessConfiguration =
                decode_opt(&keys[1], access_record.as_ref())?.unwrap_or_default();
            let change = AccessChange::between(&old, config);
            let checks: Vec<Check<'_>> = change
                .required_permissions()
                .into_iter()
                .map(|p| Check::project(p, project))
                .collect();
            let authorised = self.require(caller, &checks).await?;
            if project_record.is_none() {
                return Err(project_not_found(project));
            }

            let mut changes = ChangeSet::new();
            let known = self.known_ids(config, &mut changes).await?;
            let new = access::validate_configuration(config, &known)?;

            // Roles that lose every holder are not in `config`: read the changed ones.
            let changed = self.roles_by_id(&change.roles, Some(&mut changes)).await?;
            let needs = access::escalation_requirements(changed.values());
            let checks: Vec<Check<'_>> = needs
                .iter()
                .map(|entry| match &entry.environment {
                    Some(env) => Check::environment(entry.permission, project, env),
                    None => Check::project(entry.permission, project),
                })
                .collect();
            let escalation = self.require(caller, &checks).await.map_err(|e| match e {
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
            changes
                .expect_revision(keys[0].clone(), revision_of(project_record.as_ref()))
                .expect_revision(keys[1].clone(), revision_of(access_record.as_ref()))
                .put(keys[1].clone(), encode(&keys[1], &new)?)
                .event(event(
                    caller,
                    "project-access-updated",
                    Some(project),
                    None,
                    None,
                    Some(encode(&keys[1], &old)?),
                    Some(encode(&keys[1], &new)?),
                ));
            self.commit_as(&authorised.and(escalation), changes).await?;
            Ok(())
        })
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

    /// What the ids `config` names are. `changes` is made
    /// to require that each record read is unchanged at commit (a concurrently deleted user
    /// then makes the commit retry instead of assigning a ghost).
    async fn known_ids(
        &self,
        config: &ProjectAccessConfiguration,
        changes: &mut ChangeSet,
    ) -> Result<KnownIds> {
        let role_ids: BTreeSet<i64> = config.roles.iter().map(|r| r.id).collect();
        let user_ids: BTreeSet<i64> = config.roles.iter().flat_map(|r| r.users.clone()).collect();
        let group_ids: BTreeSet<i64> = config.roles.iter().flat_map(|r| r.groups.clone()).collect();
        let roles = self.roles_by_id(&role_ids, Some(changes)).await?;
        let mut known = KnownIds {
            roles: roles.iter().map(|(id, r)| (*id, r.role_type)).collect(),
            ..KnownIds::default()
        };
        for (ids, into, key) in [
            (&user_ids, &mut known.users, user_key as fn(i64) -> Key),
            (&group_ids, &mut known.groups, group_key),
        ] {
            let keys: Vec<Key> = ids.iter().map(|id| key(*id)).collect();
            let found = self.store.get_many(&keys).await?;
            for ((id, key), record) in ids.iter().zip(keys).zip(found) {
                changes.expect_revision(key, revision_of(record.as_ref()));
                if record.is_some() {
                    into.insert(*id);
                }
            }
        }
        Ok(known)
    }

    /// The roles with `ids` that exist (built-in or custom), by id. With `changes`, the
    /// custom roles read must be unchanged at commit.
    async fn roles_by_id(
        &self,
        ids: &BTreeSet<i64>,
        changes: Option<&mut ChangeSet>,
    ) -> Result<BTreeMap<i64, Role>> {
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
        let found = self.store.get_many(&keys).await?;
        let mut expected = Vec::new();
        for ((id, key), record) in custom.into_iter().zip(keys).zip(found) {
            if let Some(role) = decode_opt::<Role>(&key, record.as_ref())? {
                roles.insert(id, role);
            }
            expected.push((key, revision_of(record.as_ref())));
        }
        if let Some(changes) = changes {
            for (key, revision) in expected {
                changes.expect_revision(key, revision);
            }
        }
        Ok(roles)
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
        checks: &[Check<'_>],
        basis: &mut Vec<(Key, Revision)>,
    ) -> Result<Vec<Grant>> {
        let key = user_key(user_id);
        let record = self.store.get(&key).await?;
        basis.push((key.clone(), revision_of(record.as_ref())));
        let Some(user) = decode_opt::<User>(&key, record.as_ref())? else {
            return Ok(Vec::new());
        };
        let root = access::builtin_role(user.root_role).filter(|r| r.role_type == RoleType::Root);
        let projects: BTreeSet<&str> = checks.iter().filter_map(|c| c.project).collect();
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
            let mut read = ChangeSet::new();
            let roles = self.roles_by_id(&role_ids, Some(&mut read)).await?;
            for precondition in read.preconditions {
                if let crate::store::Precondition::Record { key, revision } = precondition {
                    basis.push((key, revision));
                }
            }
            held.push((project, roles.into_values().collect()));
        }
        Ok(access::grants_of(
            root.as_ref(),
            held.iter().map(|(p, roles)| (*p, roles.as_slice())),
        ))
    }
}
