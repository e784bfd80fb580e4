//! The client API's features document: the filters it is read with, and the document as
//! served (with its ETag and JSON text).

use std::sync::Arc;

use unleash_types::client_features::ClientFeatures;

/// The filters of `GET /api/client/features`, as Unleash takes them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ClientFeaturesQuery {
    /// Only features of these projects (within the key's); empty for all the key sees.
    pub projects: Vec<String>,
    /// Only features whose name starts with this.
    pub name_prefix: Option<String>,
    /// Only features carrying one of these tags, each `(type, value)`.
    pub tags: Vec<(String, String)>,
    /// Whether the SDK handles segments (it sent `Unleash-Client-Spec` ≥ 4.2.0): then the
    /// document lists the segments and strategies refer to them by id; otherwise each
    /// strategy carries its segments' constraints inline.
    pub segments: bool,
}

/// A client features document with its ETag and its JSON text, shared with the cache.
#[derive(Debug, Clone)]
pub struct ClientFeaturesDocument {
    /// The ETag, quoted (`"…"`): a digest of the document.
    pub etag: Arc<str>,
    /// The document as JSON.
    pub json: Arc<str>,
    /// The document.
    pub features: Arc<ClientFeatures>,
}

/// One feature as `GET /api/client/features/{featureName}` shows it (Unleash's
/// `clientFeatureSchema`): the feature of the client document, with `description` always
/// present (`null` when it has none), as Unleash answers this route.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OneClientFeature {
    /// The feature, without its description.
    #[serde(flatten)]
    pub feature: unleash_types::client_features::ClientFeature,
    /// Its description, `null` when it has none.
    pub description: Option<String>,
}

impl From<unleash_types::client_features::ClientFeature> for OneClientFeature {
    fn from(mut feature: unleash_types::client_features::ClientFeature) -> Self {
        let description = feature.description.take();
        Self {
            feature,
            description,
        }
    }
}
