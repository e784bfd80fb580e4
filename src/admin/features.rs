//! Features: create and archive one; read one in Unleash's `featureSchema` (environments
//! with their strategies and variants, parents, children, creator and collaborators) and a
//! project's archive.

use chrono::Utc;

use super::reader::Reader;
use super::records::{
    FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureLinksRecord, FeatureRecord, SEP,
    decode, decode_opt, encode, feature_key, feature_links_key, project_key,
};
use super::records::{feature_not_found, project_not_found};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::ArchivedFeatures;
use crate::model::NewFeature;
use crate::model::Permission;
use crate::model::{
    Environment, Feature, FeatureEnvironment, FeatureLink, FeatureStrategy, ParentDependency,
    Project,
};
use crate::names::name_problem;
use crate::store::Collection;

impl ToggleAdmin {
    /// The feature `name` of `project` in Unleash's `featureSchema`: its environments (in
    /// their sort order, with type, strategies in sort order, and variants), parents,
    /// children, creator and collaborators. An archived feature, or a feature of another
    /// project, is [`Error::NotFound`] here, as if it did not exist
    /// (Unleash reads archived features from the archive). Collaborators are the users who
    /// created or imported it, most recent first.
    ///
    /// Everything is read from one consistent view of the store (one revision).
    pub async fn feature(&self, caller: &Caller, project: &str, name: &str) -> Result<Feature> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        self.feature_in_view(Reader::View(view.as_ref()), project, name)
            .await
    }

    async fn feature_in_view(
        &self,
        reader: Reader<'_>,
        project: &str,
        name: &str,
    ) -> Result<Feature> {
        let (pkey, fkey) = (project_key(project), feature_key(name));
        let [project_record, feature_record] = reader.read(&[pkey.clone(), fkey.clone()]).await?;
        let current: Project = decode_opt(&pkey, project_record.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let record: FeatureRecord = decode_opt(&fkey, feature_record.as_ref())?
            .filter(|f: &FeatureRecord| f.project == project)
            .ok_or_else(|| feature_not_found(name, project))?;
        if record.archived {
            // As in Unleash: an archived feature is read from the archive, not here.
            return Err(feature_not_found(name, project));
        }
        let listing = reader
            .list(Collection::FeatureEnvironments, &format!("{name}{SEP}"))
            .await?;
        let mut environments = Vec::new();
        for (id, stored) in &listing.records {
            let env = id.split_once(SEP).map_or(id.as_str(), |(_, env)| env);
            let fe: FeatureEnvironmentRecord = decode(
                &crate::store::Key::new(Collection::FeatureEnvironments, id.clone()),
                &stored.value,
            )?;
            environments.push((env.to_owned(), fe));
        }
        let (_, catalog) = reader
            .list_decoded::<Environment>(Collection::Environments)
            .await?;
        let mut parents = Vec::new();
        let mut children: Vec<String> = Vec::new();
        let listing = reader.list(Collection::FeatureDependencies, "").await?;
        for (id, stored) in &listing.records {
            let key = crate::store::Key::new(Collection::FeatureDependencies, id.clone());
            let record: FeatureDependenciesRecord = decode(&key, &stored.value)?;
            if id == name {
                parents = record.parents;
            } else if record.parents.iter().any(|p| p.feature == name) {
                children.push(id.clone());
            }
        }
        let lkey = feature_links_key(name);
        let [links] = reader.read(std::array::from_ref(&lkey)).await?;
        let links: FeatureLinksRecord = decode_opt(&lkey, links.as_ref())?.unwrap_or_default();
        let relations = FeatureRelations {
            environments: &catalog,
            parents,
            children,
            links: links.links,
        };
        Ok(feature_view(
            &record,
            &current,
            &environments,
            Some(relations),
        ))
    }

    /// The features of `project` that are not archived, by name, each in Unleash's
    /// `featureSchema` as [`feature`](Self::feature) shows it (Unleash's
    /// `projectFeaturesSchema`). Any valid key may read them; an unknown project →
    /// [`Error::NotFound`]. Read from one consistent view of the store.
    pub async fn project_features(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<crate::model::ProjectFeatures> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let pkey = project_key(project);
        let project_record = view.get(&pkey).await?;
        let current: Project = decode_opt(&pkey, project_record.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        Ok(crate::model::ProjectFeatures {
            version: 2,
            features: self.project_features_in(reader, &current).await?,
        })
    }

    /// The features of `current` that are not archived, by name, as
    /// [`project_features`](Self::project_features) shows them, read through `reader`.
    pub(super) async fn project_features_in(
        &self,
        reader: Reader<'_>,
        current: &Project,
    ) -> Result<Vec<Feature>> {
        let project = current.id.as_str();
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let mut features: Vec<FeatureRecord> = features
            .into_iter()
            .filter(|f| f.project == project && !f.archived)
            .collect();
        features.sort_by(|a, b| a.name.cmp(&b.name));
        let (_, catalog) = reader
            .list_decoded::<Environment>(Collection::Environments)
            .await?;
        let dependencies = reader.list(Collection::FeatureDependencies, "").await?;
        let mut parents_of: std::collections::BTreeMap<String, Vec<ParentDependency>> =
            std::collections::BTreeMap::new();
        for (id, stored) in &dependencies.records {
            let key = crate::store::Key::new(Collection::FeatureDependencies, id.clone());
            let record: FeatureDependenciesRecord = decode(&key, &stored.value)?;
            parents_of.insert(id.clone(), record.parents);
        }
        let mut links_of: std::collections::BTreeMap<String, Vec<FeatureLink>> =
            std::collections::BTreeMap::new();
        for (id, stored) in &reader.list(Collection::FeatureLinks, "").await?.records {
            let record: FeatureLinksRecord = decode(&feature_links_key(id), &stored.value)?;
            links_of.insert(id.clone(), record.links);
        }
        let mut views = Vec::with_capacity(features.len());
        for record in &features {
            let listing = reader
                .list(
                    Collection::FeatureEnvironments,
                    &format!("{}{SEP}", record.name),
                )
                .await?;
            let mut environments = Vec::new();
            for (id, stored) in &listing.records {
                let env = id.split_once(SEP).map_or(id.as_str(), |(_, env)| env);
                let fe: FeatureEnvironmentRecord = decode(
                    &crate::store::Key::new(Collection::FeatureEnvironments, id.clone()),
                    &stored.value,
                )?;
                environments.push((env.to_owned(), fe));
            }
            let children = parents_of
                .iter()
                .filter(|(_, parents)| parents.iter().any(|p| p.feature == record.name))
                .map(|(child, _)| child.clone())
                .collect();
            let relations = FeatureRelations {
                environments: &catalog,
                parents: parents_of.get(&record.name).cloned().unwrap_or_default(),
                children,
                links: links_of.remove(&record.name).unwrap_or_default(),
            };
            views.push(feature_view(
                record,
                current,
                &environments,
                Some(relations),
            ));
        }
        Ok(views)
    }

    /// One environment of the feature `name` of `project`, as [`feature`](Self::feature)
    /// shows it (Unleash's `featureEnvironmentSchema`: enabled, type, strategies, variants).
    /// The 404s are those of the feature and of the environment (unknown, or not one of the
    /// project's).
    pub async fn feature_environment(
        &self,
        caller: &Caller,
        project: &str,
        name: &str,
        environment: &str,
    ) -> Result<FeatureEnvironment> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let keys = super::records::feature_environment_keys(project, name, environment);
        let records = reader.read(&keys).await?;
        super::records::feature_environment_found(project, name, environment, &keys, &records)?;
        let feature = self.feature_in_view(reader, project, name).await?;
        feature
            .environments
            .unwrap_or_default()
            .into_iter()
            .find(|e| e.name == environment)
            .map(|mut e| {
                // Alone, a feature environment is named for its feature, and so is each
                // strategy, as in Unleash.
                e.name = name.to_owned();
                e.environment = Some(environment.to_owned());
                for strategy in e.strategies.iter_mut().flatten() {
                    strategy.feature_name = Some(name.to_owned());
                }
                e
            })
            .ok_or_else(|| super::records::environment_not_found(environment))
    }

    /// The archived features of `project`, by name, each without environments, as
    /// Unleash's archive list shows them. Any valid key may read them; an unknown project
    /// has none.
    pub async fn archived_features(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<ArchivedFeatures> {
        self.require(caller, &[]).await?;
        let (_, features) = self
            .reader()
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let mut archived: Vec<Feature> = features
            .iter()
            .filter(|f| f.archived && f.project == project)
            .map(super::feature_archive::archived_view)
            .collect();
        archived.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ArchivedFeatures {
            version: 2,
            features: archived,
        })
    }

    /// Create a feature in `project`. Needs `CREATE_FEATURE` in the project.
    ///
    /// The name must be 1–100 URL-friendly characters, unique across all projects (archived
    /// features included) → [`Error::NameExists`], and match the
    /// project's naming pattern; the project's feature limit counts its features that are
    /// not archived. The feature starts disabled in every environment of its project.
    ///
    /// The body may carry what the Terraform provider sends with it: `project` (must be
    /// `project`), `archived` (only `false`), `stale` (taken), `environments` and
    /// `variants` (only `null` or `[]`); anything else there → [`Error::Validation`] naming
    /// the field.
    pub async fn create_feature(
        &self,
        caller: &Caller,
        project: &str,
        feature: &NewFeature,
    ) -> Result<Feature> {
        let permit = self
            .permit(caller, &[Need::project(Permission::CreateFeature, project)])
            .await?;
        if let Some(problem) = name_problem(&feature.name, 100) {
            return Err(Error::invalid_at("name", problem));
        }
        creation_problems(project, feature)?;
        self.change("create_feature", permit, |tx| {
            Box::pin(async move {
                let user = tx.author().feature_user();
                let pkey = project_key(project);
                let fkey = feature_key(&feature.name);
                let [project_record, feature_record] =
                    tx.read(&[pkey.clone(), fkey.clone()]).await?;
                let current: Project = decode_opt(&pkey, project_record.as_ref())?
                    .ok_or_else(|| project_not_found(project))?;
                if feature_record.is_some() {
                    return Err(Error::name_exists(format!(
                        "A feature named \"{}\" already exists.",
                        feature.name
                    )));
                }
                if let Some(naming) = &current.feature_naming {
                    let regex = crate::names::naming_regex(&naming.pattern)
                        .map_err(|p| Error::invalid_at("name", p))?;
                    if !regex.is_match(&feature.name) {
                        let mut message = format!(
                            "The feature name \"{}\" does not match the project's naming pattern \"{}\"",
                            feature.name, naming.pattern
                        );
                        if let Some(example) = &naming.example {
                            message.push_str(&format!(" (for example \"{example}\")"));
                        }
                        return Err(Error::invalid_at("name", message));
                    }
                }
                if let Some(limit) = current.feature_limit {
                    let all = tx.list(Collection::Features, "").await?;
                    let mut active = 0u64;
                    for (id, record) in &all.records {
                        let existing: FeatureRecord = decode(&feature_key(id), &record.value)?;
                        if existing.project == project && !existing.archived {
                            active += 1;
                        }
                    }
                    if active >= u64::from(limit) {
                        return Err(Error::invalid_at(
                            "name",
                            format!(
                                "Failed to create feature flag. You can't create more than the established limit of {limit}."
                            ),
                        ));
                    }
                }
                let record = FeatureRecord {
                    name: feature.name.clone(),
                    project: project.to_owned(),
                    feature_type: feature
                        .feature_type
                        .clone()
                        .unwrap_or_else(|| "release".to_owned()),
                    description: feature.description.clone(),
                    impression_data: feature.impression_data.unwrap_or(false),
                    stale: feature.stale.unwrap_or(false),
                    archived: false,
                    archived_at: None,
                    created_at: Utc::now(),
                    created_by: Some(user.clone()),
                    collaborators: vec![user.clone()],
                };
                tx.put(fkey.clone(), encode(&fkey, &record)?).record(
                    "feature-created",
                    Some(project),
                    Some(&feature.name),
                    None,
                    None,
                    Some(encode(&fkey, &record.created_data())?),
                );
                // The environments' types and sort orders, for the view (a new feature has
                // no parents or children).
                let (_, catalog) = tx
                    .reader()
                    .list_decoded::<Environment>(Collection::Environments)
                    .await?;
                let links = FeatureRelations {
                    environments: &catalog,
                    parents: Vec::new(),
                    children: Vec::new(),
                    links: Vec::new(),
                };
                Ok(feature_view(&record, &current, &[], Some(links)))
            })
        })
        .await
    }

    /// The project the feature `name` belongs to (archived or not), for the routes that name
    /// a feature without its project (`/api/admin/features/{featureName}/…`). Any valid key
    /// may ask; an unknown feature is [`Error::NotFound`].
    pub async fn feature_project(&self, caller: &Caller, name: &str) -> Result<String> {
        self.require(caller, &[]).await?;
        let key = feature_key(name);
        let record: Option<FeatureRecord> = decode_opt(&key, self.store.get(&key).await?.as_ref())?;
        record
            .map(|f| f.project)
            .ok_or_else(|| Error::not_found(format!("There's no feature named \"{name}\".")))
    }
}

/// What a feature's wire view shows beyond its own records: the environments' types and
/// sort orders, its parents, its children and its links.
pub(crate) struct FeatureRelations<'a> {
    pub environments: &'a [Environment],
    pub parents: Vec<ParentDependency>,
    pub children: Vec<String>,
    pub links: Vec<FeatureLink>,
}

/// The wire view of a stored feature (Unleash's `featureSchema`): every environment of its
/// project in the environments' sort order, with its type, its strategies (in their sort
/// order, every field) and variants, and the default (disabled, nothing configured) where
/// nothing is stored.
/// What a creation body may not say: another project, `archived: true`, environments or
/// variants (they are set through their own routes).
fn creation_problems(project: &str, feature: &NewFeature) -> Result<()> {
    let mut problems = Vec::new();
    if let Some(named) = &feature.project
        && named != project
    {
        problems.push(crate::error::ErrorDetail::at(
            "/project",
            format!("the project \"{named}\" is not the one of the path (\"{project}\")"),
        ));
    }
    if feature.archived == Some(true) {
        problems.push(crate::error::ErrorDetail::at(
            "/archived",
            "a feature cannot be created archived",
        ));
    }
    for (path, value) in [
        ("/environments", &feature.environments),
        ("/variants", &feature.variants),
    ] {
        match value {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Array(items)) if items.is_empty() => {}
            Some(_) => problems.push(crate::error::ErrorDetail::at(
                path,
                "only null or [] is accepted here; set environments and variants through their own routes",
            )),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::validation("The feature is not valid.", problems))
    }
}

pub(crate) fn feature_view(
    record: &FeatureRecord,
    project: &Project,
    stored: &[(String, FeatureEnvironmentRecord)],
    links: Option<FeatureRelations<'_>>,
) -> Feature {
    let default = FeatureEnvironmentRecord::default();
    let catalog: &[Environment] = links.as_ref().map_or(&[], |l| l.environments);
    let mut environments: Vec<FeatureEnvironment> = project
        .environments
        .iter()
        .enumerate()
        .map(|(i, env)| {
            let fe = stored
                .iter()
                .find(|(name, _)| name == env)
                .map_or(&default, |(_, fe)| fe);
            let known = catalog.iter().find(|e| e.name == *env);
            let strategies = fe
                .strategies
                .iter()
                .enumerate()
                .map(|(order, strategy)| FeatureStrategy {
                    title: Some(strategy.title.clone().flatten()),
                    disabled: Some(Some(strategy.is_disabled())),
                    sort_order: Some(
                        strategy
                            .sort_order
                            .unwrap_or_else(|| i64::try_from(order).unwrap_or(i64::MAX)),
                    ),
                    feature_name: None,
                    ..strategy.clone()
                })
                .collect();
            let mut extra = serde_json::Map::new();
            extra.insert("yes".to_owned(), 0.into());
            extra.insert("no".to_owned(), 0.into());
            FeatureEnvironment {
                name: env.clone(),
                feature_name: Some(record.name.clone()),
                environment: Some(env.clone()),
                environment_type: known.map(|e| e.environment_type.clone()),
                enabled: fe.enabled,
                sort_order: known
                    .and_then(|e| e.sort_order)
                    .or_else(|| i64::try_from(i).ok()),
                variant_count: u32::try_from(fe.variants.len()).ok(),
                strategies: Some(strategies),
                variants: Some(fe.variants.clone()),
                last_seen_at: Some(None),
                has_strategies: Some(!fe.strategies.is_empty()),
                has_enabled_strategies: Some(fe.strategies.iter().any(|s| !s.is_disabled())),
                extra,
            }
        })
        .collect();
    environments.sort_by(|a, b| {
        (a.sort_order.unwrap_or(i64::MAX), &a.name)
            .cmp(&(b.sort_order.unwrap_or(i64::MAX), &b.name))
    });
    // Legacy (feature-level) variants, as Unleash shows them with `enableLegacyVariants`:
    // those of the first environment, in sort order, that has any.
    let legacy_variants = environments
        .iter()
        .find_map(|e| e.variants.clone().filter(|v| !v.is_empty()))
        .unwrap_or_default();
    let (parents, children, links) = links.map_or((Vec::new(), Vec::new(), Vec::new()), |l| {
        (l.parents, l.children, l.links)
    });
    let mut extra = serde_json::Map::new();
    extra.insert("links".to_owned(), serde_json::json!(links));
    if let Some(user) = &record.created_by {
        extra.insert("createdBy".to_owned(), serde_json::json!(user));
    }
    extra.insert(
        "collaborators".to_owned(),
        serde_json::json!({ "users": record.collaborators }),
    );
    Feature {
        name: record.name.clone(),
        feature_type: Some(record.feature_type.clone()),
        description: Some(record.description.clone()),
        archived: Some(record.archived),
        project: Some(record.project.clone()),
        stale: Some(record.stale),
        impression_data: Some(record.impression_data),
        created_at: Some(Some(record.created_at)),
        archived_at: record.archived_at.map(Some),
        last_seen_at: Some(None),
        environments: Some(environments),
        variants: Some(legacy_variants),
        dependencies: Some(parents),
        children: Some(children),
        extra,
        ..Feature::default()
    }
}
