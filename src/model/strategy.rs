//! Activation strategies and their constraints.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::StrategyVariant;

/// A constraint operator: one of the 15 names Unleash knows. Any other name is
/// refused when deserialising.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Operator {
    /// The context value is not one of `values`.
    NotIn,
    /// The context value is one of `values`.
    In,
    /// The context value ends with one of `values`.
    StrEndsWith,
    /// The context value starts with one of `values`.
    StrStartsWith,
    /// The context value contains one of `values`.
    StrContains,
    /// The context value equals the number `value`.
    NumEq,
    /// The context value is greater than the number `value`.
    NumGt,
    /// The context value is greater than or equal to the number `value`.
    NumGte,
    /// The context value is less than the number `value`.
    NumLt,
    /// The context value is less than or equal to the number `value`.
    NumLte,
    /// The context value is a date after the date `value`.
    DateAfter,
    /// The context value is a date before the date `value`.
    DateBefore,
    /// The context value equals the semantic version `value`.
    SemverEq,
    /// The context value is a semantic version greater than `value`.
    SemverGt,
    /// The context value is a semantic version less than `value`.
    SemverLt,
}

impl Operator {
    /// All operators, in the order Unleash lists them.
    pub const ALL: [Operator; 15] = [
        Operator::NotIn,
        Operator::In,
        Operator::StrEndsWith,
        Operator::StrStartsWith,
        Operator::StrContains,
        Operator::NumEq,
        Operator::NumGt,
        Operator::NumGte,
        Operator::NumLt,
        Operator::NumLte,
        Operator::DateAfter,
        Operator::DateBefore,
        Operator::SemverEq,
        Operator::SemverGt,
        Operator::SemverLt,
    ];

    /// The wire name, e.g. `STR_STARTS_WITH`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::NotIn => "NOT_IN",
            Operator::In => "IN",
            Operator::StrEndsWith => "STR_ENDS_WITH",
            Operator::StrStartsWith => "STR_STARTS_WITH",
            Operator::StrContains => "STR_CONTAINS",
            Operator::NumEq => "NUM_EQ",
            Operator::NumGt => "NUM_GT",
            Operator::NumGte => "NUM_GTE",
            Operator::NumLt => "NUM_LT",
            Operator::NumLte => "NUM_LTE",
            Operator::DateAfter => "DATE_AFTER",
            Operator::DateBefore => "DATE_BEFORE",
            Operator::SemverEq => "SEMVER_EQ",
            Operator::SemverGt => "SEMVER_GT",
            Operator::SemverLt => "SEMVER_LT",
        }
    }

    /// The operator named `name` on the wire (case-sensitive), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Operator::ALL.into_iter().find(|op| op.as_str() == name)
    }

    /// Whether the operator compares against several values (`values`): `IN`, `NOT_IN` and
    /// the `STR_*` operators. The others (`NUM_*`, `DATE_*`, `SEMVER_*`) take a single `value`.
    pub fn takes_values(self) -> bool {
        matches!(
            self,
            Operator::In
                | Operator::NotIn
                | Operator::StrEndsWith
                | Operator::StrStartsWith
                | Operator::StrContains
        )
    }

    /// Whether the operator compares against a single `value`: the `NUM_*`, `DATE_*` and
    /// `SEMVER_*` operators. The negation of [`takes_values`](Operator::takes_values).
    pub fn takes_single_value(self) -> bool {
        !self.takes_values()
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A constraint on a strategy: `contextName` and `operator` are required.
///
/// `caseInsensitive` and `inverted` default to false; they stay `None` when absent so that
/// documents round-trip exactly (see [`is_case_insensitive`](Constraint::is_case_insensitive)
/// and [`is_inverted`](Constraint::is_inverted)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    /// The context field the constraint applies to.
    pub context_name: String,
    /// How the context value is compared.
    pub operator: Operator,
    /// Compare strings ignoring case. Default false (case sensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_insensitive: Option<bool>,
    /// Turn a true result into false and the reverse. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inverted: Option<bool>,
    /// The values, for operators that take several ([`Operator::takes_values`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// The value, for operators that take a single one; at least one character.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl Constraint {
    /// `caseInsensitive`, false when absent.
    pub fn is_case_insensitive(&self) -> bool {
        self.case_insensitive.unwrap_or(false)
    }

    /// `inverted`, false when absent.
    pub fn is_inverted(&self) -> bool {
        self.inverted.unwrap_or(false)
    }
}

/// An activation strategy of a feature in an environment: only `name` is required.
///
/// `segments`, `constraints`, `variants` and `parameters` default to empty and are always
/// written, as Unleash's exports always carry them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureStrategy {
    /// UUID of the strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Name or type of the strategy, e.g. `flexibleRollout`.
    pub name: String,
    /// Descriptive title; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<Option<String>>,
    /// A disabled strategy is not evaluated and not returned to client SDKs. Nullable; default
    /// false.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub disabled: Option<Option<bool>>,
    /// The feature the strategy belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_name: Option<String>,
    /// Position in the list of strategies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    /// Ids of attached segments.
    #[serde(default)]
    pub segments: Vec<i64>,
    /// Constraints, all of which must hold.
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    /// Strategy-level variants.
    #[serde(default)]
    pub variants: Vec<StrategyVariant>,
    /// Parameter name to string value, e.g. `rollout` → `"50"`.
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    /// Keys this version does not know, kept so that round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

impl FeatureStrategy {
    /// A strategy of type `name` (`default`, `flexibleRollout`, …), every other field absent:
    /// build the rest with the `with_…` methods instead of spelling the nullable fields'
    /// `Option<Option<…>>` (outer `None`: absent; `Some(None)`: JSON `null`).
    ///
    /// ```
    /// use toggle_admin::model::FeatureStrategy;
    /// let rollout = FeatureStrategy::new("flexibleRollout")
    ///     .with_title("Half of the users")
    ///     .with_parameter("rollout", "50")
    ///     .with_disabled(false);
    /// assert_eq!(rollout.title, Some(Some("Half of the users".to_owned())));
    /// assert!(!rollout.is_disabled());
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(Some(title.into()));
        self
    }

    /// Disabled (not evaluated, not returned to client SDKs) or not.
    pub fn with_disabled(mut self, disabled: bool) -> Self {
        self.disabled = Some(Some(disabled));
        self
    }

    /// With the parameter `name` set to `value`.
    pub fn with_parameter(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.parameters.insert(name.into(), value.into());
        self
    }

    /// `disabled`, false when absent or `null`.
    pub fn is_disabled(&self) -> bool {
        self.disabled.flatten().unwrap_or(false)
    }
}

/// A strategy's new position, an item of the body of Unleash's
/// `POST …/environments/{environment}/strategies/set-sort-order`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StrategySortOrder {
    /// The strategy's id.
    pub id: String,
    /// Its new sort order; strategies are listed and evaluated in ascending sort order.
    pub sort_order: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_names_round_trip() {
        for op in Operator::ALL {
            let json = serde_json::to_value(op).unwrap();
            assert_eq!(json, Value::String(op.as_str().to_owned()));
            assert_eq!(serde_json::from_value::<Operator>(json).unwrap(), op);
            assert_eq!(Operator::from_name(op.as_str()), Some(op));
        }
        assert_eq!(Operator::from_name("in"), None);
    }

    #[test]
    fn operator_value_shape() {
        let several: Vec<_> = Operator::ALL
            .into_iter()
            .filter(|op| op.takes_values())
            .map(Operator::as_str)
            .collect();
        assert_eq!(
            several,
            [
                "NOT_IN",
                "IN",
                "STR_ENDS_WITH",
                "STR_STARTS_WITH",
                "STR_CONTAINS"
            ]
        );
        assert!(Operator::SemverLt.takes_single_value());
    }

    #[test]
    fn strategy_defaults() {
        let s: FeatureStrategy = serde_json::from_str(r#"{"name":"default"}"#).unwrap();
        assert!(!s.is_disabled());
        assert_eq!(s.title, None);
        let s: FeatureStrategy =
            serde_json::from_str(r#"{"name":"default","title":null,"disabled":null}"#).unwrap();
        assert_eq!(s.title, Some(None));
        assert_eq!(s.disabled, Some(None));
    }
}
