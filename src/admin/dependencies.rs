//! Feature dependencies: a child feature is evaluated only when its parents are (add,
//! remove one or all, list; the features and variants a child may depend on; whether a
//! project has any).

use crate::store::Json;
use std::collections::{BTreeMap, BTreeSet};

use super::reader::Reader;

use super::records::{
    FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureRecord, SEP, check_feature, decode,
    decode_opt, encode, feature_dependencies_key, feature_key, project_key,
};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{dependency_problem, normalise_dependency, upsert};
use crate::model::ParentDependency;
use crate::model::Permission;
use crate::store::{Collection, Key};

impl ToggleAdmin {
    /// The parents of `feature` in `project`. Any valid key may read them.
    pub async fn feature_dependencies(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<Vec<ParentDependency>> {
        self.require(caller, &[]).await?;
        let (_, record): (_, FeatureDependenciesRecord) = self
            .reader()
            .feature_with(project, feature, feature_dependencies_key(feature))
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

impl ToggleAdmin {
    /// Remove every parent of `feature` of `project`: `DELETE
    /// /api/admin/projects/{projectId}/features/{featureName}/dependencies`. Needs
    /// `UPDATE_FEATURE_DEPENDENCY` in the project. A feature with no parents changes nothing
    /// (Unleash writes the event anyway); otherwise event `feature-dependencies-removed` with
    /// the parents as `preData`, as archiving a child writes it.
    pub async fn delete_feature_dependencies<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
    ) -> Result<()> {
        let permit = self
            .admit(
                authority.into(),
                &[Need::project(Permission::UpdateFeatureDependency, project)],
            )
            .await?;
        self.change("delete_feature_dependencies", permit, |tx| {
            Box::pin(async move {
                let key = feature_dependencies_key(feature);
                let (_, current): (_, FeatureDependenciesRecord) = tx
                    .reader()
                    .feature_with(project, feature, key.clone())
                    .await?;
                if current.parents.is_empty() {
                    return Ok(());
                }
                tx.delete(key.clone()).record(
                    "feature-dependencies-removed",
                    Some(project),
                    Some(feature),
                    None,
                    Some(encode(&key, &current.parents)?),
                    None,
                );
                Ok(())
            })
        })
        .await
    }

    /// The features `feature` of `project` could depend on, by name: `GET
    /// …/features/{featureName}/parents`. As Unleash: the project's features that are not
    /// archived, not `feature` itself, and not children of another feature themselves (no
    /// chains). Any valid key may read them; a missing project or feature is a 404 (Unleash
    /// answers an empty list).
    pub async fn possible_parents(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<Vec<String>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let [p, f] = reader
            .read(&[project_key(project), feature_key(feature)])
            .await?;
        check_feature(
            project,
            feature,
            p.is_some(),
            decode_opt(&feature_key(feature), f.as_ref())?,
        )?;
        let children: BTreeSet<String> = reader
            .list(Collection::FeatureDependencies, "")
            .await?
            .records
            .into_iter()
            .map(|(child, _)| child)
            .collect();
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let mut names: Vec<String> = features
            .into_iter()
            .filter(|f| {
                f.project == project
                    && !f.archived
                    && f.name != feature
                    && !children.contains(&f.name)
            })
            .map(|f| f.name)
            .collect();
        names.sort();
        Ok(names)
    }

    /// The variant names a child may require of `parent` of `project`, each once, sorted:
    /// `GET …/features/{featureName}/parent-variants`. As Unleash: the names of the
    /// parent's variants in every environment and of its strategies' variants. Any valid
    /// key may read them; a missing project or feature is a 404.
    pub async fn parent_variants(
        &self,
        caller: &Caller,
        project: &str,
        parent: &str,
    ) -> Result<Vec<String>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let [p, f] = reader
            .read(&[project_key(project), feature_key(parent)])
            .await?;
        check_feature(
            project,
            parent,
            p.is_some(),
            decode_opt(&feature_key(parent), f.as_ref())?,
        )?;
        let listing = reader
            .list(Collection::FeatureEnvironments, &format!("{parent}{SEP}"))
            .await?;
        let mut names = BTreeSet::new();
        for (id, stored) in &listing.records {
            let key = Key::new(Collection::FeatureEnvironments, id.clone());
            let fe: FeatureEnvironmentRecord = decode(&key, &stored.value)?;
            names.extend(fe.variants.into_iter().map(|v| v.name));
            for strategy in fe.strategies {
                names.extend(strategy.variants.into_iter().map(|v| v.name));
            }
        }
        Ok(names.into_iter().collect())
    }

    /// Whether any feature of `project` has a parent: `GET
    /// /api/admin/projects/{projectId}/dependencies`. Any valid key may ask; a missing
    /// project is a 404. (Unleash 6.10.1 answers whether any feature of any project has
    /// one; the path names a project, so this answers for it.)
    pub async fn project_has_dependencies(&self, caller: &Caller, project: &str) -> Result<bool> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let [p] = reader.read(&[project_key(project)]).await?;
        if p.is_none() {
            return Err(super::records::project_not_found(project));
        }
        let children = reader.list(Collection::FeatureDependencies, "").await?;
        if children.records.is_empty() {
            return Ok(false);
        }
        let keys: Vec<Key> = children
            .records
            .iter()
            .map(|(child, _)| feature_key(child))
            .collect();
        for (key, record) in keys.iter().zip(reader.get_all(&keys).await?) {
            let flag: Option<FeatureRecord> = decode_opt(key, record.as_ref())?;
            if flag.is_some_and(|f| f.project == project) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
