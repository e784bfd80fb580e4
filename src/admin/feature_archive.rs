//! The archive: archive features (one or many), check an archive before doing it, list the
//! archive, revive archived features and delete them for good.

use std::collections::BTreeSet;

use chrono::Utc;

use super::flow::Tx;
use super::records::{
    FeatureDependenciesRecord, FeatureRecord, FeatureTagsRecord, SEP, decode, decode_opt, encode,
    feature_attachment_keys, feature_dependencies_key, feature_key, feature_lifecycle_key,
    feature_not_found, project_key, project_not_found,
};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{ArchiveCheck, ArchivedFeatures, Feature, Permission};
use crate::store::{Collection, Key};

/// Archive `record` (of `project`, read through `tx`) in `tx`: `feature-archived`, and its own
/// parent dependencies removed with `feature-dependencies-removed`. Children keep theirs, as
/// in Unleash (the client API treats a missing parent as off).
pub(crate) async fn archive_in(
    tx: &mut Tx<'_>,
    project: &str,
    record: &mut FeatureRecord,
    _batch: &[String],
) -> Result<()> {
    if record.archived {
        return Ok(());
    }
    let fkey = feature_key(&record.name);
    record.archived = true;
    record.archived_at = Some(Utc::now());
    tx.put(fkey.clone(), encode(&fkey, &*record)?).record(
        "feature-archived",
        Some(project),
        Some(&record.name),
        None,
        None,
        None,
    );
    let dkey = feature_dependencies_key(&record.name);
    if let Some(stored) = tx.get(&dkey).await? {
        let parents: FeatureDependenciesRecord = decode(&dkey, &stored.value)?;
        tx.delete(dkey.clone()).record(
            "feature-dependencies-removed",
            Some(project),
            Some(&record.name),
            None,
            Some(encode(&dkey, &parents.parents)?),
            None,
        );
    }
    Ok(())
}

/// The distinct names of a batch, each checked: every problem named with its index.
fn batch_names(features: &[String]) -> Result<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    let mut names = Vec::new();
    if features.is_empty() {
        return Err(Error::invalid_at("/features", "name at least one feature"));
    }
    for (index, name) in features.iter().enumerate() {
        if name.is_empty() || name.len() > 100 {
            problems.push(ErrorDetail::at(
                format!("/features/{index}"),
                "a feature name is 1–100 characters",
            ));
        } else if seen.insert(name.clone()) {
            names.push(name.clone());
        }
    }
    if problems.is_empty() {
        Ok(names)
    } else {
        Err(Error::validation("Some features are not valid.", problems))
    }
}

/// Reads the features of a batch through `tx`, all of `project` and archived or not as
/// `archived` says; every one that is not is named with its index in one 400, or a 404 when
/// the project is missing or every such name is of no feature
/// ([`bulk_refusal`](super::records::bulk_refusal)).
async fn batch_records(
    tx: &mut Tx<'_>,
    project: &str,
    features: &[String],
    archived: bool,
) -> Result<Vec<FeatureRecord>> {
    let pkey = project_key(project);
    if tx.get(&pkey).await?.is_none() {
        return Err(project_not_found(project));
    }
    let mut problems = Vec::new();
    let mut missing = 0;
    let mut records = Vec::new();
    for (index, name) in features.iter().enumerate() {
        let key = feature_key(name);
        let record: Option<FeatureRecord> = decode_opt(&key, tx.get(&key).await?.as_ref())?;
        match record {
            Some(r) if r.project == project && r.archived == archived => records.push(r),
            Some(r) if r.project == project => problems.push(ErrorDetail::at(
                format!("/features/{index}"),
                if archived {
                    format!("the feature \"{name}\" is not archived")
                } else {
                    format!("the feature \"{name}\" is archived")
                },
            )),
            _ => {
                missing += 1;
                problems.push(ErrorDetail::at(
                    format!("/features/{index}"),
                    format!("there's no feature named \"{name}\" in project \"{project}\""),
                ))
            }
        }
    }
    if problems.is_empty() {
        Ok(records)
    } else {
        Err(super::records::bulk_refusal(problems, missing))
    }
}

/// Delete `record` for good in `tx`: the feature, its environments, tags, parent
/// dependencies, links and lifecycle, with `feature-deleted`.
async fn delete_in(tx: &mut Tx<'_>, project: &str, record: &FeatureRecord) -> Result<()> {
    let name = &record.name;
    let fkey = feature_key(name);
    let environments = tx
        .list(Collection::FeatureEnvironments, &format!("{name}{SEP}"))
        .await?;
    for (id, _) in &environments.records {
        tx.delete(Key::new(Collection::FeatureEnvironments, id.clone()));
    }
    let mut tags = Vec::new();
    for key in feature_attachment_keys(name) {
        let Some(found) = tx.get(&key).await? else {
            continue;
        };
        if key.collection == Collection::FeatureTags {
            tags = decode::<FeatureTagsRecord>(&key, &found.value)?.tags;
        }
        tx.delete(key);
    }
    // The event carries the tags the feature had, as Unleash's does.
    let tags = encode(&fkey, &tags)?;
    tx.delete(fkey.clone()).record_tagged(
        "feature-deleted",
        Some(project),
        Some(name),
        Some(encode(&fkey, record)?),
        None,
        tags,
    );
    Ok(())
}

/// Revive `record` in `tx`: not archived, off in every environment, `feature-revived`; its
/// lifecycle starts again (its completion is forgotten, as Unleash forgets every stage).
async fn revive_in(tx: &mut Tx<'_>, project: &str, record: &FeatureRecord) -> Result<()> {
    let name = &record.name;
    let fkey = feature_key(name);
    let next = FeatureRecord {
        archived: false,
        archived_at: None,
        ..record.clone()
    };
    tx.put(fkey.clone(), encode(&fkey, &next)?).record(
        "feature-revived",
        Some(project),
        Some(name),
        None,
        None,
        None,
    );
    let lifecycle = feature_lifecycle_key(name);
    if tx.get(&lifecycle).await?.is_some() {
        tx.delete(lifecycle);
    }
    let environments = tx
        .list(Collection::FeatureEnvironments, &format!("{name}{SEP}"))
        .await?;
    for (id, stored) in &environments.records {
        let key = Key::new(Collection::FeatureEnvironments, id.clone());
        let mut fe: super::records::FeatureEnvironmentRecord = decode(&key, &stored.value)?;
        if fe.enabled {
            fe.enabled = false;
            let environment = id.split_once(SEP).map(|(_, e)| e);
            tx.put(key.clone(), encode(&key, &fe)?).record(
                "feature-environment-disabled",
                Some(project),
                Some(name),
                environment,
                None,
                None,
            );
        }
    }
    Ok(())
}

impl ToggleAdmin {
    /// Archive the feature `name` of `project`. Needs `DELETE_FEATURE` in the project.
    /// Archiving an archived feature changes nothing and succeeds. Its own parent
    /// dependencies are removed with it (`feature-dependencies-removed`), as in Unleash.
    pub async fn archive_feature(&self, caller: &Caller, project: &str, name: &str) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::DeleteFeature, project)])
            .await?;
        self.change("archive_feature", permit, |tx| {
            Box::pin(async move {
                let (pkey, fkey) = (project_key(project), feature_key(name));
                let [project_record, feature_record] =
                    tx.read(&[pkey.clone(), fkey.clone()]).await?;
                if project_record.is_none() {
                    return Err(project_not_found(project));
                }
                let mut record: FeatureRecord = decode_opt(&fkey, feature_record.as_ref())?
                    .filter(|f: &FeatureRecord| f.project == project)
                    .ok_or_else(|| feature_not_found(name, project))?;
                archive_in(tx, project, &mut record, &[]).await
            })
        })
        .await
    }

    /// Archive the features `names` of `project` at once (Unleash's
    /// `POST /api/admin/projects/{p}/archive`). Needs `DELETE_FEATURE` in the project.
    /// Atomic: when one name is not an active feature of the project, nothing is archived
    /// and the 400 names every such feature with its index (Unleash archives what it can);
    /// a 404 when every such name is of no feature.
    pub async fn archive_features(
        &self,
        caller: &Caller,
        project: &str,
        names: &[String],
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::DeleteFeature, project)])
            .await?;
        let names = batch_names(names)?;
        let names = &names;
        self.change("archive_features", permit, |tx| {
            Box::pin(async move {
                let records = batch_records(tx, project, names, false).await?;
                for mut record in records {
                    archive_in(tx, project, &mut record, names).await?;
                }
                Ok(())
            })
        })
        .await
    }

    /// What archiving `names` of `project` would do: which of them other active features
    /// depend on, and whether dependencies would be removed. Nothing is written. Needs
    /// `DELETE_FEATURE` in the project.
    pub async fn validate_archive(
        &self,
        caller: &Caller,
        project: &str,
        names: &[String],
    ) -> Result<ArchiveCheck> {
        self.require(caller, &[Need::project(Permission::DeleteFeature, project)])
            .await?;
        let names = batch_names(names)?;
        let reader = self.reader();
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let active: BTreeSet<&str> = features
            .iter()
            .filter(|f| !f.archived)
            .map(|f| f.name.as_str())
            .collect();
        let dependencies = reader.list(Collection::FeatureDependencies, "").await?;
        let batch: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        let mut parents = BTreeSet::new();
        let mut has_deleted_dependencies = false;
        for (child, stored) in &dependencies.records {
            let key = Key::new(Collection::FeatureDependencies, child.clone());
            let record: FeatureDependenciesRecord = decode(&key, &stored.value)?;
            if batch.contains(child.as_str()) {
                has_deleted_dependencies |= !record.parents.is_empty();
            } else if active.contains(child.as_str()) {
                for parent in &record.parents {
                    if batch.contains(parent.feature.as_str()) {
                        parents.insert(parent.feature.clone());
                    }
                }
            }
        }
        Ok(ArchiveCheck {
            parents_with_child_features: parents.into_iter().collect(),
            has_deleted_dependencies,
        })
    }

    /// Every archived feature, of every project, by name (Unleash's
    /// `GET /api/admin/archive/features`), each as
    /// [`archived_features`](Self::archived_features) shows it.
    pub async fn all_archived_features(&self, caller: &Caller) -> Result<ArchivedFeatures> {
        self.require(caller, &[]).await?;
        let (_, features) = self
            .reader()
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let mut archived: Vec<Feature> = features
            .iter()
            .filter(|f| f.archived)
            .map(archived_view)
            .collect();
        archived.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ArchivedFeatures {
            version: 2,
            features: archived,
        })
    }

    /// Revive the archived features `names` of `project`: back in the project, off in every
    /// environment (`feature-revived`, `feature-environment-disabled` where one was on).
    /// Needs `UPDATE_FEATURE` in the project. Atomic: a name that is not an archived feature
    /// of the project → 400 naming each with its index (a 404 when every such name is of no
    /// feature), nothing changed.
    pub async fn revive_features(
        &self,
        caller: &Caller,
        project: &str,
        names: &[String],
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateFeature, project)])
            .await?;
        let names = batch_names(names)?;
        let names = &names;
        self.change("revive_features", permit, |tx| {
            Box::pin(async move {
                for record in batch_records(tx, project, names, true).await? {
                    revive_in(tx, project, &record).await?;
                }
                Ok(())
            })
        })
        .await
    }

    /// Revive the archived feature `name` (Unleash's `POST /api/admin/archive/revive/{f}`),
    /// as [`revive_features`](Self::revive_features) does. An unknown feature is a 404, a
    /// feature that is not archived a 400.
    pub async fn revive_feature(&self, caller: &Caller, name: &str) -> Result<()> {
        let project = self.feature_project(caller, name).await?;
        self.revive_features(caller, &project, &[name.to_owned()])
            .await
    }

    /// Delete the archived features `names` of `project` for good, with their environments,
    /// tags and dependencies (`feature-deleted` each); the names are free again. Needs
    /// `DELETE_FEATURE` in the project. Only archived features may be deleted. Atomic: a name
    /// that is not an archived feature of the project → 400 naming each with its index (a 404
    /// when every such name is of no feature). Unleash answers 200 to a name that is not
    /// archived and deletes nothing; we say so.
    pub async fn delete_features(
        &self,
        caller: &Caller,
        project: &str,
        names: &[String],
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::DeleteFeature, project)])
            .await?;
        let names = batch_names(names)?;
        let names = &names;
        self.change("delete_features", permit, |tx| {
            Box::pin(async move {
                for record in batch_records(tx, project, names, true).await? {
                    delete_in(tx, project, &record).await?;
                }
                Ok(())
            })
        })
        .await
    }

    /// Delete the archived feature `name` for good (Unleash's `DELETE /api/admin/archive/{f}`),
    /// as [`delete_features`](Self::delete_features) does. Unknown → 404; not archived → 400.
    pub async fn delete_feature(&self, caller: &Caller, name: &str) -> Result<()> {
        let project = self.feature_project(caller, name).await?;
        self.delete_features(caller, &project, &[name.to_owned()])
            .await
    }

    /// Mark the features `names` of `project` stale or not (Unleash's
    /// `POST /api/admin/projects/{p}/stale`): `feature-stale-on`/`-off` for each that changes.
    /// Needs `UPDATE_FEATURE` in the project. Atomic, as the other batches.
    pub async fn set_features_stale(
        &self,
        caller: &Caller,
        project: &str,
        names: &[String],
        stale: bool,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateFeature, project)])
            .await?;
        let names = batch_names(names)?;
        let names = &names;
        self.change("set_features_stale", permit, |tx| {
            Box::pin(async move {
                for record in batch_records(tx, project, names, false).await? {
                    if record.stale == stale {
                        continue;
                    }
                    let key = feature_key(&record.name);
                    let next = FeatureRecord {
                        stale,
                        ..record.clone()
                    };
                    let kind = if stale {
                        "feature-stale-on"
                    } else {
                        "feature-stale-off"
                    };
                    tx.put(key.clone(), encode(&key, &next)?).record(
                        kind,
                        Some(project),
                        Some(&record.name),
                        None,
                        None,
                        None,
                    );
                }
                Ok(())
            })
        })
        .await
    }
}

/// An archived feature as the archive lists show it: without environments.
pub(crate) fn archived_view(f: &FeatureRecord) -> Feature {
    Feature {
        name: f.name.clone(),
        feature_type: Some(f.feature_type.clone()),
        description: Some(f.description.clone()),
        project: Some(f.project.clone()),
        stale: Some(f.stale),
        impression_data: Some(f.impression_data),
        created_at: Some(Some(f.created_at)),
        archived_at: Some(f.archived_at),
        last_seen_at: Some(None),
        environments: Some(Vec::new()),
        ..Feature::default()
    }
}
