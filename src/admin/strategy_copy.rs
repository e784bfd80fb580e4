//! Copying a feature's strategies from one environment to another: all of them in one
//! commit, or none.

use super::feature_environments::{
    MAX_STRATEGIES, insert_in_order, next_sort_order, strategy_value,
};
use super::records::{
    FeatureEnvironmentRecord, decode_opt, encode, environment_key, feature_archived,
    feature_environment_found, feature_environment_key, feature_environment_keys,
};
use super::strategy_checks::{Catalogue, checked_strategy};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{FeatureStrategy, Permission};
use crate::store::Json;

impl ToggleAdmin {
    /// Copy every strategy of `feature` in `from_environment` to `to_environment`, after
    /// the strategies there, in one commit: either all of them are copied or, on any
    /// refusal, nothing changes and no event is written. Returns the copies in order.
    ///
    /// Needs `CREATE_FEATURE_STRATEGY` in `to_environment`; reading the source needs no more
    /// than [`strategies`](Self::strategies) does (any valid key).
    ///
    /// * 404 as [`strategies`](Self::strategies) gives for either environment (the source's
    ///   first): a missing project, a feature not in the project, a missing environment or
    ///   one the project does not have.
    /// * 400 at `to` when `to_environment` is `from_environment`, decided after the
    ///   permission and before anything is read: copying a list onto itself would only
    ///   double every strategy, which no one asking for a copy means.
    /// * 400 at `featureName` when the feature is archived (as
    ///   [`add_strategy`](Self::add_strategy)).
    /// * 400 at `to` when the target would hold more than 30 strategies, naming how many it
    ///   has and how many would be copied.
    /// * Each copy is checked as [`add_strategy`](Self::add_strategy) checks a strategy
    ///   (definition exists, constraints, strategy variants, segments global or of this
    ///   project); a copy that fails is a 400 naming its problems under
    ///   `strategies[i]`, `i` its place in the source.
    ///
    /// Each copy keeps the source's title, disabled state, parameters, constraints, variants
    /// and segments; it gets a new id, and a sort order after the highest in the target
    /// (one apart, in the source's order). One `feature-strategy-add` event per copy, in
    /// order, for `to_environment`. The feature's enabled state there is left as it is. An
    /// empty source copies nothing, writes nothing and returns an empty list.
    pub async fn copy_strategies(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        from_environment: &str,
        to_environment: &str,
    ) -> Result<Vec<FeatureStrategy>> {
        let need = Need::environment(Permission::CreateFeatureStrategy, project, to_environment);
        let permit = self.permit(caller, &[need]).await?;
        if from_environment == to_environment {
            return Err(Error::invalid_at(
                "to",
                format!(
                    "The strategies are in \"{to_environment}\" already: copy them to another environment."
                ),
            ));
        }
        self.change("copy_strategies", permit, |tx| {
            Box::pin(async move {
                let from = feature_environment_keys(project, feature, from_environment);
                let source_records = tx.read(&from).await?;
                let archived = feature_environment_found(
                    project,
                    feature,
                    from_environment,
                    &from,
                    &source_records,
                )?;
                // The target's 404s in the same order, on the project and feature just read.
                let to = [
                    from[0].clone(),
                    from[1].clone(),
                    environment_key(to_environment),
                    feature_environment_key(feature, to_environment),
                ];
                let [to_environment_record, to_record] =
                    tx.read(&[to[2].clone(), to[3].clone()]).await?;
                let target_records = [
                    source_records[0].clone(),
                    source_records[1].clone(),
                    to_environment_record,
                    to_record,
                ];
                feature_environment_found(project, feature, to_environment, &to, &target_records)?;
                if archived {
                    return Err(feature_archived(feature));
                }
                let source: FeatureEnvironmentRecord =
                    decode_opt(&from[3], source_records[3].as_ref())?.unwrap_or_default();
                if source.strategies.is_empty() {
                    return Ok(Vec::new());
                }
                let mut target: FeatureEnvironmentRecord =
                    decode_opt(&to[3], target_records[3].as_ref())?.unwrap_or_default();
                let catalogue = Catalogue::read(
                    tx.reader(),
                    decode_opt(&from[0], source_records[0].as_ref())?,
                )
                .await?;
                let copies = copies(
                    &catalogue,
                    &source.strategies,
                    &mut target,
                    (project, feature, to_environment),
                )?;
                tx.put(to[3].clone(), encode(&to[3], &target)?);
                for copy in &copies {
                    tx.record(
                        "feature-strategy-add",
                        Some(project),
                        Some(feature),
                        Some(to_environment),
                        None,
                        Some(Json::of(copy)),
                    );
                }
                Ok(copies)
            })
        })
        .await
    }
}

/// The copies of `source` added to `target` (the feature `feature` of `project` in the
/// environment `to`), as [`ToggleAdmin::copy_strategies`] decides them; on an error `target`
/// is left as it was.
fn copies(
    catalogue: &Catalogue,
    source: &[FeatureStrategy],
    target: &mut FeatureEnvironmentRecord,
    (project, feature, to): (&str, &str, &str),
) -> Result<Vec<FeatureStrategy>> {
    let (has, adding) = (target.strategies.len(), source.len());
    if has.saturating_add(adding) > MAX_STRATEGIES {
        return Err(Error::invalid_at(
            "to",
            format!(
                "Nothing was copied: \"{feature}\" has {has} strategies in \"{to}\", and {adding} more would make {}, over the limit of {MAX_STRATEGIES}.",
                has + adding
            ),
        ));
    }
    let first = next_sort_order(&target.strategies);
    let mut copies = Vec::with_capacity(adding);
    // Every copy's problems at once, so that one refusal names all that stands in the way.
    let mut problems: Vec<ErrorDetail> = Vec::new();
    for (index, strategy) in source.iter().enumerate() {
        let at = format!("strategies[{index}]");
        match checked_strategy(catalogue, &strategy_value(strategy)?, &at, project, feature) {
            Ok(mut copy) => {
                copy.id = Some(uuid::Uuid::new_v4().to_string());
                let offset = i64::try_from(index).unwrap_or(i64::MAX);
                copy.sort_order = Some(first.saturating_add(offset));
                copies.push(copy);
            }
            Err(error) if error.details().is_empty() => {
                problems.push(ErrorDetail::at(at, error.to_string()));
            }
            Err(error) => problems.extend(error.details().iter().cloned()),
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation(
            format!(
                "Nothing was copied: some strategies of \"{feature}\" cannot be added to \"{to}\"."
            ),
            problems,
        ));
    }
    for copy in &copies {
        insert_in_order(&mut target.strategies, copy.clone());
    }
    Ok(copies)
}

#[cfg(test)]
mod tests {
    use super::{Catalogue, FeatureEnvironmentRecord, FeatureStrategy, copies};

    fn named(name: &str) -> FeatureStrategy {
        FeatureStrategy {
            id: Some(format!("{name}-id")),
            name: name.to_owned(),
            sort_order: Some(0),
            ..FeatureStrategy::default()
        }
    }

    /// A catalogue knowing `definitions` and nothing else.
    fn catalogue(definitions: &[&str]) -> Catalogue {
        Catalogue {
            definitions: definitions
                .iter()
                .map(|name| ((*name).to_owned(), Default::default()))
                .collect(),
            fields: Default::default(),
            segments: Vec::new(),
            project: None,
        }
    }

    #[test]
    fn every_copy_that_fails_its_checks_is_named_and_the_target_is_left_as_it_was() {
        // Stored strategies of kinds the catalogue no longer knows (data of an older version).
        let source = [named("default"), named("gone"), named("lost")];
        let mut target = FeatureEnvironmentRecord {
            strategies: vec![named("default")],
            ..Default::default()
        };
        let before = target.clone();
        let error = copies(
            &catalogue(&["default"]),
            &source,
            &mut target,
            ("p", "f", "development"),
        )
        .unwrap_err();
        assert_eq!(error.status(), 400);
        assert!(error.to_string().contains("Nothing was copied"), "{error}");
        let paths: Vec<_> = error
            .details()
            .iter()
            .map(|d| d.path.clone().unwrap_or_default())
            .collect();
        assert_eq!(paths, ["strategies[1].name", "strategies[2].name"]);
        assert_eq!(target, before);
    }

    #[test]
    fn copies_follow_the_highest_sort_order_even_at_the_end_of_the_range() {
        let source = [named("default"), named("default")];
        let mut last = named("default");
        last.sort_order = Some(i64::MAX - 1);
        let mut target = FeatureEnvironmentRecord {
            strategies: vec![last],
            ..Default::default()
        };
        let copied = copies(
            &catalogue(&["default"]),
            &source,
            &mut target,
            ("p", "f", "development"),
        )
        .unwrap();
        let orders: Vec<_> = copied.iter().map(|c| c.sort_order).collect();
        assert_eq!(orders, [Some(i64::MAX), Some(i64::MAX)]);
        assert_eq!(target.strategies.len(), 3);
        assert_eq!(
            target.strategies[1..],
            copied[..],
            "after the target's, in order"
        );
    }
}
