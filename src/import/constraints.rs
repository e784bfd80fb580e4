//! Constraint validation, per operator, shared by imported strategies, strategies
//! added one by one, and segments.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::Issues;
use crate::model::{Constraint, ContextField, Operator};

/// The most constraints one strategy or segment may have (Unleash's default limit).
pub const MAX_CONSTRAINTS: usize = 30;

/// The most values one constraint may list (Unleash's default limit).
pub const MAX_CONSTRAINT_VALUES: usize = 250;

/// The keys a constraint may have.
const KNOWN_KEYS: [&str; 6] = [
    "contextName",
    "operator",
    "caseInsensitive",
    "inverted",
    "values",
    "value",
];

/// Semantic versions as semver.org defines them (Unleash's `SEMVER_*` operators use the same
/// grammar).
static SEMVER: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
    )
    .ok()
});

/// Checks the constraint list `raw` at `path` and returns it typed, or `None` after recording
/// its problems.
///
/// `context_field` looks a context field up by name (built-ins included); a constraint on a
/// field that does not exist is an error, as in Unleash. Unknown keys are warnings.
pub fn check_constraints<'f>(
    raw: Option<&Value>,
    path: &str,
    context_field: &dyn Fn(&str) -> Option<&'f ContextField>,
    issues: &mut Issues,
) -> Option<Vec<Constraint>> {
    let items = match raw {
        None | Some(Value::Null) => return Some(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            issues.error(path, "constraints must be an array");
            return None;
        }
    };
    if items.len() > MAX_CONSTRAINTS {
        issues.error(
            path,
            format!(
                "{} constraints, more than the limit of {MAX_CONSTRAINTS}",
                items.len()
            ),
        );
    }
    let before = issues.errors.len();
    let checked: Vec<Option<Constraint>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| check_constraint(item, &format!("{path}[{i}]"), context_field, issues))
        .collect();
    if issues.errors.len() > before {
        return None;
    }
    checked.into_iter().collect()
}

/// The path of `key` in the object at `path` (`key` alone for the body itself).
fn member(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Checks one constraint, the object at `path` (`""` for a request body that is one
/// constraint: its problems are then at `operator`, `values[0]`).
pub(crate) fn check_constraint<'f>(
    raw: &Value,
    path: &str,
    context_field: &dyn Fn(&str) -> Option<&'f ContextField>,
    issues: &mut Issues,
) -> Option<Constraint> {
    let Value::Object(fields) = raw else {
        issues.error(path, "a constraint must be an object");
        return None;
    };
    issues.unknown_keys(fields, path, &KNOWN_KEYS);
    let before = issues.errors.len();
    let context_name = match fields.get("contextName") {
        Some(Value::String(name)) if !name.is_empty() => Some(name.clone()),
        _ => {
            issues.error(
                member(path, "contextName"),
                "contextName is required: the name of a context field",
            );
            None
        }
    };
    let operator = match fields.get("operator") {
        Some(Value::String(name)) => Operator::from_name(name).or_else(|| {
            issues.error(
                member(path, "operator"),
                format!(
                    "unknown operator \"{name}\"; one of: {}",
                    Operator::ALL.map(Operator::as_str).join(", ")
                ),
            );
            None
        }),
        _ => {
            issues.error(member(path, "operator"), "operator is required");
            None
        }
    };
    let case_insensitive = flag(fields, "caseInsensitive", path, issues);
    let inverted = flag(fields, "inverted", path, issues);
    // As Unleash: `values` is always there (`[]` when absent, for legacy SDKs), and numbers
    // or booleans given where strings belong are taken as their text (its schema coerces).
    let values = string_list(fields.get("values"), &member(path, "values"), issues)
        .or_else(|| Some(Vec::new()));
    let value = match fields.get("value") {
        None | Some(Value::Null) => None,
        Some(other) => scalar_text(other).or_else(|| {
            issues.error(member(path, "value"), "value must be a string");
            None
        }),
    };
    let field = context_name.as_deref().and_then(|name| {
        let found = context_field(name);
        if found.is_none() {
            issues.error(
                member(path, "contextName"),
                format!("there is no context field named \"{name}\""),
            );
        }
        found
    });
    if let Some(op) = operator {
        check_operands(op, value.as_deref(), values.as_deref(), field, path, issues);
    }
    if issues.errors.len() > before {
        return None;
    }
    Some(Constraint {
        context_name: context_name?,
        operator: operator?,
        case_insensitive,
        inverted,
        values,
        value,
    })
}

/// Checks `value`/`values` against what `op` takes, as leniently as Unleash 6.10.1: the
/// operand an operator does not use is kept unchecked (Unleash stores both), and `NUM_*` and
/// `DATE_*` accept a missing `value` (Unleash's checks let `undefined` through; the constraint
/// then never matches), while `SEMVER_*` needs one.
fn check_operands(
    op: Operator,
    value: Option<&str>,
    values: Option<&[String]>,
    field: Option<&ContextField>,
    path: &str,
    issues: &mut Issues,
) {
    let legal: Vec<&str> = field
        .and_then(|f| f.legal_values.as_deref())
        .unwrap_or(&[])
        .iter()
        .map(|l| l.value.as_str())
        .collect();
    if op.takes_values() {
        match values {
            None | Some([]) => issues.error(
                member(path, "values"),
                format!("{op} needs at least one value in `values`"),
            ),
            Some(list) => {
                if list.len() > MAX_CONSTRAINT_VALUES {
                    issues.error(
                        member(path, "values"),
                        format!(
                            "{} values, more than the limit of {MAX_CONSTRAINT_VALUES}",
                            list.len()
                        ),
                    );
                }
                let checks_legal =
                    matches!(op, Operator::In | Operator::NotIn) && !legal.is_empty();
                for (i, v) in list.iter().enumerate() {
                    if v.is_empty() {
                        issues.error(
                            format!("{}[{i}]", member(path, "values")),
                            "values must not be empty",
                        );
                    } else if checks_legal && !legal.contains(&v.as_str()) {
                        issues.error(
                            format!("{}[{i}]", member(path, "values")),
                            format!("\"{v}\" is not a legal value of the context field"),
                        );
                    }
                }
            }
        }
        return;
    }
    let value = match value {
        Some(v) => v,
        None if matches!(
            op,
            Operator::SemverEq | Operator::SemverGt | Operator::SemverLt
        ) =>
        {
            issues.error(member(path, "value"), format!("{op} needs a `value`"));
            return;
        }
        None => return,
    };
    let problem = match op {
        Operator::NumEq
        | Operator::NumGt
        | Operator::NumGte
        | Operator::NumLt
        | Operator::NumLte => (value.trim() != value
            || !value.parse::<f64>().is_ok_and(f64::is_finite))
        .then(|| format!("\"{value}\" is not a number")),
        Operator::DateAfter | Operator::DateBefore => chrono::DateTime::parse_from_rfc3339(value)
            .is_err()
            .then(|| format!("\"{value}\" is not an RFC 3339 date-time")),
        _ => (!SEMVER.as_ref().is_some_and(|re| re.is_match(value)))
            .then(|| format!("\"{value}\" is not a semantic version (e.g. 1.2.3)")),
    };
    if let Some(problem) = problem {
        issues.error(member(path, "value"), problem);
    } else if !legal.is_empty() && !legal.contains(&value) {
        issues.error(
            member(path, "value"),
            format!("\"{value}\" is not a legal value of the context field"),
        );
    }
}

/// The text of a string, number or boolean; `None` for anything else.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An optional boolean member.
fn flag(fields: &Map<String, Value>, key: &str, path: &str, issues: &mut Issues) -> Option<bool> {
    match fields.get(key) {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            issues.error(member(path, key), format!("{key} must be a boolean"));
            None
        }
    }
}

/// An optional list of strings.
fn string_list(raw: Option<&Value>, path: &str, issues: &mut Issues) -> Option<Vec<String>> {
    match raw {
        None => None,
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match scalar_text(item) {
                    Some(text) => out.push(text),
                    None => issues.error(format!("{path}[{i}]"), "must be a string"),
                }
            }
            Some(out)
        }
        Some(_) => {
            issues.error(path, "must be an array of strings");
            None
        }
    }
}
