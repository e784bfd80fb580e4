//! The server's configuration as Unleash's admin UI and the tools built on it read it
//! (`GET /api/admin/ui-config`): which server this is and which Unleash it speaks for, where
//! it is, how people sign in, and whether maintenance mode is on.

use std::collections::BTreeMap;

use super::ToggleAdmin;
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{AdminUiConfig, CRATE_VERSION, UNLEASH_VERSION, VersionInfo, VersionNumbers};

/// The UI flags answered: feature-level variants are served (Unleash's
/// `enableLegacyVariants`, which its UI reads to offer them).
const FLAGS: [(&str, bool); 1] = [("enableLegacyVariants", true)];

impl ToggleAdmin {
    /// The server's configuration (`GET /api/admin/ui-config`, Unleash's `uiConfigSchema`;
    /// see [`AdminUiConfig`] for every member and why it says what it says). Any admin-API
    /// key may read it (Unleash: any signed-in user); maintenance mode is read from the store.
    ///
    /// `unleash_url` is the service's public URL as the caller knows it (the HTTP router's
    /// configured one, else the address the request was sent to; empty if unknown): it is
    /// answered as `unleashUrl`, and its path, without a trailing `/`, as `baseUriPath`.
    /// `frontend_api_origins` are the origins the frontend API allows.
    pub async fn ui_config(
        &self,
        caller: &Caller,
        unleash_url: &str,
        frontend_api_origins: &[String],
    ) -> Result<AdminUiConfig> {
        self.require(caller, &[]).await?;
        let (_, maintenance_mode) = self.read_maintenance().await?;
        let unleash_url = unleash_url.trim_end_matches('/');
        Ok(AdminUiConfig {
            name: "toggle-admin".to_owned(),
            slogan: format!(
                "toggle-admin {CRATE_VERSION}, wire-compatible with Unleash {UNLEASH_VERSION}"
            ),
            version: UNLEASH_VERSION.to_owned(),
            version_info: VersionInfo {
                current: VersionNumbers {
                    oss: Some(UNLEASH_VERSION.to_owned()),
                    enterprise: None,
                },
                latest: VersionNumbers::default(),
                is_latest: true,
            },
            environment: "Open Source".to_owned(),
            base_uri_path: base_uri_path(unleash_url).to_owned(),
            unleash_url: unleash_url.to_owned(),
            authentication_type: "custom".to_owned(),
            disable_password_auth: true,
            email_enabled: false,
            maintenance_mode,
            prometheus_api_available: false,
            frontend_api_origins: frontend_api_origins.to_vec(),
            flags: FLAGS
                .iter()
                .map(|(name, on)| ((*name).to_owned(), *on))
                .collect::<BTreeMap<_, _>>(),
        })
    }
}

/// The path of `url` (`https://example.com/flags` → `/flags`), without a trailing `/`, query
/// or fragment; empty for a URL at the root, or for text that is no absolute URL.
fn base_uri_path(url: &str) -> &str {
    let Some((_, rest)) = url.split_once("://") else {
        return "";
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    match rest.find('/') {
        Some(start) => rest[start..].trim_end_matches('/'),
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::base_uri_path;

    #[test]
    fn the_base_path_is_the_urls_path_without_its_trailing_slash() {
        assert_eq!(base_uri_path("https://flags.example.com"), "");
        assert_eq!(base_uri_path("https://flags.example.com/"), "");
        assert_eq!(
            base_uri_path("https://example.com/ops/flags/"),
            "/ops/flags"
        );
        assert_eq!(base_uri_path("http://127.0.0.1:4242/u?x=/y#/z"), "/u");
        assert_eq!(base_uri_path("http://host?x=/y"), "");
        assert_eq!(base_uri_path(""), "");
        assert_eq!(base_uri_path("/relative/path"), "");
    }
}
