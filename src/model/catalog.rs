//! The catalogue an import draws on: strategy definitions (the kinds of activation strategy).
//! Context fields, segments and tag types have files of their own.

use serde::{Deserialize, Serialize};

/// A kind of activation strategy, e.g. `flexibleRollout`: `name` is required.
///
/// Unleash's built-ins (`default`, `userWithId`, `gradualRolloutRandom`,
/// `gradualRolloutSessionId`, `gradualRolloutUserId`, `applicationHostname`, `remoteAddress`,
/// `flexibleRollout`) always exist and are not editable; custom ones are created with
/// [`create_strategy_definition`](crate::ToggleAdmin::create_strategy_definition).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StrategyDefinition {
    /// The name strategies use to refer to it; 1–100 URL-friendly characters.
    pub name: String,
    /// A name for people; `null` when it has none, as Unleash shows it.
    #[serde(default)]
    pub display_name: Option<String>,
    /// A title for people; `null` when it has none, as Unleash shows it.
    #[serde(default)]
    pub title: Option<String>,
    /// What it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// False for the built-ins, true for custom definitions.
    #[serde(default)]
    pub editable: bool,
    /// Whether it is deprecated (still usable).
    #[serde(default)]
    pub deprecated: bool,
    /// The parameters strategies of this kind take.
    #[serde(default)]
    pub parameters: Vec<StrategyParameter>,
}

/// A parameter of a [`StrategyDefinition`]: `name` and `type` are required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct StrategyParameter {
    /// The parameter's name, as a key of a strategy's `parameters`.
    pub name: String,
    /// One of `string`, `percentage`, `list`, `number`, `boolean`.
    #[serde(rename = "type")]
    pub parameter_type: String,
    /// What it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a strategy must give it.
    #[serde(default)]
    pub required: bool,
}

/// A name to check before creating the thing it names (Unleash's `nameSchema`):
/// `POST /api/admin/segments/validate`, `POST /api/admin/context/validate`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NameCheck {
    /// The name.
    pub name: String,
}
