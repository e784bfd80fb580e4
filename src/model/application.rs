//! Registered client applications, addressed by name.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A client application that registered with the service: addressed by `name`,
/// the only required field. Its other fields are not shown by the specification; these are
/// Unleash's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Application {
    /// The application's name (`appName`; records written before 0.2 say `name`).
    #[serde(rename = "appName", alias = "name")]
    pub name: String,
    /// What the application is.
    #[serde(default)]
    pub description: Option<String>,
    /// Where to find it.
    #[serde(default)]
    pub url: Option<String>,
    /// A colour to show it in.
    #[serde(default)]
    pub color: Option<String>,
    /// An icon to show it with.
    #[serde(default)]
    pub icon: Option<String>,
    /// The SDK version it last registered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// The strategies it implements.
    #[serde(default)]
    pub strategies: Vec<String>,
    /// When it was first registered (`None` for records written before 0.2).
    #[serde(
        default,
        with = "super::timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_at: Option<DateTime<Utc>>,
    /// Its running instances.
    #[serde(default)]
    pub instances: Vec<ApplicationInstance>,
    /// The toggles it has reported seeing (metrics are not collected here: always empty).
    #[serde(default)]
    pub seen_toggles: Vec<String>,
    /// Links to the application (`{self}`), as Unleash shows them; set when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<ApplicationLinks>,
}

/// The links of an [`Application`], as in Unleash's `applicationSchema`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ApplicationLinks {
    /// `/api/applications/{appName}`.
    #[serde(rename = "self")]
    pub self_link: String,
}

impl ApplicationLinks {
    /// The links of the application `name`.
    pub fn of(name: &str) -> Self {
        Self {
            self_link: format!("/api/applications/{name}"),
        }
    }
}

/// Registered applications, as Unleash lists them (`applicationsSchema`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ApplicationList {
    /// How many applications match.
    pub total: usize,
    /// The applications, by name.
    pub applications: Vec<Application>,
}

/// One running instance of an [`Application`]: `instanceId` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationInstance {
    /// The instance's id, as the SDK reports it.
    pub instance_id: String,
    /// The SDK and its version, e.g. `unleash-client-node:5.0.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// The environment the instance runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// When the instance last reported.
    #[serde(
        default,
        with = "super::timestamp",
        skip_serializing_if = "Option::is_none"
    )]
    pub last_seen: Option<DateTime<Utc>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let json = serde_json::json!({
            "appName": "app",
            "description": null,
            "url": null,
            "color": null,
            "icon": "x",
            "strategies": [],
            "seenToggles": [],
            "instances": [
                {"instanceId": "i-1", "sdkVersion": "unleash-client-rust:0.1", "lastSeen": "2024-01-01T00:00:00.123Z"},
                {"instanceId": "i-2"}
            ]
        });
        let app: Application = serde_json::from_value(json.clone()).unwrap();
        assert!(app.instances[0].last_seen.is_some());
        assert_eq!(serde_json::to_value(&app).unwrap(), json);
    }
}

/// The body of `POST /api/admin/metrics/applications/{appName}` (Unleash's
/// `createApplicationSchema`, plus the instances to record).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Registration {
    /// The application's name; when given, the one in the path.
    #[serde(default)]
    pub app_name: Option<String>,
    /// What the application is.
    #[serde(default)]
    pub description: Option<String>,
    /// Where it lives.
    #[serde(default)]
    pub url: Option<String>,
    /// Its colour.
    #[serde(default)]
    pub color: Option<String>,
    /// Its icon.
    #[serde(default)]
    pub icon: Option<String>,
    /// Running instances to record.
    #[serde(default)]
    pub instances: Vec<ApplicationInstance>,
    /// The SDK it uses.
    #[serde(default)]
    pub sdk_version: Option<String>,
    /// The strategies it knows.
    #[serde(default)]
    pub strategies: Option<Vec<String>>,
}

impl Registration {
    /// The application `name` this body registers.
    pub fn into_application(self, name: String) -> Application {
        Application {
            name,
            description: self.description,
            url: self.url,
            color: self.color,
            icon: self.icon,
            sdk_version: self.sdk_version,
            strategies: self.strategies.unwrap_or_default(),
            instances: self.instances,
            ..Application::default()
        }
    }
}

/// An SDK an application's instances use, with the versions seen (Unleash's
/// `projectApplicationSdkSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectApplicationSdk {
    /// The SDK's name, e.g. `unleash-client-node`.
    pub name: String,
    /// Its versions, e.g. `5.3.2`.
    pub versions: Vec<String>,
}

/// An application that used a project's features (Unleash's `projectApplicationSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectApplication {
    /// The application's name.
    pub name: String,
    /// The environments it reported the project's features in.
    pub environments: Vec<String>,
    /// Its instances in those environments, by id.
    pub instances: Vec<String>,
    /// The SDKs those instances use.
    pub sdks: Vec<ProjectApplicationSdk>,
}

/// `GET /api/admin/projects/{projectId}/applications` (Unleash's `projectApplicationsSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ProjectApplications {
    /// How many applications match (before paging).
    pub total: usize,
    /// The page, by name.
    pub applications: Vec<ProjectApplication>,
}

/// What may be wrong with an application in one environment (Unleash's
/// `applicationEnvironmentIssuesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationEnvironmentIssues {
    /// Features it reported that do not exist.
    pub missing_features: Vec<String>,
    /// Its SDK versions older than Unleash's recommended minimum.
    pub outdated_sdks: Vec<String>,
}

/// An application in one environment (Unleash's `applicationOverviewEnvironmentSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationOverviewEnvironment {
    /// The environment.
    pub name: String,
    /// Its instances there seen in the last 24 hours.
    pub instance_count: usize,
    /// Their SDK versions (`name:version`), sorted.
    pub sdks: Vec<String>,
    /// Always empty: an SDK's kind is not recorded here, so every SDK is listed as a backend
    /// one.
    pub frontend_sdks: Vec<String>,
    /// Their SDK versions.
    pub backend_sdks: Vec<String>,
    /// When an instance there was last seen.
    #[serde(with = "super::timestamp")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub last_seen: Option<DateTime<Utc>>,
    /// What may be wrong there.
    pub issues: ApplicationEnvironmentIssues,
}

/// What may be wrong with an application as a whole (Unleash's
/// `applicationOverviewIssuesSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationOverviewIssues {
    /// Strategies it implements that are not defined here.
    pub missing_strategies: Vec<String>,
}

/// `GET /api/admin/metrics/applications/{appName}/overview` (Unleash's
/// `applicationOverviewSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ApplicationOverview {
    /// The projects of the features it reported, by id.
    pub projects: Vec<String>,
    /// How many features it reported.
    pub feature_count: usize,
    /// The environments it reported from or runs in, by name.
    pub environments: Vec<ApplicationOverviewEnvironment>,
    /// What may be wrong with it.
    pub issues: ApplicationOverviewIssues,
}

/// An instance of an application in one environment (Unleash's
/// `applicationEnvironmentInstancesSchema` item).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentInstance {
    /// The instance's id.
    pub instance_id: String,
    /// Its SDK version.
    pub sdk_version: Option<String>,
    /// Always `null`: client addresses are not recorded here.
    pub client_ip: Option<String>,
    /// When it was last seen.
    #[serde(with = "super::timestamp")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub last_seen: Option<DateTime<Utc>>,
}

/// `GET /api/admin/metrics/instances/{appName}/environment/{environment}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct EnvironmentInstances {
    /// The instances seen in the last 24 hours, most recently seen first.
    pub instances: Vec<EnvironmentInstance>,
}
