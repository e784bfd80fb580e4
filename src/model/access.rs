//! Project access configuration: which groups and users hold which role.

use serde::{Deserialize, Serialize};

/// The complete assignment of groups and users to roles in a project (Unleash's
/// `projectAccessConfigurationSchema`): `roles` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectAccessConfiguration {
    /// The roles and who holds them.
    pub roles: Vec<RoleAccess>,
}

/// One role and the groups and users assigned it.
///
/// The role id must be at least 1; a smaller id deserialises and is refused by validation, so
/// that the error can name the offending entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct RoleAccess {
    /// Role id, minimum 1.
    #[cfg_attr(feature = "http", schema(minimum = 1))]
    pub id: i64,
    /// Ids of groups assigned the role; empty when absent.
    #[serde(default)]
    pub groups: Vec<i64>,
    /// Ids of users assigned the role; empty when absent.
    #[serde(default)]
    pub users: Vec<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_users_default_empty() {
        let config: ProjectAccessConfiguration =
            serde_json::from_str(r#"{"roles":[{"id":0},{"id":4,"users":[1,2]}]}"#).unwrap();
        assert_eq!(
            config.roles,
            [
                RoleAccess {
                    id: 0,
                    groups: vec![],
                    users: vec![]
                },
                RoleAccess {
                    id: 4,
                    groups: vec![],
                    users: vec![1, 2]
                },
            ]
        );
    }
}
