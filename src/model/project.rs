//! Projects and environments: the containers features live in.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::FeatureStrategy;

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
    /// When the project was created (`None` for projects created before 0.1 recorded it).
    /// Set by [`create_project`](crate::ToggleAdmin::create_project); a value sent is
    /// ignored.
    #[serde(
        default,
        with = "super::timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub created_at: Option<DateTime<Utc>>,
    /// The strategy a feature gets in an environment when it is enabled there with none
    /// (Unleash's environment default strategy), by environment. Set with
    /// [`set_default_strategy`](crate::ToggleAdmin::set_default_strategy); a value sent to
    /// [`create_project`](crate::ToggleAdmin::create_project) is ignored.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default_strategies: BTreeMap<String, FeatureStrategy>,
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

/// An environment of a project in its overview: `{environment, defaultStrategy?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectEnvironment {
    /// The environment's name.
    pub environment: String,
    /// The strategy the project's features get there when enabled with none, if one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_strategy: Option<FeatureStrategy>,
}

impl From<Project> for ProjectOverview {
    fn from(mut project: Project) -> Self {
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
                .map(|environment| ProjectEnvironment {
                    default_strategy: project.default_strategies.remove(&environment),
                    environment,
                })
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

/// A project as Unleash lists it (`projectSchema`): `GET /api/admin/projects`.
///
/// `health` is Unleash's rating, as the project's health report computes it
/// ([`ProjectHealthReport`](super::ProjectHealthReport)): 100 less the percentages of stale
/// and of potentially stale features (100 for a project without features); `memberCount`
/// counts the users holding a role in the project, directly or through a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectSummary {
    /// The project's id.
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Its description, `null` when it has none.
    pub description: Option<String>,
    /// Its health rating, 0–100.
    pub health: u32,
    /// How many active (not archived) features it holds.
    pub feature_count: u64,
    /// How many of those are stale.
    pub stale_feature_count: u64,
    /// How many are not stale but older than their feature type's lifetime.
    pub potentially_stale_feature_count: u64,
    /// How many users hold a role in it, directly or through a group.
    pub member_count: u64,
    /// When it was created, if known.
    #[serde(
        default,
        with = "super::timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub created_at: Option<DateTime<Utc>>,
    /// Always `open`: every project is visible to every key.
    pub mode: String,
    /// Always `default`.
    pub default_stickiness: String,
    /// Always false: favourites are per user in Unleash's UI and not kept here.
    pub favorite: bool,
    /// Always `null`: projects are never archived here.
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub archived_at: Option<DateTime<Utc>>,
    /// When an SDK last reported using one of its features: always `null`, as SDK usage is
    /// not recorded by feature here.
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub last_reported_flag_usage: Option<DateTime<Utc>>,
    /// When one of its features last changed (its newest event naming a feature it holds),
    /// `null` when none did.
    #[serde(default, with = "super::timestamp")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub last_updated_at: Option<DateTime<Utc>>,
    /// Who holds the Owner role in it: its users, then its groups, in the order they were
    /// given the role; `[{"ownerType": "system"}]` when nobody does, as in Unleash.
    pub owners: Vec<ProjectOwner>,
}

/// An owner of a project, as Unleash lists them (`projectSchema.owners`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(tag = "ownerType", rename_all = "lowercase")]
pub enum ProjectOwner {
    /// A user holding the Owner role.
    User {
        /// Its name, else its username, else its email.
        name: String,
        /// Its email, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        email: Option<String>,
        /// Its picture.
        #[serde(rename = "imageUrl")]
        image_url: String,
    },
    /// A group holding the Owner role.
    Group {
        /// Its name.
        name: String,
    },
    /// Nobody holds the Owner role: the project is the system's.
    System,
}

/// `GET /api/admin/projects` (Unleash's `projectsSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectList {
    /// Always 1.
    pub version: u32,
    /// The projects, by id.
    pub projects: Vec<ProjectSummary>,
}

/// An environment as `GET /api/admin/environments/{name}` shows it (Unleash's
/// `environmentSchema`), with the counts Unleash adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentDetail {
    /// The environment's name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// False once turned off (Unleash's "deprecated").
    pub enabled: bool,
    /// True for `default`, as Unleash's built-in environment of that name.
    pub protected: bool,
    /// Always `null`: change requests (which need approvals) are not kept here.
    pub required_approvals: Option<u32>,
    /// Its position among the environments ([`DEFAULT_SORT_ORDER`] unless set).
    pub sort_order: i64,
    /// How many projects have it.
    pub project_count: u64,
    /// How many client and frontend keys are for it.
    pub api_token_count: u64,
    /// How many features are enabled in it.
    pub enabled_toggle_count: u64,
}

/// The sort order of an environment whose order was never set (Unleash's column default).
pub const DEFAULT_SORT_ORDER: i64 = 9999;

/// An environment as `GET /api/admin/environments/project/{projectId}` shows it (Unleash's
/// `environmentProjectSchema`): every environment, `visible` when the project has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ProjectEnvironmentView {
    /// The environment's name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// False once turned off.
    pub enabled: bool,
    /// True for `default`, as Unleash's built-in environment of that name.
    pub protected: bool,
    /// Always `null`: change requests (which need approvals) are not kept here.
    pub required_approvals: Option<u32>,
    /// Its position among the environments.
    pub sort_order: i64,
    /// How many client and frontend keys see the project in it.
    pub project_api_token_count: u64,
    /// How many of the project's features are enabled in it.
    pub project_enabled_toggle_count: u64,
    /// The project's default strategy there, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_strategy: Option<FeatureStrategy>,
    /// Whether the project has this environment.
    pub visible: bool,
}

/// `GET /api/admin/environments/project/{projectId}` (Unleash's `environmentsProjectSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectEnvironmentList {
    /// Always 1.
    pub version: u32,
    /// Every environment, in sort order.
    pub environments: Vec<ProjectEnvironmentView>,
}
