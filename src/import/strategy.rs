//! One activation strategy checked and normalised, shared by the import and by
//! strategies added one at a time.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Issues;
use super::constraints::check_constraints;
use crate::model::{ContextField, FeatureStrategy};

/// The keys a strategy may have.
const KNOWN_KEYS: [&str; 10] = [
    "id",
    "name",
    "title",
    "disabled",
    "featureName",
    "sortOrder",
    "segments",
    "constraints",
    "variants",
    "parameters",
];

/// The strategy Unleash adds when a feature is enabled with none, and whose parameters it
/// defaults.
pub const FLEXIBLE_ROLLOUT: &str = "flexibleRollout";

/// What a strategy is checked against.
pub struct StrategyContext<'a> {
    /// The feature the strategy belongs to.
    pub feature: &'a str,
    /// Whether a strategy definition of that name exists (built-ins included).
    pub strategy_exists: &'a dyn Fn(&str) -> bool,
    /// A context field by name (built-ins included).
    pub context_field: &'a dyn Fn(&str) -> Option<&'a ContextField>,
    /// The stored segment id for a segment id of the input, or why there is none.
    pub segment: &'a dyn Fn(i64) -> Result<i64, String>,
}

/// Checks the strategy `raw` at `path` and returns it normalised, or `None` after recording
/// its problems in `issues`.
///
/// Normalised means: `featureName` set to the feature, `id` cleared (the caller assigns one),
/// `title` and `disabled` present (`null`/false when absent), segments mapped to stored ids,
/// strategy variants validated, weighted and sorted, and for `flexibleRollout` the
/// parameters defaulted as Unleash does: `rollout` 100, `stickiness` `default`, `groupId` the
/// feature's name. Numbers and booleans given as parameter values become strings (Unleash's
/// schema coerces them too).
pub fn normalise_strategy(
    raw: &Value,
    path: &str,
    ctx: &StrategyContext<'_>,
    issues: &mut Issues,
) -> Option<FeatureStrategy> {
    let Value::Object(fields) = raw else {
        issues.error(path, "a strategy must be an object");
        return None;
    };
    issues.unknown_keys(fields, path, &KNOWN_KEYS);
    let before = issues.errors.len();
    let name = match fields.get("name") {
        Some(Value::String(name)) if (ctx.strategy_exists)(name) => Some(name.clone()),
        Some(Value::String(name)) => {
            issues.error(
                format!("{path}.name"),
                format!(
                    "there is no strategy definition named \"{name}\"; custom strategies must be created first"
                ),
            );
            None
        }
        _ => {
            issues.error(
                format!("{path}.name"),
                "name is required: the strategy's kind",
            );
            None
        }
    };
    let title = match fields.get("title") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.clone()),
        Some(_) => {
            issues.error(format!("{path}.title"), "title must be a string or null");
            None
        }
    };
    // Absent is false; an explicit `null` is kept, as Unleash stores and returns it (a null
    // strategy is not disabled).
    let disabled = match fields.get("disabled") {
        None => Some(false),
        Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            issues.error(
                format!("{path}.disabled"),
                "disabled must be a boolean or null",
            );
            None
        }
    };
    let sort_order = match fields.get("sortOrder") {
        None | Some(Value::Null) => None,
        Some(v) => integer(v).or_else(|| {
            issues.error(format!("{path}.sortOrder"), "sortOrder must be an integer");
            None
        }),
    };
    let segments = check_segments(fields.get("segments"), path, ctx, issues);
    let constraints = check_constraints(
        fields.get("constraints"),
        &format!("{path}.constraints"),
        ctx.context_field,
        issues,
    );
    let variants = match fields.get("variants") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(raw) => {
            match crate::variants::validate_strategy_variants(raw, &format!("{path}.variants")) {
                Ok(v) => Some(v),
                Err(e) => {
                    issues.errors.extend(e.details().iter().cloned());
                    None
                }
            }
        }
    };
    let mut parameters = check_parameters(fields.get("parameters"), path, issues);
    if let (Some(FLEXIBLE_ROLLOUT), Some(params)) = (name.as_deref(), parameters.as_mut()) {
        default_flexible_rollout(params, ctx.feature, path, issues);
    }
    if issues.errors.len() > before {
        return None;
    }
    Some(FeatureStrategy {
        id: None,
        name: name?,
        title: Some(title),
        disabled: Some(disabled),
        feature_name: Some(ctx.feature.to_owned()),
        sort_order,
        segments: segments?,
        constraints: constraints?,
        variants: variants?,
        parameters: parameters?,
        extra: serde_json::Map::new(),
    })
}

/// The default strategy Unleash adds when a feature is enabled with no strategy:
/// `flexibleRollout` at 100 %, stickiness `default`, grouped by the feature's name.
pub fn default_strategy(feature: &str) -> FeatureStrategy {
    let mut parameters = BTreeMap::new();
    default_flexible_rollout(&mut parameters, feature, "", &mut Issues::default());
    FeatureStrategy {
        name: FLEXIBLE_ROLLOUT.to_owned(),
        title: Some(None),
        disabled: Some(Some(false)),
        feature_name: Some(feature.to_owned()),
        sort_order: Some(0),
        parameters,
        ..FeatureStrategy::default()
    }
}

/// The strategy `feature` gets when it is enabled in `environment` of `project` with no
/// (enabled) strategy, as Unleash chooses it: the project's default strategy for that
/// environment when one is set (its `groupId`, when empty, becoming the feature's name), else
/// [`default_strategy`]. Without an id; sort order 0.
pub fn enabling_strategy(
    project: Option<&crate::model::Project>,
    environment: &str,
    feature: &str,
) -> FeatureStrategy {
    let Some(chosen) = project.and_then(|p| p.default_strategies.get(environment)) else {
        return default_strategy(feature);
    };
    let mut strategy = chosen.clone();
    strategy.id = None;
    strategy.feature_name = Some(feature.to_owned());
    strategy.sort_order = Some(0);
    strategy.disabled = Some(Some(false));
    if strategy
        .parameters
        .get("groupId")
        .is_none_or(|g| g.is_empty())
    {
        strategy
            .parameters
            .insert("groupId".to_owned(), feature.to_owned());
    }
    strategy
}

/// Fills in and checks `flexibleRollout` parameters.
fn default_flexible_rollout(
    params: &mut BTreeMap<String, String>,
    feature: &str,
    path: &str,
    issues: &mut Issues,
) {
    let rollout = params
        .entry("rollout".to_owned())
        .or_insert_with(|| "100".to_owned());
    if !rollout.parse::<u8>().is_ok_and(|r| r <= 100) {
        issues.error(
            format!("{path}.parameters.rollout"),
            format!("rollout must be a whole percentage 0–100, not \"{rollout}\""),
        );
    }
    params
        .entry("stickiness".to_owned())
        .or_insert_with(|| "default".to_owned());
    params
        .entry("groupId".to_owned())
        .or_insert_with(|| feature.to_owned());
}

/// The segment ids, mapped to stored ids, duplicates dropped.
fn check_segments(
    raw: Option<&Value>,
    path: &str,
    ctx: &StrategyContext<'_>,
    issues: &mut Issues,
) -> Option<Vec<i64>> {
    let items = match raw {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            issues.error(
                format!("{path}.segments"),
                "segments must be an array of ids",
            );
            return None;
        }
    };
    let mut ids = Vec::new();
    let mut ok = true;
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}.segments[{i}]");
        match integer(item).map(ctx.segment) {
            None => {
                issues.error(at, "a segment id must be an integer");
                ok = false;
            }
            Some(Err(problem)) => {
                issues.error(at, problem);
                ok = false;
            }
            Some(Ok(id)) if !ids.contains(&id) => ids.push(id),
            Some(Ok(_)) => {}
        }
    }
    ok.then_some(ids)
}

/// An integer given as a JSON integer, a float without a fraction (`2.0`) or a decimal string
/// (`"2"`): Unleash's schema types these as `number` and coerces strings.
fn integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The parameters as strings.
fn check_parameters(
    raw: Option<&Value>,
    path: &str,
    issues: &mut Issues,
) -> Option<BTreeMap<String, String>> {
    let fields = match raw {
        None | Some(Value::Null) => return Some(BTreeMap::new()),
        Some(Value::Object(fields)) => fields,
        Some(_) => {
            issues.error(
                format!("{path}.parameters"),
                "parameters must be an object of strings",
            );
            return None;
        }
    };
    let mut out = BTreeMap::new();
    let mut ok = true;
    for (key, value) in fields {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                issues.error(
                    format!("{path}.parameters.{key}"),
                    "a parameter value must be a string",
                );
                ok = false;
                continue;
            }
        };
        out.insert(key.clone(), text);
    }
    ok.then_some(out)
}
