//! Registered client applications (SPEC §2.18), addressed by name.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A client application that registered with the service (SPEC §2.18): addressed by `name`,
/// the only required field. Its other fields are not shown by the specification; these are
/// Unleash's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Application {
    /// The application's name (`appName` when clients register).
    pub name: String,
    /// What the application is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where the application lives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Display colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// Display icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The running instances that reported in; empty when absent.
    #[serde(default)]
    pub instances: Vec<ApplicationInstance>,
}

/// One running instance of an [`Application`]: `instanceId` is required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
            "name": "app",
            "icon": "x",
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
