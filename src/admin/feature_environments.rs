//! A feature in one environment: its strategies (add, update, remove, list) and whether it
//! is enabled.

use super::records::feature_environment_key;
use crate::store::Json;

use serde_json::{Map, Value};

use super::reader::Reader;
use super::records::{
    FeatureEnvironmentRecord, decode_opt, encode, feature_environment_found,
    feature_environment_keys,
};
use super::strategy_checks::{Catalogue, checked_strategy};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::enabling_strategy;
use crate::model::Permission;
use crate::model::{FeatureStrategy, StrategySortOrder};

/// The most strategies a feature may have in one environment (Unleash's default limit).
const MAX_STRATEGIES: usize = 30;

/// An event a change asks for: type, before, after.
type Change = (&'static str, Option<Json>, Option<Json>);

impl ToggleAdmin {
    /// The strategies of `feature` in `environment`, in order. Any valid key may read them;
    /// 404 when the project, the feature (in that project), the environment or the
    /// environment of the project is missing.
    pub async fn strategies(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
    ) -> Result<Vec<FeatureStrategy>> {
        self.require(caller, &[]).await?;
        let key = feature_environment_key(feature, environment);
        let view = self.store.view().await?;
        self.check_feature_environment(Reader::View(view.as_ref()), project, feature, environment)
            .await?;
        let record: FeatureEnvironmentRecord =
            decode_opt(&key, view.get(&key).await?.as_ref())?.unwrap_or_default();
        Ok(record.strategies)
    }

    /// The strategy `id` of `feature` in `environment`. Any valid key may read it; 404 as
    /// for [`strategies`](Self::strategies), and for an unknown id.
    pub async fn strategy(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        id: &str,
    ) -> Result<FeatureStrategy> {
        self.strategies(caller, project, feature, environment)
            .await?
            .into_iter()
            .find(|s| s.id.as_deref() == Some(id))
            .ok_or_else(|| strategy_not_found(id))
    }

    /// Add a strategy to `feature` in `environment`. Needs `CREATE_FEATURE_STRATEGY` there.
    ///
    /// The strategy is checked as an imported one (definition exists, constraints per
    /// operator, strategy variants validated and weighted, `flexibleRollout` parameters
    /// defaulted: rollout 100, stickiness `default`, groupId the feature's name); its
    /// `segments` are stored ids of segments that are global or of this project. It gets a
    /// new id; its `sortOrder` is kept as given (the others keep theirs, as in Unleash), or is
    /// one more than the highest there. At most 30 per environment. Event
    /// `feature-strategy-add`.
    pub async fn add_strategy(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        strategy: &FeatureStrategy,
    ) -> Result<FeatureStrategy> {
        let raw = strategy_value(strategy)?;
        self.add_strategy_json(caller, project, feature, environment, &raw)
            .await
    }

    /// [`add_strategy`](Self::add_strategy) of a strategy as Unleash's admin API takes it:
    /// numbers and booleans where strings belong (parameters, constraint values) and numeric
    /// strings where numbers belong (`sortOrder`, segment ids) are coerced.
    pub async fn add_strategy_json(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        raw: &Value,
    ) -> Result<FeatureStrategy> {
        let check = Need::environment(Permission::CreateFeatureStrategy, project, environment);
        let id = uuid::Uuid::new_v4().to_string();
        self.change_feature_environment(caller, &[check], project, feature, environment, |fe: &mut FeatureEnvironmentRecord, catalogue: &Catalogue| {
            let mut added = checked_strategy(catalogue, raw, project, feature)?;
            if fe.strategies.len() >= MAX_STRATEGIES {
                return Err(Error::invalid_at("", format!("Failed to create strategy: \"{feature}\" has {MAX_STRATEGIES} strategies in \"{environment}\" already.")));
            }
            added.id = Some(id.clone());
            added.sort_order = Some(added.sort_order.unwrap_or_else(|| next_sort_order(&fe.strategies)));
            insert_in_order(&mut fe.strategies, added.clone());
            Ok((added.clone(), vec![("feature-strategy-add", None, Some(Json::of(&added)))]))
        })
        .await
    }

    /// Update the strategy `id` of `feature` in `environment`. Needs
    /// `UPDATE_FEATURE_STRATEGY` there. As in Unleash the update merges: `name`, `title`,
    /// `disabled`, `parameters` and `segments` keep their stored value when absent or `null`;
    /// `constraints` and `variants` become empty when absent; `sortOrder` is ignored (see
    /// [`set_strategy_sort_order`](Self::set_strategy_sort_order)). The result gets the same
    /// checks as [`add_strategy`](Self::add_strategy); the id is kept. 404 for an unknown id.
    /// Event `feature-strategy-update`.
    pub async fn update_strategy(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        id: &str,
        strategy: &FeatureStrategy,
    ) -> Result<FeatureStrategy> {
        let raw = strategy_value(strategy)?;
        self.update_strategy_json(caller, project, feature, environment, id, &raw)
            .await
    }

    /// [`update_strategy`](Self::update_strategy) of an update as Unleash's admin API takes
    /// it (coerced as in [`add_strategy_json`](Self::add_strategy_json); `name` optional).
    pub async fn update_strategy_json(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        id: &str,
        raw: &Value,
    ) -> Result<FeatureStrategy> {
        let check = Need::environment(Permission::UpdateFeatureStrategy, project, environment);
        let Value::Object(update) = raw else {
            return Err(Error::invalid_at("", "a strategy must be an object"));
        };
        self.change_feature_environment(
            caller,
            &[check],
            project,
            feature,
            environment,
            |fe: &mut FeatureEnvironmentRecord, catalogue: &Catalogue| {
                let at = fe
                    .strategies
                    .iter()
                    .position(|s| s.id.as_deref() == Some(id))
                    .ok_or_else(|| strategy_not_found(id))?;
                let merged = merged_update(&fe.strategies[at], update)?;
                let mut updated = checked_strategy(catalogue, &merged, project, feature)?;
                let slot = &mut fe.strategies[at];
                updated.id = slot.id.clone();
                updated.sort_order = slot.sort_order;
                let before = std::mem::replace(slot, updated.clone());
                Ok((
                    updated.clone(),
                    vec![(
                        "feature-strategy-update",
                        Some(Json::of(&before)),
                        Some(Json::of(&updated)),
                    )],
                ))
            },
        )
        .await
    }

    /// Give strategies of `feature` in `environment` new sort orders, as Unleash's
    /// `POST …/strategies/set-sort-order`: ids that are not there are ignored, the others
    /// keep theirs. Needs `UPDATE_FEATURE_STRATEGY` there. Event `strategy-order-changed`
    /// with the ids in order before and after.
    pub async fn set_strategy_sort_order(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        orders: &[StrategySortOrder],
    ) -> Result<()> {
        let check = Need::environment(Permission::UpdateFeatureStrategy, project, environment);
        self.change_feature_environment(
            caller,
            &[check],
            project,
            feature,
            environment,
            |fe: &mut FeatureEnvironmentRecord, _: &Catalogue| {
                let ids = |list: &[FeatureStrategy]| {
                    serde_json::json!({"strategyIds": list.iter().map(|s| s.id.clone()).collect::<Vec<_>>()})
                };
                let before = ids(&fe.strategies);
                for order in orders {
                    if let Some(s) = fe
                        .strategies
                        .iter_mut()
                        .find(|s| s.id.as_deref() == Some(order.id.as_str()))
                    {
                        s.sort_order = Some(order.sort_order);
                    }
                }
                // Stable: equal sort orders keep their order of creation.
                fe.strategies.sort_by_key(|s| s.sort_order.unwrap_or(0));
                let after = ids(&fe.strategies);
                Ok((
                    (),
                    vec![(
                        "strategy-order-changed",
                        Some(Json::of(&before)),
                        Some(Json::of(&after)),
                    )],
                ))
            },
        )
        .await
    }

    /// Remove the strategy `id` of `feature` in `environment`. Needs
    /// `DELETE_FEATURE_STRATEGY` there. 404 for an unknown id. Event
    /// `feature-strategy-remove`.
    pub async fn remove_strategy(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        id: &str,
    ) -> Result<()> {
        let check = Need::environment(Permission::DeleteFeatureStrategy, project, environment);
        self.change_feature_environment(
            caller,
            &[check],
            project,
            feature,
            environment,
            |fe: &mut FeatureEnvironmentRecord, _: &Catalogue| {
                let at = fe
                    .strategies
                    .iter()
                    .position(|s| s.id.as_deref() == Some(id))
                    .ok_or_else(|| strategy_not_found(id))?;
                let removed = fe.strategies.remove(at);
                Ok((
                    (),
                    vec![("feature-strategy-remove", Some(Json::of(&removed)), None)],
                ))
            },
        )
        .await
    }

    /// Enable or disable `feature` in `environment`. Needs `UPDATE_FEATURE_ENVIRONMENT`
    /// there. Enabling a feature with no enabled strategy adds the project's default strategy
    /// for the environment (see [`set_default_strategy`](Self::set_default_strategy)), or
    /// Unleash's default (`flexibleRollout` 100 %) when none is set; that also needs
    /// `CREATE_FEATURE_STRATEGY`. Setting the
    /// state it already has changes nothing and writes no event; otherwise
    /// `feature-environment-enabled`/`-disabled`.
    pub async fn set_feature_enabled(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        enabled: bool,
    ) -> Result<()> {
        let mut checks = vec![Need::environment(
            Permission::UpdateFeatureEnvironment,
            project,
            environment,
        )];
        if enabled {
            checks.push(Need::environment(
                Permission::CreateFeatureStrategy,
                project,
                environment,
            ));
        }
        self.change_feature_environment(
            caller,
            &checks,
            project,
            feature,
            environment,
            |fe: &mut FeatureEnvironmentRecord, catalogue: &Catalogue| {
                let mut changes: Vec<Change> = Vec::new();
                if enabled && fe.strategies.iter().all(FeatureStrategy::is_disabled) {
                    let mut strategy =
                        enabling_strategy(catalogue.project.as_ref(), environment, feature);
                    strategy.id = Some(uuid::Uuid::new_v4().to_string());
                    strategy.sort_order = Some(next_sort_order(&fe.strategies));
                    insert_in_order(&mut fe.strategies, strategy.clone());
                    changes.push(("feature-strategy-add", None, Some(Json::of(&strategy))));
                }
                if fe.enabled != enabled {
                    fe.enabled = enabled;
                    let kind = if enabled {
                        "feature-environment-enabled"
                    } else {
                        "feature-environment-disabled"
                    };
                    changes.push((kind, None, None));
                }
                Ok(((), changes))
            },
        )
        .await
    }

    /// Enable or disable the features `names` of `project` in `environment` at once
    /// (Unleash's `bulk_features/environments/{e}/on|off`), each as
    /// [`set_feature_enabled`](Self::set_feature_enabled) does. Needs what that needs.
    /// Atomic: 404 when the project or the environment (of the project) is missing; when a
    /// name is not an active feature of the project, nothing changes: a 404 when every such
    /// name is of no feature (as Unleash answers), else a 400 naming every such feature with
    /// its index (Unleash changes the features before the bad one).
    pub async fn set_features_enabled(
        &self,
        caller: &Caller,
        project: &str,
        environment: &str,
        names: &[String],
        enabled: bool,
    ) -> Result<()> {
        let mut checks = vec![Need::environment(
            Permission::UpdateFeatureEnvironment,
            project,
            environment,
        )];
        if enabled {
            checks.push(Need::environment(
                Permission::CreateFeatureStrategy,
                project,
                environment,
            ));
        }
        let permit = self.permit(caller, &checks).await?;
        if names.is_empty() {
            return Err(Error::invalid_at("/features", "name at least one feature"));
        }
        self.change("set_features_enabled", permit, |tx| {
            Box::pin(async move {
                let (pkey, ekey) = (
                    super::records::project_key(project),
                    super::records::environment_key(environment),
                );
                let [project_record, environment_record] = tx.read(&[pkey.clone(), ekey]).await?;
                let current: crate::model::Project =
                    decode_opt(&pkey, project_record.as_ref())?
                        .ok_or_else(|| super::records::project_not_found(project))?;
                if environment_record.is_none() {
                    return Err(super::records::environment_not_found(environment));
                }
                if !current.environments.iter().any(|e| e == environment) {
                    return Err(Error::not_found(format!(
                        "The environment \"{environment}\" is not enabled for project \"{project}\"."
                    )));
                }
                let mut problems = Vec::new();
                let mut missing = 0;
                let mut found = Vec::new();
                for (index, name) in names.iter().enumerate() {
                    let keys = feature_environment_keys(project, name, environment);
                    let records = tx.read(&keys).await?;
                    let feature: Option<super::records::FeatureRecord> =
                        decode_opt(&keys[1], records[1].as_ref())?;
                    match feature {
                        Some(f) if f.project == project && !f.archived => {
                            found.push((name, keys, records));
                        }
                        Some(f) if f.project == project => problems.push(crate::ErrorDetail::at(
                            format!("/features/{index}"),
                            format!("the feature \"{name}\" is archived"),
                        )),
                        _ => {
                            missing += 1;
                            problems.push(crate::ErrorDetail::at(
                                format!("/features/{index}"),
                                format!(
                                    "there's no feature named \"{name}\" in project \"{project}\""
                                ),
                            ))
                        }
                    }
                }
                if !problems.is_empty() {
                    return Err(super::records::bulk_refusal(problems, missing));
                }
                let mut seen = std::collections::BTreeSet::new();
                for (name, keys, records) in found {
                    if !seen.insert(name.as_str()) {
                        continue;
                    }
                    let mut fe: FeatureEnvironmentRecord =
                        decode_opt(&keys[3], records[3].as_ref())?.unwrap_or_default();
                    let before = fe.clone();
                    if enabled && fe.strategies.iter().all(FeatureStrategy::is_disabled) {
                        let mut strategy = enabling_strategy(Some(&current), environment, name);
                        strategy.id = Some(uuid::Uuid::new_v4().to_string());
                        strategy.sort_order = Some(next_sort_order(&fe.strategies));
                        insert_in_order(&mut fe.strategies, strategy.clone());
                        tx.record(
                            "feature-strategy-add",
                            Some(project),
                            Some(name),
                            Some(environment),
                            None,
                            Some(Json::of(&strategy)),
                        );
                    }
                    if fe.enabled != enabled {
                        fe.enabled = enabled;
                        let kind = if enabled {
                            "feature-environment-enabled"
                        } else {
                            "feature-environment-disabled"
                        };
                        tx.record(kind, Some(project), Some(name), Some(environment), None, None);
                    }
                    if fe != before {
                        let key = keys[3].clone();
                        tx.put(key.clone(), encode(&key, &fe)?);
                    }
                }
                Ok(())
            })
        })
        .await
    }

    /// 404 unless `feature` is in `project` and `environment` is one of the project's.
    async fn check_feature_environment(
        &self,
        reader: Reader<'_>,
        project: &str,
        feature: &str,
        environment: &str,
    ) -> Result<()> {
        let keys = feature_environment_keys(project, feature, environment);
        let records = reader.read(&keys).await?;
        feature_environment_found(project, feature, environment, &keys, &records)?;
        Ok(())
    }

    /// Read-decide-commit on one feature environment, with the 404s of
    /// [`strategies`](Self::strategies) and a 400 for archived features. `decide` changes the
    /// record and names the events; the catalogue it reads is part of the preconditions.
    async fn change_feature_environment<T: Send>(
        &self,
        caller: &Caller,
        needs: &[Need<'_>],
        project: &str,
        feature: &str,
        environment: &str,
        decide: impl Fn(&mut FeatureEnvironmentRecord, &Catalogue) -> Result<(T, Vec<Change>)>
        + Send
        + Sync,
    ) -> Result<T> {
        let permit = self.permit(caller, needs).await?;
        let decide = &decide;
        self.change("change_feature_environment", permit, |tx| {
            Box::pin(async move {
                let keys = feature_environment_keys(project, feature, environment);
                let (_, definitions) = tx.reader().strategy_definition_map().await?;
                let (_, fields) = tx.reader().context_field_map().await?;
                let (_, segments) = tx.reader().segment_list().await?;
                let records = tx.read(&keys).await?;
                let catalogue = Catalogue {
                    definitions,
                    fields,
                    segments,
                    project: decode_opt(&keys[0], records[0].as_ref())?,
                };
                let archived =
                    feature_environment_found(project, feature, environment, &keys, &records)?;
                if archived {
                    return Err(super::records::feature_archived(feature));
                }
                let mut fe: FeatureEnvironmentRecord =
                    decode_opt(&keys[3], records[3].as_ref())?.unwrap_or_default();
                let (result, events) = decide(&mut fe, &catalogue)?;
                if !events.is_empty() {
                    tx.put(keys[3].clone(), encode(&keys[3], &fe)?);
                    for (kind, pre, data) in events {
                        tx.record(
                            kind,
                            Some(project),
                            Some(feature),
                            Some(environment),
                            pre,
                            data,
                        );
                    }
                }
                Ok(result)
            })
        })
        .await
    }
}

/// One more than the highest sort order there, 0 when there is none (Unleash's default).
fn next_sort_order(strategies: &[FeatureStrategy]) -> i64 {
    strategies
        .iter()
        .filter_map(|s| s.sort_order)
        .max()
        .map_or(0, |max| max.saturating_add(1))
}

/// Insert `strategy` after every strategy whose sort order is not greater: the list stays in
/// sort order, equal ones in order of creation (Unleash orders by `sort_order, created_at`).
fn insert_in_order(strategies: &mut Vec<FeatureStrategy>, strategy: FeatureStrategy) {
    let order = strategy.sort_order.unwrap_or(0);
    let at = strategies
        .iter()
        .take_while(|s| s.sort_order.unwrap_or(0) <= order)
        .count();
    strategies.insert(at, strategy);
}

/// The stored strategy with an update applied as Unleash applies one: see
/// [`ToggleAdmin::update_strategy`].
fn merged_update(stored: &FeatureStrategy, update: &Map<String, Value>) -> Result<Value> {
    let Value::Object(mut merged) = strategy_value(stored)? else {
        return Err(Error::invalid_at(
            "",
            "the stored strategy is not an object",
        ));
    };
    for key in ["name", "title", "disabled", "parameters", "segments"] {
        match update.get(key) {
            None | Some(Value::Null) => {}
            Some(value) => {
                merged.insert(key.to_owned(), value.clone());
            }
        }
    }
    for key in ["constraints", "variants"] {
        let value = update.get(key).cloned().unwrap_or(Value::Array(Vec::new()));
        merged.insert(key.to_owned(), value);
    }
    for key in ["id", "featureName", "sortOrder"] {
        merged.remove(key);
    }
    Ok(Value::Object(merged))
}

fn strategy_value(strategy: &FeatureStrategy) -> Result<Value> {
    serde_json::to_value(strategy)
        .map_err(|e| Error::invalid_at("", format!("the strategy cannot be encoded: {e}")))
}

fn strategy_not_found(id: &str) -> Error {
    Error::not_found(format!("There's no strategy with id \"{id}\" here."))
}
