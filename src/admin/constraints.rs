//! Constraints on their own: check one before putting it on a strategy or segment.

use serde_json::Value;

use super::ToggleAdmin;
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{Issues, check_constraint};
use crate::model::Operator;

impl ToggleAdmin {
    /// Check `constraint` (a constraint as JSON: `{contextName, operator, values?, value?,
    /// inverted?, caseInsensitive?}`) by the rules a strategy's or segment's constraints are
    /// checked by: `POST /api/admin/constraints/validate`. Any valid key may ask. `Ok` when
    /// it is valid; else a 400 naming each problem at its member (`operator`, `values`,
    /// `values[1]`, `value`):
    ///
    /// * an unknown operator; `IN`, `NOT_IN` and the `STR_*` operators need a non-empty
    ///   `values`, the others a `value`: a number for `NUM_*`, an RFC 3339 date-time for
    ///   `DATE_*`, a semantic version for `SEMVER_*`;
    /// * values outside the context field's legal values;
    /// * a member a constraint does not have (Unleash's schema refuses them too).
    ///
    /// As in Unleash, a constraint of the right shape (a `contextName`, a known `operator`,
    /// operands of the right types) on a context field that does not exist is a 404 naming
    /// the field, before its operands are looked at; with a shape problem too, it is one of
    /// the problems of the 400.
    pub async fn validate_constraint(&self, caller: &Caller, constraint: &Value) -> Result<()> {
        self.require(caller, &[]).await?;
        let (_, fields) = self.reader().context_field_map().await?;
        if let Some(name) = well_shaped_field(constraint)
            && !fields.contains_key(name)
        {
            return Err(Error::not_found(format!(
                "Could not find Context field with name {name}"
            )));
        }
        let lookup = |name: &str| fields.get(name);
        let mut issues = Issues::default();
        check_constraint(constraint, "", &lookup, &mut issues);
        // A strategy's constraint may carry members a newer Unleash adds (ignored there);
        // Unleash's schema for this check has no room for any, so here they are problems.
        for unknown in std::mem::take(&mut issues.warnings) {
            let member = unknown
                .path
                .as_deref()
                .unwrap_or_default()
                .trim_start_matches('.');
            issues.errors.push(crate::error::ErrorDetail::at(
                member,
                format!("a constraint has no member `{member}`"),
            ));
        }
        let summary = match issues.errors.as_slice() {
            [] => return Ok(()),
            [one] => one.to_string(),
            many => format!(
                "{} problems in the constraint: {}",
                many.len(),
                many.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        };
        Err(Error::validation(summary, issues.errors))
    }
}

/// The context field `constraint` names, when it has the shape Unleash's schema asks for:
/// `contextName` a non-empty string, `operator` a known operator, `inverted` and
/// `caseInsensitive` booleans, `values` a list of text, `value` text (numbers and booleans
/// are taken as their text, as by the constraint checks).
fn well_shaped_field(constraint: &Value) -> Option<&str> {
    let fields = constraint.as_object()?;
    const MEMBERS: [&str; 6] = [
        "contextName",
        "operator",
        "caseInsensitive",
        "inverted",
        "values",
        "value",
    ];
    if fields.keys().any(|k| !MEMBERS.contains(&k.as_str())) {
        return None;
    }
    let scalar = |v: &Value| v.is_string() || v.is_number() || v.is_boolean();
    let operator_known = fields
        .get("operator")
        .and_then(Value::as_str)
        .is_some_and(|o| Operator::from_name(o).is_some());
    let flags_ok = ["inverted", "caseInsensitive"]
        .iter()
        .all(|k| fields.get(*k).is_none_or(Value::is_boolean));
    let values_ok = fields
        .get("values")
        .is_none_or(|v| v.as_array().is_some_and(|items| items.iter().all(scalar)));
    let value_ok = fields.get("value").is_none_or(|v| v.is_null() || scalar(v));
    let name = fields
        .get("contextName")?
        .as_str()
        .filter(|n| !n.is_empty())?;
    (operator_known && flags_ok && values_ok && value_ok).then_some(name)
}
