//! Export: features with their configuration in one environment, in exactly the shape an
//! import takes.

use std::collections::BTreeSet;

use super::ToggleAdmin;
use super::reader::Reader;
use super::records::{
    FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureRecord, FeatureTagsRecord,
    decode_opt, feature_dependencies_key, feature_environment_key, feature_tags_key,
};
use crate::auth::Caller;
use crate::error::Result;
use crate::import::{
    ExportSource, ExportedFeature, FeatureEnvironmentState, FeatureMeta, build_export,
};
use crate::model::{ExportData, ExportQuery, ExportSelection, Project};
use crate::store::{Collection, Key};

impl ToggleAdmin {
    /// Export features with their configuration in `environment`, in exactly the shape
    /// [`import_toggles`](Self::import_toggles) takes (the `data` of its body):
    /// `POST /api/admin/features-batch/export`.
    ///
    /// The features are those the query selects ([`ExportQuery::selection`], Unleash's
    /// precedence: `tag`, a non-empty `features` list, `project`, else all). Names that do not
    /// exist are left out, as Unleash does: an export of unknown names is an empty document,
    /// not an error. A feature's strategies and environment entry are exported when its
    /// project has `environment`. The order is deterministic (features by name, tags by type
    /// and value, segments by id, context fields and tag types by name), and only the tag
    /// types, context fields and segments the exported features use are included. Strategy
    /// ids are the stored ones (an import gives new ones). Any valid key may export. A `tag`
    /// not written `type:value` is an [`Error::Validation`](crate::Error::Validation).
    ///
    /// The document is read from one consistent view of the store (one revision), without
    /// waiting for writers or retrying when they commit meanwhile.
    pub async fn export_query(&self, caller: &Caller, query: &ExportQuery) -> Result<ExportData> {
        self.require(caller, &[]).await?;
        let selection = query.selection()?;
        let environment = query.environment.as_str();
        let view = self.store.view().await?;
        self.read_export(Reader::View(view.as_ref()), environment, &selection)
            .await
    }

    /// Export, in `environment`, the features named in `features` (wherever they live; names
    /// that do not exist are left out), or, when `features` is empty, every feature of
    /// `project` that is not archived: the [`export_query`](Self::export_query) of
    /// `{environment, project, features}`, with Unleash's precedence.
    pub async fn export(
        &self,
        caller: &Caller,
        project: &str,
        environment: &str,
        features: &[String],
    ) -> Result<ExportData> {
        let query = ExportQuery {
            environment: environment.to_owned(),
            features: features.to_vec(),
            project: Some(project.to_owned()),
            ..ExportQuery::default()
        };
        self.export_query(caller, &query).await
    }

    async fn read_export(
        &self,
        reader: Reader<'_>,
        environment: &str,
        selection: &ExportSelection,
    ) -> Result<ExportData> {
        let (_, all) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let selected = self.select_features(reader, &all, selection).await?;
        let (_, projects) = reader.list_decoded::<Project>(Collection::Projects).await?;
        let with_environment: BTreeSet<&str> = projects
            .iter()
            .filter(|p| p.environments.iter().any(|e| e == environment))
            .map(|p| p.id.as_str())
            .collect();
        let mut keys = Vec::with_capacity(selected.len() * 3);
        for f in &selected {
            keys.push(feature_environment_key(&f.name, environment));
            keys.push(feature_tags_key(&f.name));
            keys.push(feature_dependencies_key(&f.name));
        }
        let records = reader.get_all(&keys).await?;
        let mut exported = Vec::with_capacity(selected.len());
        for (i, f) in selected.iter().enumerate() {
            let fe: FeatureEnvironmentRecord =
                decode_opt(&keys[3 * i], records[3 * i].as_ref())?.unwrap_or_default();
            let tags: FeatureTagsRecord =
                decode_opt(&keys[3 * i + 1], records[3 * i + 1].as_ref())?.unwrap_or_default();
            let deps: FeatureDependenciesRecord =
                decode_opt(&keys[3 * i + 2], records[3 * i + 2].as_ref())?.unwrap_or_default();
            let in_environment = with_environment.contains(f.project.as_str());
            exported.push(ExportedFeature {
                name: f.name.clone(),
                project: f.project.clone(),
                archived: f.archived,
                meta: meta_of(f),
                environment: in_environment.then(|| state_of(fe)),
                tags: tags.tags,
                parents: deps.parents,
            });
        }
        let (_, segments) = reader.segment_list().await?;
        let (_, context_fields) = reader.context_field_map().await?;
        let (_, tag_types) = reader.tag_type_map().await?;
        Ok(build_export(ExportSource {
            environment,
            features: exported,
            segments: &segments,
            context_fields: &context_fields,
            tag_types: &tag_types,
        }))
    }

    /// The features `selection` names, among `all`.
    async fn select_features<'a>(
        &self,
        reader: Reader<'_>,
        all: &'a [FeatureRecord],
        selection: &ExportSelection,
    ) -> Result<Vec<&'a FeatureRecord>> {
        Ok(match selection {
            ExportSelection::All => all.iter().filter(|f| !f.archived).collect(),
            ExportSelection::Project(project) => all
                .iter()
                .filter(|f| !f.archived && f.project == *project)
                .collect(),
            ExportSelection::Features(names) => {
                let wanted: BTreeSet<&str> = names.iter().map(String::as_str).collect();
                all.iter()
                    .filter(|f| wanted.contains(f.name.as_str()))
                    .collect()
            }
            ExportSelection::Tag { tag_type, value } => {
                let keys: Vec<Key> = all.iter().map(|f| feature_tags_key(&f.name)).collect();
                let records = reader.get_all(&keys).await?;
                let mut selected = Vec::new();
                for ((feature, key), record) in all.iter().zip(&keys).zip(&records) {
                    let tags: FeatureTagsRecord =
                        decode_opt(key, record.as_ref())?.unwrap_or_default();
                    if tags
                        .tags
                        .iter()
                        .any(|t| t.tag_type == *tag_type && t.value == *value)
                    {
                        selected.push(feature);
                    }
                }
                selected
            }
        })
    }
}

/// A stored feature's metadata as the import and export domain takes it.
pub(super) fn meta_of(record: &FeatureRecord) -> FeatureMeta {
    FeatureMeta {
        feature_type: record.feature_type.clone(),
        description: record.description.clone(),
        stale: record.stale,
        impression_data: record.impression_data,
    }
}

/// A stored feature environment as the import and export domain takes it.
pub(super) fn state_of(record: FeatureEnvironmentRecord) -> FeatureEnvironmentState {
    FeatureEnvironmentState {
        enabled: record.enabled,
        variants: record.variants,
        strategies: record.strategies,
    }
}
