//! What one user may do, laid out permission by permission
//! (`GET /api/admin/user-admin/{id}/permissions`).

use std::collections::BTreeSet;

use super::access::access_key;
use super::records::decode_opt;
use super::users::{group_key, user_key};
use super::{Need, ToggleAdmin};
use crate::access::{self, PermissionScope, VIEWER_ROLE};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{
    AccessOverview, Group, HeldRole, Permission, PermissionOverview, ProjectAccessConfiguration,
    Role, RoleSummary, User, UserAccessOverview,
};
use crate::store::Key;

/// `UPDATE_FEATURE` → `Update feature`.
fn display_name(permission: Permission) -> String {
    let words = permission.as_str().to_lowercase().replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

impl ToggleAdmin {
    /// Every permission, grouped as root, project and environment permissions, with whether
    /// the user `id` holds it: root ones anywhere, project ones in `project`, environment ones
    /// in `environment` of `project` (Unleash's `userAccessOverviewSchema`); with the user, its
    /// root role and the roles it holds in `project`. Without a project, only what its root
    /// role grants everywhere counts. Needs `MANAGE_USERS` (Unleash: `ADMIN`). An unknown user
    /// → [`Error::NotFound`].
    pub async fn user_access_overview(
        &self,
        caller: &Caller,
        id: i64,
        project: Option<&str>,
        environment: Option<&str>,
    ) -> Result<UserAccessOverview> {
        self.permit(caller, &[Need::root(Permission::ManageUsers)])
            .await?;
        let key = user_key(id);
        let user: User = decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| Error::not_found(format!("There is no user with id {id}.")))?;
        let needs: Vec<Need<'_>> = project
            .map(|p| Need::project(Permission::Admin, p))
            .into_iter()
            .collect();
        let mut basis = Vec::new();
        let grants = self.user_grants(id, &needs, &mut basis).await?;
        let mut overview = AccessOverview {
            root: Vec::new(),
            project: Vec::new(),
            environment: Vec::new(),
        };
        for (index, permission) in Permission::ALL.into_iter().enumerate() {
            let scope = access::permission_scope(permission);
            let (checked_project, checked_environment, into) = match scope {
                PermissionScope::Root => (None, None, &mut overview.root),
                PermissionScope::Project => (project, None, &mut overview.project),
                PermissionScope::Environment => (project, environment, &mut overview.environment),
            };
            let has_permission = (scope == PermissionScope::Root || checked_project.is_some())
                && grants
                    .iter()
                    .any(|g| g.covers(permission, checked_project, checked_environment));
            into.push(PermissionOverview {
                id: i64::try_from(index).unwrap_or(i64::MAX).saturating_add(1),
                name: permission.to_string(),
                display_name: display_name(permission),
                permission_type: match scope {
                    PermissionScope::Root => "root",
                    PermissionScope::Project => "project",
                    PermissionScope::Environment => "environment",
                }
                .to_owned(),
                environment: (scope == PermissionScope::Environment)
                    .then(|| environment.map(str::to_owned))
                    .flatten(),
                has_permission,
            });
        }
        let root_role: Role = access::builtin_role(user.root_role)
            .or_else(|| access::builtin_role(VIEWER_ROLE))
            .ok_or_else(|| Error::internal("the built-in Viewer role is missing", None))?;
        let project_roles = match project {
            Some(project) => self.roles_in(&user, project).await?,
            None => Vec::new(),
        };
        Ok(UserAccessOverview {
            overview,
            root_role: RoleSummary::from(&root_role),
            user,
            project_roles,
        })
    }

    /// The roles `user` holds in `project`, directly or through a group.
    pub(super) async fn roles_in(&self, user: &User, project: &str) -> Result<Vec<HeldRole>> {
        let key = access_key(project);
        let Some(config) =
            decode_opt::<ProjectAccessConfiguration>(&key, self.store.get(&key).await?.as_ref())?
        else {
            return Ok(Vec::new());
        };
        let group_ids: BTreeSet<i64> = config.roles.iter().flat_map(|r| r.groups.clone()).collect();
        let keys: Vec<Key> = group_ids.iter().map(|id| group_key(*id)).collect();
        let mut groups = Vec::new();
        for (key, record) in keys.iter().zip(self.store.get_many(&keys).await?) {
            if let Some(group) = decode_opt::<Group>(key, record.as_ref())? {
                groups.push(group);
            }
        }
        let mut held = Vec::new();
        for role_id in access::roles_held(user.id, &config, &groups) {
            let role = match access::builtin_role(role_id) {
                Some(role) => Some(role),
                None => {
                    let key = super::users::role_key(role_id);
                    decode_opt::<Role>(&key, self.store.get(&key).await?.as_ref())?
                }
            };
            if let Some(role) = role {
                held.push(HeldRole {
                    id: role.id,
                    role_type: role.role_type,
                    name: role.name,
                    description: role.description.unwrap_or_default(),
                    project: project.to_owned(),
                    permissions: role.permissions,
                });
            }
        }
        Ok(held)
    }
}
