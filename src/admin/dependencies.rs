//! Feature dependencies: a child feature is evaluated only when its parents are (add,
//! remove, list).

use crate::store::Json;
use std::collections::BTreeMap;

use super::records::{
    FeatureDependenciesRecord, FeatureRecord, decode, decode_opt, encode, feature_dependencies_key,
    feature_key, project_key,
};
use super::tags::check_feature;
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{dependency_problem, normalise_dependency, upsert};
use crate::model::ParentDependency;
use crate::model::Permission;
use crate::store::Collection;

impl ToggleAdmin {
    /// The parents of `feature` in `project`. Any valid key may read them.
    pub async fn feature_dependencies(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<Vec<ParentDependency>> {
        self.require(caller, &[]).await?;
        let record: FeatureDependenciesRecord = self
            .feature_attachment(project, feature, feature_dependencies_key(feature))
            .await?;
        Ok(record.parents)
    }

    /// Make `feature` of `project` depend on `dependency.feature`, or change that dependency.
    /// Needs `UPDATE_FEATURE_DEPENDENCY` in the project.
    ///
    /// Unleash's rules, as 400s: no self-dependency; the parent exists, is not archived and
    /// is in the same project; no chains (the parent has no parents, the child no children).
    /// `enabled` defaults to true; variants are dropped when the parent must be disabled.
    /// Event `feature-dependency-added`.
    pub async fn add_feature_dependency(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        dependency: &ParentDependency,
    ) -> Result<()> {
        let permit = self
            .permit(
                caller,
                &[Need::project(Permission::UpdateFeatureDependency, project)],
            )
            .await?;
        let dependency = normalise_dependency(dependency);
        let dependency = &dependency;
        self.change("add_feature_dependency", permit, |tx| {
            Box::pin(async move {
                let [p] = tx.reader().read(&[project_key(project)]).await?;
                let features = tx.list(Collection::Features, "").await?;
                let mut projects = BTreeMap::new();
                for (id, record) in &features.records {
                    let f: FeatureRecord = decode(&feature_key(id), &record.value)?;
                    if f.name == feature {
                        check_feature(project, feature, p.is_some(), Some(f.clone()))?;
                    }
                    if !f.archived {
                        projects.insert(f.name.clone(), f.project.clone());
                    }
                }
                if !projects.contains_key(feature) {
                    check_feature(project, feature, p.is_some(), None)?;
                }
                let listing = tx.list(Collection::FeatureDependencies, "").await?;
                let mut graph = BTreeMap::new();
                for (id, record) in &listing.records {
                    let d: FeatureDependenciesRecord =
                        decode(&feature_dependencies_key(id), &record.value)?;
                    graph.insert(id.clone(), d.parents);
                }
                let before = graph.get(feature).cloned().unwrap_or_default();
                let after = upsert(&before, dependency.clone());
                if after == before {
                    return Ok(());
                }
                graph.insert(feature.to_owned(), after.clone());
                let project_of = |name: &str| projects.get(name).cloned();
                if let Some(problem) =
                    dependency_problem(feature, &dependency.feature, &graph, &project_of)
                {
                    return Err(Error::invalid_at("feature", problem));
                }
                let key = feature_dependencies_key(feature);
                tx.put(
                    key.clone(),
                    encode(&key, &FeatureDependenciesRecord { parents: after })?,
                )
                .record(
                    "feature-dependency-added",
                    Some(project),
                    Some(feature),
                    None,
                    None,
                    Some(Json::of(&dependency)),
                );
                Ok(())
            })
        })
        .await
    }

    /// Remove the dependency of `feature` on `parent`. Needs `UPDATE_FEATURE_DEPENDENCY` in
    /// the project. Removing one that does not exist changes nothing; otherwise event
    /// `feature-dependency-removed`.
    pub async fn remove_feature_dependency(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        parent: &str,
    ) -> Result<()> {
        let permit = self
            .permit(
                caller,
                &[Need::project(Permission::UpdateFeatureDependency, project)],
            )
            .await?;
        self.change("remove_feature_dependency", permit, |tx| {
            Box::pin(async move {
                let keys = [
                    project_key(project),
                    feature_key(feature),
                    feature_dependencies_key(feature),
                ];
                let records = tx.reader().read(&keys).await?;
                check_feature(
                    project,
                    feature,
                    records[0].is_some(),
                    decode_opt(&keys[1], records[1].as_ref())?,
                )?;
                let mut current: FeatureDependenciesRecord =
                    decode_opt(&keys[2], records[2].as_ref())?.unwrap_or_default();
                let Some(at) = current.parents.iter().position(|p| p.feature == parent) else {
                    return Ok(());
                };
                let removed = current.parents.remove(at);
                if current.parents.is_empty() {
                    tx.delete(keys[2].clone());
                } else {
                    tx.put(keys[2].clone(), encode(&keys[2], &current)?);
                }
                tx.record(
                    "feature-dependency-removed",
                    Some(project),
                    Some(feature),
                    None,
                    Some(Json::of(&removed)),
                    None,
                );
                Ok(())
            })
        })
        .await
    }
}
