//! What a user may do: its root role everywhere, plus the project roles it holds in each
//! project, directly or through a group.

use std::collections::BTreeSet;

use crate::model::Grant;
use crate::model::ProjectAccessConfiguration;
use crate::model::{Group, Role};

/// The ids of the roles `user` holds under `config`: those it is assigned directly, and
/// those assigned to any group in `groups` it is a member of. `groups` may hold any groups
/// (those not named by the configuration are ignored).
pub fn roles_held(
    user: i64,
    config: &ProjectAccessConfiguration,
    groups: &[Group],
) -> BTreeSet<i64> {
    let member_of: BTreeSet<i64> = groups
        .iter()
        .filter(|group| group.users.contains(&user))
        .map(|group| group.id)
        .collect();
    config
        .roles
        .iter()
        .filter(|role| {
            role.users.contains(&user) || role.groups.iter().any(|g| member_of.contains(g))
        })
        .map(|role| role.id)
        .collect()
}

/// The grants of a user whose root role is `root` (none if the user is gone) and who holds
/// `projects`: for each project, the roles held there.
///
/// A root role's permissions hold in every project; a project role's hold in its project
/// only, in every environment or in the environment the role's entry names.
pub fn grants_of<'a>(
    root: Option<&Role>,
    projects: impl IntoIterator<Item = (&'a str, &'a [Role])>,
) -> Vec<Grant> {
    let mut grants = Vec::new();
    for entry in root.iter().flat_map(|role| &role.permissions) {
        grants.push(Grant {
            permission: entry.permission,
            project: None,
            environment: entry.environment.clone(),
        });
    }
    for (project, roles) in projects {
        for entry in roles.iter().flat_map(|role| &role.permissions) {
            grants.push(Grant {
                permission: entry.permission,
                project: Some(project.to_owned()),
                environment: entry.environment.clone(),
            });
        }
    }
    // Several roles often share permissions; a check need look at each grant once.
    let mut seen = std::collections::HashSet::new();
    grants.retain(|grant| seen.insert(grant.clone()));
    grants
}
