//! The frontend API's answer (Unleash's `frontendApiFeaturesSchema`): the flags evaluated for
//! one caller's context, without their rules.
//!
//! `unleash_types::frontend` has types of the same name, but not Unleash's shape: its variant
//! lacks `feature_enabled`, writes `payload: null` when there is none, and its toggle adds an
//! `impression_data` twin. These follow what Unleash 6.10.1 answers (its `getVariant` result:
//! `feature_enabled` and the deprecated `featureEnabled` both set).

use serde::{Deserialize, Serialize};
use unleash_types::client_features::Payload;

/// `{toggles: [...]}`: the answer of `GET /api/frontend` and `/api/frontend/all`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontendFeatures {
    /// The flags, by name.
    pub toggles: Vec<FrontendToggle>,
}

/// One flag evaluated for a context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontendToggle {
    /// The flag's name.
    pub name: String,
    /// Whether it is enabled for the context (always `true` at `/api/frontend`, which lists
    /// the enabled ones only).
    pub enabled: bool,
    /// Whether the SDK should emit impression events for it.
    pub impression_data: bool,
    /// The variant chosen for the context (`disabled` when there is none).
    pub variant: FrontendVariant,
}

/// The variant a flag gives a context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontendVariant {
    /// The variant's name; `disabled` when the flag is off or has no variants.
    pub name: String,
    /// Whether a variant was chosen.
    pub enabled: bool,
    /// Whether the flag itself is enabled for the context.
    pub feature_enabled: bool,
    /// The same, under the deprecated name Unleash still writes.
    #[serde(rename = "featureEnabled")]
    pub feature_enabled_deprecated: bool,
    /// The variant's payload, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
}
