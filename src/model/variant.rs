//! Variants: environment-level, strategy-level, their payload and
//! the variants response.

use serde::{Deserialize, Serialize};

/// How a variant's weight is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum WeightType {
    /// Shares what the fixed variants leave of 1000 evenly with the other variable variants.
    Variable,
    /// Has exactly its weight.
    Fix,
}

impl WeightType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            WeightType::Variable => "variable",
            WeightType::Fix => "fix",
        }
    }
}

/// The kind of a payload's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum PayloadType {
    /// A JSON document (the value must parse as JSON).
    Json,
    /// Comma-separated values.
    Csv,
    /// A plain string.
    String,
    /// A number (the value must parse as a number).
    Number,
}

impl PayloadType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            PayloadType::Json => "json",
            PayloadType::Csv => "csv",
            PayloadType::String => "string",
            PayloadType::Number => "number",
        }
    }

    /// The payload type named `name` on the wire.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "json" => Some(PayloadType::Json),
            "csv" => Some(PayloadType::Csv),
            "string" => Some(PayloadType::String),
            "number" => Some(PayloadType::Number),
            _ => None,
        }
    }
}

/// Extra data handed to the client with a variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Payload {
    /// What kind of content `value` holds.
    #[serde(rename = "type")]
    pub payload_type: PayloadType,
    /// The content, always a string.
    pub value: String,
}

/// Context values that select a variant regardless of weights.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Override {
    /// The context field compared.
    pub context_name: String,
    /// The values that select the variant.
    pub values: Vec<String>,
}

/// An environment-level variant, also the deprecated feature-level one.
///
/// Optional fields are kept optional so that documents made by Unleash round-trip exactly;
/// variants that went through [`patch_variants`](crate::ToggleAdmin::patch_variants) or
/// [`set_variants`](crate::ToggleAdmin::set_variants) always have `weightType` and
/// `stickiness` filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// Unique within the feature; 1–100 URL-friendly characters.
    pub name: String,
    /// 0..=1000.
    #[cfg_attr(feature = "http", schema(maximum = 1000))]
    pub weight: u32,
    /// `variable` or `fix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_type: Option<WeightType>,
    /// The context field that keeps a user on the same variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickiness: Option<String>,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// Context values that select this variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<Vec<Override>>,
}

/// A strategy-level variant: every field but the payload is required.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct StrategyVariant {
    /// Unique within the strategy.
    pub name: String,
    /// 0..=1000.
    #[cfg_attr(feature = "http", schema(maximum = 1000))]
    pub weight: u32,
    /// `variable` or `fix`.
    pub weight_type: WeightType,
    /// The context field used for distribution.
    pub stickiness: String,
    /// Extra data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
}

/// The response of the variants patch: `{version, variants}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureVariants {
    /// The version of the feature-variants schema: always 1.
    pub version: u32,
    /// The environment's variants after the change, in Unleash's name order.
    pub variants: Vec<Variant>,
}

/// One JSON Patch operation, as the variants patch body lists them.
pub type PatchOperation = json_patch::PatchOperation;

/// The same variants for several environments of a feature at once: Unleash's
/// `pushVariantsSchema`, the body of `PUT …/features/{featureName}/variants-batch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct VariantsOnEnvironments {
    /// The variants, as JSON: checked and weighed as a `PUT …/variants` list is, so that
    /// each problem is named by its path (`/variants/0/weight`). Required.
    #[serde(default)]
    #[cfg_attr(feature = "http", schema(value_type = Vec<Variant>))]
    pub variants: serde_json::Value,
    /// The environments to give them, by name. Required, at least one.
    #[serde(default)]
    pub environments: Vec<String>,
}
