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
    pub project: String,
    pub archived: bool,
    pub meta: FeatureMeta,
    /// `None` when the feature's project does not have the exported environment.
    pub environment: Option<FeatureEnvironmentState>,
    pub tags: Vec<Tag>,
    pub parents: Vec<ParentDependency>,
}

/// Everything an export is built from.
#[derive(Debug, Clone)]
pub(crate) struct ExportSource<'a> {
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
    // The features are owned: their strategies, variants, tags and parents move into the
    // document rather than being copied.
    for feature in features {
        let ExportedFeature {
            name,
            project,
            archived,
            meta,
            environment,
            tags: mut own,
            parents,
        } = feature;
        data.features.push(Feature {
            name: name.clone(),
            feature_type: Some(meta.feature_type),
            description: Some(meta.description),
            project: Some(project),
            stale: Some(meta.stale),
            impression_data: Some(meta.impression_data),
            archived: Some(archived),
            ..Feature::default()
        });
        let in_environment = environment.is_some();
        let environment = environment.unwrap_or_else(|| FeatureEnvironmentState {
            enabled: false,
            variants: Vec::new(),
            strategies: Vec::new(),
        });
        for strategy in environment.strategies {
            collect_strategy_fields(&strategy, &mut used_fields);
            used_segments.extend(strategy.segments.iter().copied());
            let disabled = strategy.is_disabled();
            data.feature_strategies.push(FeatureStrategy {
                name: strategy.name,
                id: strategy.id,
                feature_name: Some(name.clone()),
                title: Some(strategy.title.flatten()),
                parameters: strategy.parameters,
                constraints: strategy.constraints,
                variants: strategy.variants,
                disabled: Some(Some(disabled)),
                segments: strategy.segments,
                ..FeatureStrategy::default()
            });
        }
        for variant in &environment.variants {
            let overrides = variant.overrides.iter().flatten().map(|o| &o.context_name);
            for name in variant.stickiness.iter().chain(overrides) {
                if !used_fields.contains(name) {
                    used_fields.insert(name.clone());
                }
            }
        }
        if in_environment {
            environments.push(FeatureEnvironment {
                name: name.clone(),
                feature_name: Some(name.clone()),
                environment: Some(source.environment.to_owned()),
                enabled: environment.enabled,
                variants: Some(environment.variants),
                ..FeatureEnvironment::default()
            });
        }
        own.sort_by(|a, b| (&a.tag_type, &a.value).cmp(&(&b.tag_type, &b.value)));
        tags.extend(own.into_iter().map(|tag| FeatureTag {
            feature_name: name.clone(),
            tag_type: Some(tag.tag_type),
            tag_value: tag.value,
            ..FeatureTag::default()
        }));
        if !parents.is_empty() {
            dependencies.push(FeatureDependencies {
                feature: name,
                dependencies: parents,
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
    let names = strategy
        .constraints
        .iter()
        .map(|c| &c.context_name)
        .chain(strategy.parameters.get("stickiness"))
        .chain(strategy.variants.iter().map(|v| &v.stickiness));
    for name in names {
        // Thousands of strategies name the same few fields: copy a name only when it is new.
        if !used.contains(name) {
            used.insert(name.clone());
        }
    }
}
