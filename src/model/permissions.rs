//! Permissions and grants: what a key or a role may do, by Unleash's names.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A permission, by Unleash's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum Permission {
    /// Everything.
    Admin,
    /// Create projects.
    CreateProject,
    /// Change a project's settings and environments.
    UpdateProject,
    /// Create environments.
    CreateEnvironment,
    /// Create features in a project.
    CreateFeature,
    /// Change a feature's metadata, tags and dependencies.
    UpdateFeature,
    /// Archive features.
    DeleteFeature,
    /// Enable or disable a feature in an environment.
    UpdateFeatureEnvironment,
    /// Change a feature's variants in an environment.
    UpdateFeatureEnvironmentVariants,
    /// Add strategies to a feature in an environment.
    CreateFeatureStrategy,
    /// Change a feature's strategies in an environment.
    UpdateFeatureStrategy,
    /// Remove a feature's strategies in an environment.
    DeleteFeatureStrategy,
    /// Create strategy definitions.
    CreateStrategy,
    /// Create context fields.
    CreateContextField,
    /// Change context fields.
    UpdateContextField,
    /// Create segments.
    CreateSegment,
    /// Change segments.
    UpdateSegment,
    /// Create tag types.
    CreateTagType,
    /// Change or delete registered applications.
    UpdateApplication,
    /// Change which users hold which roles in a project.
    ProjectUserAccessWrite,
    /// Change which groups hold which roles in a project.
    ProjectGroupAccessWrite,
    /// Manage users, groups and roles.
    ManageUsers,
    /// Add or remove a feature's parent dependencies.
    UpdateFeatureDependency,
    /// Create a project's client and frontend keys.
    CreateProjectApiToken,
    /// List a project's client and frontend keys.
    ReadProjectApiToken,
    /// Revoke a project's client and frontend keys.
    DeleteProjectApiToken,
}

impl Permission {
    /// Every permission.
    pub const ALL: [Permission; 26] = [
        Permission::Admin,
        Permission::CreateProject,
        Permission::UpdateProject,
        Permission::CreateEnvironment,
        Permission::CreateFeature,
        Permission::UpdateFeature,
        Permission::DeleteFeature,
        Permission::UpdateFeatureEnvironment,
        Permission::UpdateFeatureEnvironmentVariants,
        Permission::CreateFeatureStrategy,
        Permission::UpdateFeatureStrategy,
        Permission::DeleteFeatureStrategy,
        Permission::CreateStrategy,
        Permission::CreateContextField,
        Permission::UpdateContextField,
        Permission::CreateSegment,
        Permission::UpdateSegment,
        Permission::CreateTagType,
        Permission::UpdateApplication,
        Permission::ProjectUserAccessWrite,
        Permission::ProjectGroupAccessWrite,
        Permission::ManageUsers,
        Permission::UpdateFeatureDependency,
        Permission::CreateProjectApiToken,
        Permission::ReadProjectApiToken,
        Permission::DeleteProjectApiToken,
    ];

    /// Unleash's name of the permission.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Admin => "ADMIN",
            Permission::CreateProject => "CREATE_PROJECT",
            Permission::UpdateProject => "UPDATE_PROJECT",
            Permission::CreateEnvironment => "CREATE_ENVIRONMENT",
            Permission::CreateFeature => "CREATE_FEATURE",
            Permission::UpdateFeature => "UPDATE_FEATURE",
            Permission::DeleteFeature => "DELETE_FEATURE",
            Permission::UpdateFeatureEnvironment => "UPDATE_FEATURE_ENVIRONMENT",
            Permission::UpdateFeatureEnvironmentVariants => "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
            Permission::CreateFeatureStrategy => "CREATE_FEATURE_STRATEGY",
            Permission::UpdateFeatureStrategy => "UPDATE_FEATURE_STRATEGY",
            Permission::DeleteFeatureStrategy => "DELETE_FEATURE_STRATEGY",
            Permission::CreateStrategy => "CREATE_STRATEGY",
            Permission::CreateContextField => "CREATE_CONTEXT_FIELD",
            Permission::UpdateContextField => "UPDATE_CONTEXT_FIELD",
            Permission::CreateSegment => "CREATE_SEGMENT",
            Permission::UpdateSegment => "UPDATE_SEGMENT",
            Permission::CreateTagType => "CREATE_TAG_TYPE",
            Permission::UpdateApplication => "UPDATE_APPLICATION",
            Permission::ProjectUserAccessWrite => "PROJECT_USER_ACCESS_WRITE",
            Permission::ProjectGroupAccessWrite => "PROJECT_GROUP_ACCESS_WRITE",
            Permission::ManageUsers => "MANAGE_USERS",
            Permission::UpdateFeatureDependency => "UPDATE_FEATURE_DEPENDENCY",
            Permission::CreateProjectApiToken => "CREATE_PROJECT_API_TOKEN",
            Permission::ReadProjectApiToken => "READ_PROJECT_API_TOKEN",
            Permission::DeleteProjectApiToken => "DELETE_PROJECT_API_TOKEN",
        }
    }

    /// The permission named `name` by [`Permission::as_str`].
    pub fn from_name(name: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One permission, optionally limited to a project and an environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Grant {
    /// What is allowed.
    #[cfg_attr(feature = "http", schema(value_type = String))]
    pub permission: Permission,
    /// The project it is limited to; `None` (or `*`) for every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The environment it is limited to; `None` (or `*`) for every environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl Grant {
    /// `permission` everywhere.
    pub fn everywhere(permission: Permission) -> Self {
        Self {
            permission,
            project: None,
            environment: None,
        }
    }

    /// `permission` in `project` (every environment).
    pub fn in_project(permission: Permission, project: impl Into<String>) -> Self {
        Self {
            permission,
            project: Some(project.into()),
            environment: None,
        }
    }

    /// `permission` in `project` and `environment`.
    pub fn in_environment(
        permission: Permission,
        project: impl Into<String>,
        environment: impl Into<String>,
    ) -> Self {
        Self {
            permission,
            project: Some(project.into()),
            environment: Some(environment.into()),
        }
    }

    /// Whether this grant satisfies a check of `permission` in `project`/`environment`, by
    /// Unleash's rule: the permission matches or is `ADMIN`, and the grant's project and
    /// environment are unset, `*`, or equal to the checked ones. A check without a project
    /// (or environment) is satisfied only by a grant unlimited in it.
    pub fn covers(
        &self,
        permission: Permission,
        project: Option<&str>,
        environment: Option<&str>,
    ) -> bool {
        fn scope_covers(grant: Option<&str>, checked: Option<&str>) -> bool {
            match grant {
                None | Some("*") => true,
                Some(limited) => checked == Some(limited),
            }
        }
        (self.permission == permission || self.permission == Permission::Admin)
            && scope_covers(self.project.as_deref(), project)
            && scope_covers(self.environment.as_deref(), environment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_cover_by_unleash_rules() {
        let p = Permission::UpdateFeatureEnvironmentVariants;
        let g = Grant::in_environment(p, "a", "prod");
        assert!(g.covers(p, Some("a"), Some("prod")));
        assert!(!g.covers(p, Some("b"), Some("prod")));
        assert!(!g.covers(p, Some("a"), Some("dev")));
        assert!(!g.covers(Permission::UpdateFeature, Some("a"), Some("prod")));
        assert!(!g.covers(p, None, None));
        let star = Grant {
            permission: p,
            project: Some("*".into()),
            environment: None,
        };
        assert!(star.covers(p, Some("x"), Some("y")));
        assert!(Grant::everywhere(Permission::Admin).covers(p, Some("x"), None));
    }
}
