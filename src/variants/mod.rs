//! The variants domain, pure (no I/O, no store, no clock): decode a JSON Patch, apply it
//! strictly, validate the result as a whole, distribute the weights and sort by name.
//!
//! The PATCH operation chains them:
//! [`decode_patch`] → [`apply_patch`] → [`normalise_variants`]
//! (= [`validate_variants`] → [`distribute_weights`] → [`sort_by_name`]).
//! The import checks strategy-level variants with
//! [`validate_strategy_variants`], which shares the same rules, weights and order.
//!
//! # Error paths
//!
//! Every problem is reported as an [`ErrorDetail`] whose `path` is a JSON pointer (RFC 6901)
//! into the document that was checked: `/2/weight`, `/0/payload/type`,
//! `/1/overrides/0/values/2`. The empty pointer `""` designates the whole document. A
//! validation error lists every problem found; its message summarises them, e.g.
//! `2 problems in the variants: /0/weight: …; /1/name: …`.
//!
//! # Where we differ from Unleash 6.10.1
//!
//! * JSON Patch is applied strictly per RFC 6902 (Unleash's fast-json-patch runs in a lenient
//!   mode that appends on `add` past the end, ignores out-of-range `remove`, turns `replace` of
//!   a missing member into `add`, and silently ignores paths without a leading `/`).
//! * `test` is refused, as in 6.10.1's schema.
//! * All problems are listed, not only the first; defaults (`weightType: "variable"`,
//!   `stickiness: "default"`) are applied and kept rather than thrown away, so a variant without
//!   `weightType` is weighted as variable instead of being silently dropped.
//! * A weight given as a string (`"100"`) is an error; Unleash coerces it and then breaks.
//! * The payload type must be one of `json`, `csv`, `string`, `number`, and a `number` payload
//!   must parse as a number (Unleash only checks `json` payloads).
//! * Fixed weights over 1000 are reported as `The fixed weights total <n>, more than 1000`
//!   instead of `The traffic distribution total must equal 100%`.

mod order;
mod patch;
mod validate;
mod weights;

#[cfg(test)]
mod patch_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;

pub use order::{compare_names, sort_by_name};
pub use patch::{apply_patch, apply_patch_json, apply_patch_to, decode_patch};
pub use validate::{
    normalise_variants, normalise_variants_at, validate_strategy_variants, validate_variants,
};
pub use weights::distribute_weights;

use crate::error::{Error, ErrorDetail};

/// A validation error listing `details`, summarised as `<n> problem(s) in the <subject>: …`.
fn problems(subject: &str, details: Vec<ErrorDetail>) -> Error {
    let listed: Vec<String> = details
        .iter()
        .map(|detail| match detail.path.as_deref() {
            None | Some("") => detail.message.clone(),
            Some(path) => format!("{path}: {}", detail.message),
        })
        .collect();
    let noun = if details.len() == 1 {
        "problem"
    } else {
        "problems"
    };
    Error::validation(
        format!(
            "{} {noun} in the {subject}: {}",
            details.len(),
            listed.join("; ")
        ),
        details,
    )
}

/// What kind of JSON value `value` is, with the value itself for short scalars, for messages.
fn describe(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() <= 40 => format!("the string {value}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}
