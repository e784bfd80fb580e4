//! The import body and the export document it carries, with the members
//! that appear only there: feature tags, segment references and feature dependencies.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{
    ContextField, Feature, FeatureEnvironment, FeatureStrategy, ParentDependency, TagType,
};

/// The body of the toggle import (`importTogglesSchema`): all three fields are
/// required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ImportBody {
    /// The target project.
    pub project: String,
    /// The target environment.
    pub environment: String,
    /// The result of an export operation.
    pub data: ExportData,
}

/// The result of an export operation (`exportResultSchema`): `features`,
/// `featureStrategies` and `tagTypes` are required, the other members optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportData {
    /// All exported features.
    pub features: Vec<Feature>,
    /// All strategy instances used by the exported features.
    pub feature_strategies: Vec<FeatureStrategy>,
    /// Environment-specific configuration of the exported features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_environments: Option<Vec<FeatureEnvironment>>,
    /// Context fields used by the strategies in `featureStrategies`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_fields: Option<Vec<ContextField>>,
    /// Tags applied to the exported features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_tags: Option<Vec<FeatureTag>>,
    /// Segments used by the strategies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<Vec<SegmentRef>>,
    /// Tag types used in `featureTags`.
    pub tag_types: Vec<TagType>,
    /// Dependencies of exported features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Vec<FeatureDependencies>>,
}

/// A tag applied to a feature: `featureName` and `tagValue` are required.
///
/// The deprecated `type` and `value` (replaced by `tagType` and `tagValue`) are accepted and
/// returned; on import Unleash skips entries without `tagType`. Server rules: value
/// 2–50 characters, type URL-friendly 2–50.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FeatureTag {
    /// The feature the tag is applied to.
    pub feature_name: String,
    /// The type of the tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_type: Option<String>,
    /// The value of the tag.
    pub tag_value: String,
    /// Deprecated; replaced by `tagType`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub deprecated_type: Option<String>,
    /// Deprecated; replaced by `tagValue`.
    #[serde(rename = "value", default, skip_serializing_if = "Option::is_none")]
    pub deprecated_value: Option<String>,
    /// The id of the user who created the tag; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub created_by_user_id: Option<Option<i64>>,
    /// Keys this version does not know, kept so that round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// A segment used by the exported strategies: both fields required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct SegmentRef {
    /// The segment's id.
    pub id: i64,
    /// The segment's name.
    pub name: String,
}

/// The parents of one exported feature (element of `data.dependencies`): both
/// fields required.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct FeatureDependencies {
    /// The name of the child feature.
    pub feature: String,
    /// The parent features.
    pub dependencies: Vec<ParentDependency>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_members() {
        let err = serde_json::from_str::<ExportData>(r#"{"features":[],"featureStrategies":[]}"#)
            .unwrap_err();
        assert!(err.to_string().contains("tagTypes"), "{err}");
        let data: ExportData =
            serde_json::from_str(r#"{"features":[],"featureStrategies":[],"tagTypes":[]}"#)
                .unwrap();
        assert_eq!(data, ExportData::default());
    }
}

/// What to export (Unleash's `exportQuerySchema`, the body of
/// `POST /api/admin/features-batch/export`): the features to export, in `environment`.
///
/// The features are chosen as Unleash chooses them, the first that applies:
/// `tag` (`"type:value"`: every feature carrying that tag, archived or not), a non-empty
/// `features` list (those named, archived or not; names that do not exist are left out),
/// `project` (its features that are not archived), or else every feature that is not
/// archived. An empty `features` list therefore means all features.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportQuery {
    /// The environment whose strategies, variants and enabled state are exported.
    pub environment: String,
    /// Export these features (empty: see `project`, then all features).
    #[serde(default)]
    pub features: Vec<String>,
    /// Export the features carrying this tag, written `type:value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Export the features of this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Over HTTP, answer with `Content-Disposition: attachment` (the document is the body
    /// either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download_file: Option<bool>,
}

/// Which features an [`ExportQuery`] selects, after Unleash's precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportSelection {
    /// The features carrying the tag of this type and value.
    Tag {
        /// The tag type.
        tag_type: String,
        /// The tag value.
        value: String,
    },
    /// The features of these names that exist.
    Features(Vec<String>),
    /// The features of this project that are not archived.
    Project(String),
    /// Every feature that is not archived.
    All,
}

impl ExportQuery {
    /// The selection this query makes; a `tag` that is not `type:value` is a
    /// [`Error::Validation`](crate::Error::Validation) naming `/tag`.
    pub fn selection(&self) -> crate::error::Result<ExportSelection> {
        if let Some(tag) = &self.tag {
            return match tag.split_once(':') {
                Some((tag_type, value)) if !tag_type.is_empty() && !value.is_empty() => {
                    Ok(ExportSelection::Tag {
                        tag_type: tag_type.to_owned(),
                        value: value.to_owned(),
                    })
                }
                _ => Err(crate::error::Error::invalid_at(
                    "/tag",
                    format!("the tag \"{tag}\" is not written type:value"),
                )),
            };
        }
        if !self.features.is_empty() {
            return Ok(ExportSelection::Features(self.features.clone()));
        }
        Ok(match &self.project {
            Some(project) => ExportSelection::Project(project.clone()),
            None => ExportSelection::All,
        })
    }
}
