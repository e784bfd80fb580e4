//! Checking a strategy against the catalogue it refers to (definitions, context fields,
//! segments): for a feature's strategies and a project's default strategies alike.

use std::collections::BTreeMap;

use serde_json::Value;

use super::reader::Reader;
use crate::error::{Error, Result};
use crate::import::{Issues, StrategyContext, normalise_strategy};
use crate::model::{ContextField, FeatureStrategy, Project, Segment, StrategyDefinition};

/// What strategies are checked against: the catalogue as read with the feature environment.
pub(super) struct Catalogue {
    pub(super) definitions: BTreeMap<String, StrategyDefinition>,
    pub(super) fields: BTreeMap<String, ContextField>,
    pub(super) segments: Vec<Segment>,
    /// The feature's project (its default strategies).
    pub(super) project: Option<Project>,
}

impl Catalogue {
    /// The catalogue as `reader` sees it, for a feature of `project` (`None` for checks that
    /// concern no feature). Read through a write's reader, every part of it is a
    /// precondition of the commit: a definition, context field or segment changed meanwhile
    /// makes the write decide again.
    pub(super) async fn read(reader: Reader<'_>, project: Option<Project>) -> Result<Self> {
        let (_, definitions) = reader.strategy_definition_map().await?;
        let (_, fields) = reader.context_field_map().await?;
        let (_, segments) = reader.segment_list().await?;
        Ok(Self {
            definitions,
            fields,
            segments,
            project,
        })
    }
}

/// A strategy checked against the catalogue, for `feature` of `project`: segments must be
/// global or of the project. Its problems are named under the path `at` (empty for a
/// strategy that is the whole input).
pub(super) fn checked_strategy(
    catalogue: &Catalogue,
    raw: &Value,
    at: &str,
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
    let strategy = normalise_strategy(raw, at, &ctx, &mut issues);
    match (strategy, issues.into_error()) {
        (Some(strategy), None) => Ok(strategy),
        (_, Some(error)) => Err(error),
        (None, None) => Err(Error::invalid_at("", "the strategy is not valid")),
    }
}
