//! Building an export document (the `data` of an import body) from stored data, in a
//! deterministic order, with only the tag types, context fields and segments the exported
//! features use.

use std::collections::{BTreeMap, BTreeSet};

use super::{FeatureEnvironmentState, FeatureMeta};
use crate::model::{
    ContextField, ExportData, Feature, FeatureDependencies, FeatureEnvironment, FeatureStrategy,
    FeatureTag, ParentDependency, Segment, SegmentRef, Tag, TagType,
};

/// One feature to export, as stored.
#[derive(Debug, Clone)]
pub(crate) struct ExportedFeature {
    pub name: String,
    pub meta: FeatureMeta,
    pub environment: FeatureEnvironmentState,
    pub tags: Vec<Tag>,
    pub parents: Vec<ParentDependency>,
}

/// Everything an export is built from.
#[derive(Debug, Clone)]
pub(crate) struct ExportSource<'a> {
    pub project: &'a str,
    pub environment: &'a str,
    pub features: Vec<ExportedFeature>,
    pub segments: &'a [Segment],
    /// Every context field, built-ins included.
    pub context_fields: &'a BTreeMap<String, ContextField>,
    /// Every tag type, built-ins included.
    pub tag_types: &'a BTreeMap<String, TagType>,
}

/// The export document: features by name; each feature's strategies in their order; tags by
/// feature, type and value; segments by id; context fields and tag types by name.
pub(crate) fn build_export(source: ExportSource<'_>) -> ExportData {
    let mut features = source.features;
    features.sort_by(|a, b| a.name.cmp(&b.name));
    let mut data = ExportData::default();
    let mut used_fields = BTreeSet::new();
    let mut used_segments = BTreeSet::new();
    let (mut environments, mut tags, mut dependencies) = (Vec::new(), Vec::new(), Vec::new());
    for feature in &features {
        data.features.push(Feature {
            name: feature.name.clone(),
            feature_type: Some(feature.meta.feature_type.clone()),
            description: Some(feature.meta.description.clone()),
            project: Some(source.project.to_owned()),
            stale: Some(feature.meta.stale),
            impression_data: Some(feature.meta.impression_data),
            archived: Some(false),
            ..Feature::default()
        });
        for strategy in &feature.environment.strategies {
            collect_strategy_fields(strategy, &mut used_fields);
            used_segments.extend(strategy.segments.iter().copied());
            data.feature_strategies.push(FeatureStrategy {
                name: strategy.name.clone(),
                id: strategy.id.clone(),
                feature_name: Some(feature.name.clone()),
                title: Some(strategy.title.clone().flatten()),
                parameters: strategy.parameters.clone(),
                constraints: strategy.constraints.clone(),
                variants: strategy.variants.clone(),
                disabled: Some(Some(strategy.is_disabled())),
                segments: strategy.segments.clone(),
                ..FeatureStrategy::default()
            });
        }
        for variant in &feature.environment.variants {
            used_fields.extend(variant.stickiness.clone());
            for o in variant.overrides.iter().flatten() {
                used_fields.insert(o.context_name.clone());
            }
        }
        environments.push(FeatureEnvironment {
            name: feature.name.clone(),
            feature_name: Some(feature.name.clone()),
            environment: Some(source.environment.to_owned()),
            enabled: feature.environment.enabled,
            variants: Some(feature.environment.variants.clone()),
            ..FeatureEnvironment::default()
        });
        let mut own: Vec<&Tag> = feature.tags.iter().collect();
        own.sort_by(|a, b| (&a.tag_type, &a.value).cmp(&(&b.tag_type, &b.value)));
        tags.extend(own.into_iter().map(|tag| FeatureTag {
            feature_name: feature.name.clone(),
            tag_type: Some(tag.tag_type.clone()),
            tag_value: tag.value.clone(),
            ..FeatureTag::default()
        }));
        if !feature.parents.is_empty() {
            dependencies.push(FeatureDependencies {
                feature: feature.name.clone(),
                dependencies: feature.parents.clone(),
            });
        }
    }
    let used_tag_types: BTreeSet<&str> = tags
        .iter()
        .filter_map(|t: &FeatureTag| t.tag_type.as_deref())
        .collect();
    data.tag_types = used_tag_types
        .into_iter()
        .filter_map(|name| source.tag_types.get(name))
        .map(|t| TagType {
            icon: Some(t.icon.clone().flatten()),
            color: Some(t.color.clone().flatten()),
            ..t.clone()
        })
        .collect();
    data.context_fields = Some(
        used_fields
            .iter()
            .filter_map(|name| source.context_fields.get(name))
            .map(|f| ContextField {
                name: f.name.clone(),
                description: Some(f.description.clone().flatten()),
                stickiness: Some(f.stickiness.unwrap_or(false)),
                sort_order: Some(f.sort_order.unwrap_or(0)),
                legal_values: Some(f.legal_values.clone().unwrap_or_default()),
                ..ContextField::default()
            })
            .collect(),
    );
    let mut segments: Vec<SegmentRef> = source
        .segments
        .iter()
        .filter(|s| used_segments.contains(&s.id))
        .map(|s| SegmentRef {
            id: s.id,
            name: s.name.clone(),
        })
        .collect();
    segments.sort_by_key(|s| s.id);
    data.segments = Some(segments);
    data.feature_environments = Some(environments);
    data.feature_tags = Some(tags);
    data.dependencies = Some(dependencies);
    data
}

/// The context fields a strategy refers to: constraints, stickiness, variant stickiness.
fn collect_strategy_fields(strategy: &FeatureStrategy, used: &mut BTreeSet<String>) {
    used.extend(strategy.constraints.iter().map(|c| c.context_name.clone()));
    used.extend(strategy.parameters.get("stickiness").cloned());
    used.extend(strategy.variants.iter().map(|v| v.stickiness.clone()));
}
