//! Reading features: one feature in Unleash's `featureSchema` (environments with their
//! strategies and variants, parents, children, creator and collaborators) and a project's
//! archive.

use super::ToggleAdmin;
use super::reader::Reader;
use super::records::{
    FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureRecord, SEP, decode, decode_opt,
    feature_key, project_key,
};
use super::records::{feature_not_found, project_not_found};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::ArchivedFeatures;
use crate::model::{
    Environment, Feature, FeatureEnvironment, FeatureStrategy, ParentDependency, Project,
};
use crate::store::Collection;

impl ToggleAdmin {
    /// The feature `name` of `project` in Unleash's `featureSchema`: its environments (in
    /// their sort order, with type, strategies in sort order, and variants), parents,
    /// children, creator and collaborators. An archived feature, or a feature of another
    /// project, is [`Error::NotFound`](crate::Error::NotFound) here, as if it did not exist
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
        let links = FeatureLinks {
            environments: &catalog,
            parents,
            children,
        };
        Ok(feature_view(&record, &current, &environments, Some(links)))
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
            .map(|f| Feature {
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
            })
            .collect();
        archived.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ArchivedFeatures {
            version: 2,
            features: archived,
        })
    }
}

/// What a feature's wire view shows beyond its own records: the environments' types and
/// sort orders, its parents and its children.
pub(crate) struct FeatureLinks<'a> {
    pub environments: &'a [Environment],
    pub parents: Vec<ParentDependency>,
    pub children: Vec<String>,
}

/// The wire view of a stored feature (Unleash's `featureSchema`): every environment of its
/// project in the environments' sort order, with its type, its strategies (in their sort
/// order, every field) and variants, and the default (disabled, nothing configured) where
/// nothing is stored.
pub(crate) fn feature_view(
    record: &FeatureRecord,
    project: &Project,
    stored: &[(String, FeatureEnvironmentRecord)],
    links: Option<FeatureLinks<'_>>,
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
    let (parents, children) = links.map_or((Vec::new(), Vec::new()), |l| (l.parents, l.children));
    let mut extra = serde_json::Map::new();
    extra.insert("links".to_owned(), serde_json::Value::Array(Vec::new()));
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
