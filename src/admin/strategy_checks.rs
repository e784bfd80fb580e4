//! Checking a strategy against the catalogue it refers to (definitions, context fields,
//! segments): for a feature's strategies and a project's default strategies alike.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::import::{Issues, StrategyContext, normalise_strategy};
use crate::model::{ContextField, FeatureStrategy, Segment, StrategyDefinition};

/// What strategies are checked against: the catalogue as read with the feature environment.
pub(super) struct Catalogue {
    pub(super) definitions: BTreeMap<String, StrategyDefinition>,
    pub(super) fields: BTreeMap<String, ContextField>,
    pub(super) segments: Vec<Segment>,
    /// The feature's project (its default strategies).
    pub(super) project: Option<crate::model::Project>,
}

/// A strategy checked against the catalogue, for `feature` of `project`: segments must be
/// global or of the project.
pub(super) fn checked_strategy(
    catalogue: &Catalogue,
    raw: &Value,
    project: &str,
    feature: &str,
) -> Result<FeatureStrategy> {
    let segment = |id: i64| {
        catalogue
            .segments
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| format!("there's no segment with id {id}"))
            .and_then(|s| match s.project.as_deref() {
                Some(other) if other != project => {
                    Err(format!("segment {id} belongs to project \"{other}\""))
                }
                _ => Ok(id),
            })
    };
    let exists = |name: &str| catalogue.definitions.contains_key(name);
    let field = |name: &str| catalogue.fields.get(name);
    let ctx = StrategyContext {
        feature,
        strategy_exists: &exists,
        context_field: &field,
        segment: &segment,
    };
    let mut issues = Issues::default();
    let strategy = normalise_strategy(raw, "", &ctx, &mut issues);
    match (strategy, issues.into_error()) {
        (Some(strategy), None) => Ok(strategy),
        (_, Some(error)) => Err(error),
        (None, None) => Err(Error::invalid_at("", "the strategy is not valid")),
    }
}
