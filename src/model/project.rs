//! Projects and environments: the containers features live in.

use serde::{Deserialize, Serialize};

/// A project: features are organised in projects, and a project uses some of the service's
/// environments. `id` and `name` are required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// The project's id, as it appears in paths (`/api/admin/projects/{projectId}`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The naming pattern new feature names must follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_naming: Option<FeatureNaming>,
    /// The most features the project may hold (archived ones not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_limit: Option<u32>,
    /// Names of the environments enabled for the project; empty when absent.
    #[serde(default)]
    pub environments: Vec<String>,
}

/// A project as `GET /api/admin/projects/{projectId}` answers it: Unleash's (deprecated)
/// project overview, whose `environments` are objects (`[{environment}]`), as the Terraform
/// provider decodes them. Unleash's `features`, `stats`, `members` and `health` are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectOverview {
    /// The schema version, always 1.
    pub version: u32,
    /// The project's id (Unleash leaves it out; the path has it).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description; `null` when none.
    pub description: Option<String>,
    /// Always `open`: every key with the permissions may change the project.
    pub mode: String,
    /// Always `default`.
    pub default_stickiness: String,
    /// The most features the project may hold; `null` when unlimited.
    pub feature_limit: Option<u32>,
    /// The naming pattern new feature names must follow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_naming: Option<FeatureNaming>,
    /// The environments enabled for the project.
    pub environments: Vec<ProjectEnvironment>,
    /// Always `false` (favourites are a person's, and keys have none).
    pub favorite: bool,
}

/// An environment of a project in its overview: `{environment}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectEnvironment {
    /// The environment's name.
    pub environment: String,
}

impl From<Project> for ProjectOverview {
    fn from(project: Project) -> Self {
        Self {
            version: 1,
            id: project.id,
            name: project.name,
            description: project.description,
            mode: "open".to_owned(),
            default_stickiness: "default".to_owned(),
            feature_limit: project.feature_limit,
            feature_naming: project.feature_naming,
            environments: project
                .environments
                .into_iter()
                .map(|environment| ProjectEnvironment { environment })
                .collect(),
            favorite: false,
        }
    }
}

/// A project's feature naming convention: `pattern` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureNaming {
    /// A regular expression every new feature name in the project must match in full.
    pub pattern: String,
    /// A name that matches the pattern, shown to users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    /// What the convention is, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// An environment of the service, e.g. `development` or `production`: `name` and `type` are
/// required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    /// The environment's name.
    pub name: String,
    /// The environment's type, e.g. `development`, `test`, `production`.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Whether the environment is enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Position in the list of environments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
}

/// A project to create: `POST /api/admin/projects`.
pub type NewProject = Project;
