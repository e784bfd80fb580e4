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
