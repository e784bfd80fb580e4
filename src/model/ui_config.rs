//! The server's configuration as Unleash's admin UI and the tools built on it read it
//! (`GET /api/admin/ui-config`, Unleash's `uiConfigSchema`): which server this is, where it
//! is, how people sign in, and whether it is in maintenance mode.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The Unleash version whose admin API this crate speaks: what `version` and
/// `versionInfo.current.oss` of [`AdminUiConfig`] answer.
///
/// Clients gate features on that number, as they would against Unleash (e.g. "feature-level
/// variants from 4.x on", "the delta API from 6.x on"): answering this crate's own version
/// (0.x) there would make them take this server for an ancient Unleash and fall back to
/// older, or no, behaviour, although the API is 6.10.1's.
pub const UNLEASH_VERSION: &str = "6.10.1";

/// This crate's own version (its Cargo package version), as [`AdminUiConfig::slogan`] shows
/// it next to [`UNLEASH_VERSION`].
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Unleash's `uiConfigSchema`: `GET /api/admin/ui-config`.
///
/// Every member is within Unleash's schema (which allows no others), so a client that
/// validates the answer strictly accepts it:
///
/// * `version` and `versionInfo.current.oss` are [`UNLEASH_VERSION`], the Unleash version
///   this API is wire-compatible with, so that clients comparing versions behave as against
///   that Unleash; `name` is `toggle-admin`, and `slogan` says both versions
///   (`toggle-admin <crate version>, wire-compatible with Unleash 6.10.1`), so that a person
///   or a tool can still tell which server and build answers.
/// * `versionInfo.latest` is empty and `isLatest` true: this service asks nobody what the
///   latest version is (Unleash's answer when its version check is off).
/// * `environment` is `Open Source`, Unleash's for its open-source build (clients read
///   `Pro`/`Enterprise` there, and an `enterprise` current version, as a paid plan).
/// * `authenticationType` is `custom`: people and tools sign in with keys, not with
///   Unleash's password login (`open-source`), and there is authentication (`none` would
///   say there is not); `disablePasswordAuth` is therefore true and `emailEnabled` false.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdminUiConfig {
    /// The product's name: `toggle-admin`.
    pub name: String,
    /// Which server and build this is, in words: `toggle-admin <crate version>,
    /// wire-compatible with Unleash <Unleash version>`.
    pub slogan: String,
    /// The Unleash version this API is compatible with ([`UNLEASH_VERSION`]).
    pub version: String,
    /// Version details, as Unleash's version service reports them.
    pub version_info: VersionInfo,
    /// `Open Source`.
    pub environment: String,
    /// The service's public URL: the one it was configured with, else the address the
    /// request was sent to (its `X-Forwarded-Proto`/`X-Forwarded-Host`, else its `Host`);
    /// empty when neither is known.
    pub unleash_url: String,
    /// The path the service is served under (the configured public URL's path, without a
    /// trailing `/`); empty at the root.
    pub base_uri_path: String,
    /// How people sign in: `custom` (keys).
    pub authentication_type: String,
    /// Always true: there are no passwords.
    pub disable_password_auth: bool,
    /// Always false: this service sends no email.
    pub email_enabled: bool,
    /// Whether maintenance mode is on (every change refused).
    pub maintenance_mode: bool,
    /// Always false: there is no Prometheus query API behind this service (its own metrics
    /// are at the Prometheus endpoint, when configured).
    #[serde(rename = "prometheusAPIAvailable")]
    pub prometheus_api_available: bool,
    /// The origins browsers may call the frontend API from (`*` for any).
    pub frontend_api_origins: Vec<String>,
    /// The UI flags that describe this API: `enableLegacyVariants` (feature-level variants
    /// are served).
    pub flags: BTreeMap<String, bool>,
}

/// Unleash's `versionSchema`: the version running and the latest known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionInfo {
    /// The version running.
    pub current: VersionNumbers,
    /// The latest version known: empty, as this service asks nobody.
    pub latest: VersionNumbers,
    /// Always true (nothing newer is known).
    pub is_latest: bool,
}

/// Versions of Unleash's open-source and enterprise builds (Unleash's `versionSchema`
/// `current` and `latest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct VersionNumbers {
    /// The open-source version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oss: Option<String>,
    /// The enterprise version: never set here (clients read one as a paid plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enterprise: Option<String>,
}
