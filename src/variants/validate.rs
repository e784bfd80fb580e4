//! Validation of a whole variant list, environment- or strategy-level.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::weights::{TOTAL_WEIGHT, distribute};
use super::{describe, order::sort_named, problems};
use crate::error::pointer_token;
use crate::error::{Error, ErrorDetail};
use crate::model::{Override, Payload, PayloadType, StrategyVariant, Variant, WeightType};

/// Longest allowed variant name, in characters.
const MAX_NAME_LEN: usize = 100;

/// Most variants a list may hold: one per unit of weight (weights are in thousandths), so
/// that every variable variant can get some traffic. A longer list (a 10,000-operation patch,
/// say) is refused as a whole, without checking each variant.
pub(crate) const MAX_VARIANTS: usize = TOTAL_WEIGHT as usize;

/// The stickiness a variant gets when it names none.
const DEFAULT_STICKINESS: &str = "default";

/// Which kind of variant list is checked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// Environment-level: `weightType` and `stickiness` default, `overrides`
    /// allowed.
    Environment,
    /// Strategy-level: `weightType` and `stickiness` required, no `overrides`.
    Strategy,
}

impl Level {
    fn subject(self) -> &'static str {
        match self {
            Level::Environment => "variants",
            Level::Strategy => "strategy variants",
        }
    }

    fn allows(self, key: &str) -> bool {
        match key {
            "name" | "weight" | "weightType" | "stickiness" | "payload" => true,
            "overrides" => self == Level::Environment,
            _ => false,
        }
    }
}

/// One variant that passed every check, defaults applied.
struct Checked {
    name: String,
    weight: u32,
    weight_type: WeightType,
    stickiness: String,
    payload: Option<Payload>,
    overrides: Option<Vec<Override>>,
}

/// The problems found so far; paths are `prefix` followed by a JSON pointer.
struct Problems<'p> {
    prefix: &'p str,
    details: Vec<ErrorDetail>,
}

impl Problems<'_> {
    fn add(&mut self, pointer: &str, message: impl Into<String>) {
        self.details.push(ErrorDetail::at(
            format!("{}{pointer}", self.prefix),
            message,
        ));
    }
}

/// Validates an environment-level variant list (the result of a patch) as a whole.
///
/// Every problem is listed, each with a JSON pointer into `doc` (`/2/weight`,
/// `/0/payload/type`, `/1/overrides/0/values/2`, `/0/color`):
///
/// * `doc` is an array of objects;
/// * `name`: required, a string of 1–100 characters, URL-friendly (JavaScript's
///   `encodeURIComponent` leaves it unchanged: only `A–Z a–z 0–9 - _ . ! ~ * ' ( )`), not `.`
///   or `..`, unique in the list (a duplicate is reported at the later one's `/k/name`);
/// * `weight`: required, a JSON number that is an exact integer in 0..=1000. `1.0` and `-0`
///   are integers and accepted (JSON does not tell them from `1` and `0`, nor does Unleash);
///   `10.5`, `-1`, `1001` and the string `"100"` are errors;
/// * `weightType`: `variable` or `fix`, **default `variable`**;
/// * `stickiness`: a non-empty string, default `default`;
/// * `payload`: `{type, value}` with `type` one of `json`, `csv`, `string`, `number` and
///   `value` a string, which must parse as JSON for `json` and as a finite number (Rust's
///   `f64` syntax, no surrounding spaces) for `number`;
/// * `overrides`: an array of `{contextName: non-empty string, values: [string]}`;
/// * no other keys, at any level.
///
/// Returns the typed variants in the input order with the defaults applied (`weight_type` and
/// `stickiness` always `Some`). Weights are not distributed: see [`normalise_variants`].
///
/// Where we differ from Unleash: Unleash reports only the first problem, accepts numeric
/// strings as weights, accepts any payload type and checks only `json` values, and discards
/// the defaults it computed (dropping variants without `weightType` later).
pub fn validate_variants(doc: &Value) -> Result<Vec<Variant>, Error> {
    validate_variants_at(doc, "")
}

/// [`validate_variants`] with every error path after `path_prefix` (as
/// [`validate_strategy_variants`] writes them).
fn validate_variants_at(doc: &Value, path_prefix: &str) -> Result<Vec<Variant>, Error> {
    let checked = check_list(doc, path_prefix, Level::Environment)?;
    Ok(checked
        .into_iter()
        .map(|c| Variant {
            name: c.name,
            weight: c.weight,
            weight_type: Some(c.weight_type),
            stickiness: Some(c.stickiness),
            payload: c.payload,
            overrides: c.overrides,
        })
        .collect())
}

/// Validates, weighs and sorts an environment-level variant list: [`validate_variants`], then
/// [`distribute_weights`](super::distribute_weights), then
/// [`sort_by_name`](super::sort_by_name).
///
/// When validation finds problems they are all returned and the weights are not looked at.
pub fn normalise_variants(doc: &Value) -> Result<Vec<Variant>, Error> {
    normalise_variants_at(doc, "")
}

/// [`normalise_variants`] of a list inside a larger document: every error path is
/// `path_prefix` followed by a JSON pointer into `doc` (`/variants` + `/0/weight`).
pub fn normalise_variants_at(doc: &Value, path_prefix: &str) -> Result<Vec<Variant>, Error> {
    let mut variants = validate_variants_at(doc, path_prefix)?;
    distribute(&mut variants, path_prefix)?;
    super::sort_by_name(&mut variants);
    Ok(variants)
}

/// Validates, weighs and sorts a strategy-level variant list, as the import does.
///
/// The rules are those of [`validate_variants`] except that `weightType` and `stickiness` are
/// required and `overrides` is not allowed (an unknown key). The weights are then distributed
/// like [`distribute_weights`](super::distribute_weights) and the list sorted by name.
///
/// Every error path is `path_prefix` followed by a JSON pointer into `doc`, concatenated as
/// given: with the prefix `data.featureStrategies[2].variants`, a bad weight of the first
/// variant is reported at `data.featureStrategies[2].variants/0/weight`, and a problem with the
/// list as a whole (not an array, no variable variant) at the prefix itself.
///
/// Where we differ from Unleash: as for [`validate_variants`]; Unleash's import does not
/// redistribute strategy variant weights.
pub fn validate_strategy_variants(
    doc: &Value,
    path_prefix: &str,
) -> Result<Vec<StrategyVariant>, Error> {
    let checked = check_list(doc, path_prefix, Level::Strategy)?;
    let mut variants: Vec<StrategyVariant> = checked
        .into_iter()
        .map(|c| StrategyVariant {
            name: c.name,
            weight: c.weight,
            weight_type: c.weight_type,
            stickiness: c.stickiness,
            payload: c.payload,
        })
        .collect();
    distribute(&mut variants, path_prefix)?;
    sort_named(&mut variants, |variant| &variant.name);
    Ok(variants)
}

/// Checks the whole list, collecting every problem.
fn check_list(doc: &Value, prefix: &str, level: Level) -> Result<Vec<Checked>, Error> {
    let mut problems = Problems {
        prefix,
        details: Vec::new(),
    };
    let Value::Array(items) = doc else {
        problems.add(
            "",
            format!("must be an array of variants, not {}", describe(doc)),
        );
        return Err(self::problems(level.subject(), problems.details));
    };
    if items.len() > MAX_VARIANTS {
        problems.add(
            "",
            format!(
                "holds {} variants, more than the {MAX_VARIANTS} allowed (one per unit of weight)",
                items.len()
            ),
        );
        return Err(self::problems(level.subject(), problems.details));
    }
    let mut checked = Vec::with_capacity(items.len());
    let mut first_use: HashMap<&str, usize> = HashMap::new();
    // Paths are built into reused buffers: a valid list allocates none.
    let mut at = String::new();
    for (index, item) in items.iter().enumerate() {
        at.clear();
        let _ = write!(at, "/{index}");
        // Only valid names take part: an invalid one is reported as such already.
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .filter(|name| crate::names::name_problem(name, MAX_NAME_LEN).is_none());
        if let Some(name) = name {
            if let Some(first) = first_use.get(name) {
                problems.add(
                    &format!("{at}/name"),
                    format!("duplicate name `{name}`: variant {first} has it too"),
                );
            } else {
                first_use.insert(name, index);
            }
        }
        if let Some(variant) = check_variant(item, &at, level, &mut problems) {
            checked.push(variant);
        }
    }
    if problems.details.is_empty() {
        Ok(checked)
    } else {
        Err(self::problems(level.subject(), problems.details))
    }
}

/// `at/token` in `buffer`, for one call.
fn child<'b>(buffer: &'b mut String, at: &str, token: &str) -> &'b str {
    buffer.clear();
    buffer.push_str(at);
    buffer.push('/');
    buffer.push_str(token);
    buffer
}

/// Checks one variant at pointer `at`; `None` when it has a problem (recorded).
fn check_variant(item: &Value, at: &str, level: Level, problems: &mut Problems) -> Option<Checked> {
    let Value::Object(fields) = item else {
        problems.add(
            at,
            format!("must be a variant object, not {}", describe(item)),
        );
        return None;
    };
    let before = problems.details.len();
    let mut path = String::with_capacity(at.len() + 12);
    for key in fields.keys().filter(|key| !level.allows(key)) {
        problems.add(
            &format!("{at}/{}", pointer_token(key)),
            format!("unknown field `{key}`"),
        );
    }
    let name = check_name(fields.get("name"), child(&mut path, at, "name"), problems);
    let weight = check_weight(
        fields.get("weight"),
        child(&mut path, at, "weight"),
        problems,
    );
    let weight_type = check_weight_type(
        fields.get("weightType"),
        child(&mut path, at, "weightType"),
        level,
        problems,
    );
    let stickiness = check_stickiness(
        fields.get("stickiness"),
        child(&mut path, at, "stickiness"),
        level,
        problems,
    );
    let payload = fields
        .get("payload")
        .map(|payload| check_payload(payload, child(&mut path, at, "payload"), problems));
    let overrides = match fields.get("overrides") {
        Some(overrides) if level.allows("overrides") => Some(check_overrides(
            overrides,
            child(&mut path, at, "overrides"),
            problems,
        )),
        _ => None,
    };
    if problems.details.len() != before {
        return None;
    }
    Some(Checked {
        name: name?,
        weight: weight?,
        weight_type: weight_type?,
        stickiness: stickiness?,
        payload: payload.flatten(),
        overrides: overrides.flatten(),
    })
}

fn check_name(value: Option<&Value>, at: &str, problems: &mut Problems) -> Option<String> {
    let problem = match value {
        None => "name is required".to_owned(),
        Some(Value::String(name)) => match crate::names::name_problem(name, MAX_NAME_LEN) {
            None => return Some(name.clone()),
            Some(problem) => problem,
        },
        Some(other) => format!("name must be a string, not {}", describe(other)),
    };
    problems.add(at, problem);
    None
}

fn check_weight(value: Option<&Value>, at: &str, problems: &mut Problems) -> Option<u32> {
    let problem = match value {
        None => "weight is required".to_owned(),
        Some(Value::Number(number)) => match integer_weight(number) {
            Ok(weight) => return Some(weight),
            Err(problem) => problem,
        },
        Some(other) => format!(
            "weight must be an integer from 0 to {TOTAL_WEIGHT}, not {}",
            describe(other)
        ),
    };
    problems.add(at, problem);
    None
}

/// `number` as a weight: an exact integer in 0..=1000 (`1.0` and `-0` included).
fn integer_weight(number: &Number) -> Result<u32, String> {
    let out_of_range =
        || format!("weight must be an integer from 0 to {TOTAL_WEIGHT}, not {number}");
    if let Some(whole) = number.as_u64() {
        return u32::try_from(whole)
            .ok()
            .filter(|weight| *weight <= TOTAL_WEIGHT)
            .ok_or_else(out_of_range);
    }
    if number.as_i64().is_some() {
        return Err(out_of_range());
    }
    match number.as_f64() {
        Some(float) if float.fract() == 0.0 && (0.0..=f64::from(TOTAL_WEIGHT)).contains(&float) => {
            // An exact integer within 0..=1000, so the conversion is exact.
            Ok(float as u32)
        }
        Some(float) if float.fract() == 0.0 => Err(out_of_range()),
        _ => Err(format!("weight must be an integer, not {number}")),
    }
}

fn check_weight_type(
    value: Option<&Value>,
    at: &str,
    level: Level,
    problems: &mut Problems,
) -> Option<WeightType> {
    let problem = match value {
        None if level == Level::Environment => return Some(WeightType::Variable),
        None => "weightType is required".to_owned(),
        Some(Value::String(s)) if s == "variable" => return Some(WeightType::Variable),
        Some(Value::String(s)) if s == "fix" => return Some(WeightType::Fix),
        Some(other) => format!(
            "weightType must be \"variable\" or \"fix\", not {}",
            describe(other)
        ),
    };
    problems.add(at, problem);
    None
}

fn check_stickiness(
    value: Option<&Value>,
    at: &str,
    level: Level,
    problems: &mut Problems,
) -> Option<String> {
    let problem = match value {
        None if level == Level::Environment => return Some(DEFAULT_STICKINESS.to_owned()),
        None => "stickiness is required".to_owned(),
        Some(Value::String(s)) if s.is_empty() => "stickiness must not be empty".to_owned(),
        Some(Value::String(s)) => return Some(s.clone()),
        Some(other) => format!("stickiness must be a string, not {}", describe(other)),
    };
    problems.add(at, problem);
    None
}

fn check_payload(value: &Value, at: &str, problems: &mut Problems) -> Option<Payload> {
    let Value::Object(fields) = value else {
        problems.add(
            at,
            format!(
                "payload must be an object {{type, value}}, not {}",
                describe(value)
            ),
        );
        return None;
    };
    let before = problems.details.len();
    unknown_keys(fields, at, &["type", "value"], problems);
    let payload_type = match fields.get("type") {
        None => {
            problems.add(&format!("{at}/type"), "payload type is required");
            None
        }
        Some(Value::String(name)) if PayloadType::from_name(name).is_some() => {
            PayloadType::from_name(name)
        }
        Some(other) => {
            problems.add(
                &format!("{at}/type"),
                format!(
                    "payload type must be one of json, csv, string, number, not {}",
                    describe(other)
                ),
            );
            None
        }
    };
    let value = match fields.get("value") {
        None => {
            problems.add(&format!("{at}/value"), "payload value is required");
            None
        }
        Some(Value::String(content)) => Some(content.clone()),
        Some(other) => {
            problems.add(
                &format!("{at}/value"),
                format!("payload value must be a string, not {}", describe(other)),
            );
            None
        }
    };
    if let (Some(payload_type), Some(content)) = (payload_type, &value)
        && let Some(problem) = content_problem(payload_type, content)
    {
        problems.add(&format!("{at}/value"), problem);
    }
    if problems.details.len() != before {
        return None;
    }
    Some(Payload {
        payload_type: payload_type?,
        value: value?,
    })
}

/// What is wrong with a payload's `content` given its type, if anything.
fn content_problem(payload_type: PayloadType, content: &str) -> Option<String> {
    match payload_type {
        PayloadType::Json => serde_json::from_str::<Value>(content)
            .err()
            .map(|err| format!("payload value is not valid JSON: {err}")),
        PayloadType::Number => match content.parse::<f64>() {
            Ok(number) if number.is_finite() => None,
            _ => Some(format!(
                "payload value {} is not a number",
                Value::from(content)
            )),
        },
        PayloadType::Csv | PayloadType::String => None,
    }
}

fn check_overrides(value: &Value, at: &str, problems: &mut Problems) -> Option<Vec<Override>> {
    let Value::Array(items) = value else {
        problems.add(
            at,
            format!("overrides must be an array, not {}", describe(value)),
        );
        return None;
    };
    let checked: Vec<Option<Override>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| check_override(item, &format!("{at}/{index}"), problems))
        .collect();
    checked.into_iter().collect()
}

fn check_override(value: &Value, at: &str, problems: &mut Problems) -> Option<Override> {
    let Value::Object(fields) = value else {
        problems.add(
            at,
            format!(
                "an override must be an object {{contextName, values}}, not {}",
                describe(value)
            ),
        );
        return None;
    };
    let before = problems.details.len();
    unknown_keys(fields, at, &["contextName", "values"], problems);
    let context_name = match fields.get("contextName") {
        Some(Value::String(name)) if !name.is_empty() => Some(name.clone()),
        found => {
            let problem = match found {
                None => "contextName is required".to_owned(),
                Some(Value::String(_)) => "contextName must not be empty".to_owned(),
                Some(other) => format!("contextName must be a string, not {}", describe(other)),
            };
            problems.add(&format!("{at}/contextName"), problem);
            None
        }
    };
    let values = match fields.get("values") {
        None => {
            problems.add(&format!("{at}/values"), "values is required");
            None
        }
        Some(Value::Array(items)) => {
            let mut values = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::String(value) => values.push(value.clone()),
                    other => problems.add(
                        &format!("{at}/values/{index}"),
                        format!(
                            "an override value must be a string, not {}",
                            describe(other)
                        ),
                    ),
                }
            }
            Some(values)
        }
        Some(other) => {
            problems.add(
                &format!("{at}/values"),
                format!(
                    "values must be an array of strings, not {}",
                    describe(other)
                ),
            );
            None
        }
    };
    if problems.details.len() != before {
        return None;
    }
    Some(Override {
        context_name: context_name?,
        values: values?,
    })
}

/// Records every key of `fields` not in `allowed`.
fn unknown_keys(fields: &Map<String, Value>, at: &str, allowed: &[&str], problems: &mut Problems) {
    for key in fields.keys().filter(|key| !allowed.contains(&key.as_str())) {
        problems.add(
            &format!("{at}/{}", pointer_token(key)),
            format!("unknown field `{key}`"),
        );
    }
}
