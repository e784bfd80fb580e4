//! Constraints on their own: check one before putting it on a strategy or segment.

use serde_json::Value;

use super::ToggleAdmin;
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{Issues, check_constraint};

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
    /// * a context field that does not exist, which a strategy would be refused for (Unleash
    ///   6.10.1 says such a constraint is valid here and refuses it on the strategy).
    pub async fn validate_constraint(&self, caller: &Caller, constraint: &Value) -> Result<()> {
        self.require(caller, &[]).await?;
        let (_, fields) = self.reader().context_field_map().await?;
        let lookup = |name: &str| fields.get(name);
        let mut issues = Issues::default();
        check_constraint(constraint, "", &lookup, &mut issues);
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
