//! Tags: the tags on a feature and the tag types they belong to.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tag on a feature, as listed in the feature's `tags`: `{value, type}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Tag {
    /// The tag's value. Required.
    pub value: String,
    /// The tag type's name. Required; `simple` when absent.
    #[serde(rename = "type", default = "Tag::default_type")]
    pub tag_type: String,
}

impl Tag {
    /// The tag type used when none is given: `simple`.
    pub const DEFAULT_TYPE: &'static str = "simple";

    fn default_type() -> String {
        Self::DEFAULT_TYPE.to_owned()
    }
}

/// A tag type: only `name` is required.
///
/// Server rules: name URL-friendly, 2–50 characters; `color` matches `^#[0-9A-Fa-f]{6}$`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct TagType {
    /// The name of the tag type.
    pub name: String,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icon; nullable.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub icon: Option<Option<String>>,
    /// Colour, `#RRGGBB`; nullable. Unleash's schema has it.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub color: Option<Option<String>>,
    /// Keys this version does not know, kept so that round trips are exact.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

/// A tag type's new description, icon and colour: the body of
/// `PUT /api/admin/tag-types/{name}`. The path names the type; a `name` in the body is
/// accepted and ignored, as in Unleash. A member left out keeps its value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct TagTypeUpdate {
    /// Ignored: the path names the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icon; `null` removes it.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub icon: Option<Option<String>>,
    /// Colour, `#RRGGBB`; `null` removes it.
    #[serde(
        default,
        deserialize_with = "super::double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub color: Option<Option<String>>,
}

/// A feature's tag as Unleash lists it: with its tag type's colour (`null` when the type
/// has none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ColoredTag {
    /// The tag's value.
    pub value: String,
    /// The tag type's name.
    #[serde(rename = "type")]
    pub tag_type: String,
    /// The tag type's colour, `#RRGGBB`.
    pub color: Option<String>,
}
