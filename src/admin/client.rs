//! The client API's read side: what a client key (a server-side SDK) sees.
//!
//! [`ToggleAdmin::client_features`] answers Unleash's client features document for a key's
//! projects and environment, read from one consistent view of the store. The document is
//! built once per store revision and scope, then served from a cache with its ETag (a digest
//! of the document itself, so it changes exactly when something the key can see changes).
//! Commits this instance knows no document reads (usage metrics, registrations) keep the
//! cached document; after any other, one request of the scope builds it again while the
//! others wait, and an unchanged document stays the same shared one (so that the frontend
//! API's engine compiled from it is not compiled again).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use unleash_types::client_features::{
    ClientFeature, ClientFeatures, Constraint as WireConstraint, FeatureDependency, Query,
    Segment as WireSegment, Strategy, StrategyVariant as WireStrategyVariant,
    Variant as WireVariant,
};

use super::ToggleAdmin;
use super::client_scope::Scope;
use super::reader::Reader;
use super::records::{
    FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureRecord, FeatureTagsRecord,
    decode_opt, feature_dependencies_key, feature_environment_key, feature_tags_key,
};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{ClientFeaturesDocument, ClientFeaturesQuery};
use crate::model::{Project, Segment};
use crate::store::{Collection, Revision};

/// How many documents the cache keeps; past that it starts afresh.
const CACHE_ENTRIES: usize = 1024;

/// A client document's scope and filters: what a cached document is for.
type DocumentScope = (Scope, ClientFeaturesQuery);

/// The client API's shared state: the document cache.
#[derive(Debug, Default)]
pub(crate) struct ClientState {
    pub(super) metrics: super::client_metrics::MetricsState,
    /// The delta API's histories and the streams (see `delta.rs`, `streaming.rs`).
    pub(super) push: super::delta::PushState,
    cache: Mutex<HashMap<DocumentScope, (Revision, ClientFeaturesDocument)>>,
    /// Taken by the one request building a scope's document: the others wait for it
    /// rather than build the same document beside it.
    building: Mutex<HashMap<DocumentScope, Arc<tokio::sync::Mutex<()>>>>,
    /// The latest commits of this instance that no document reads (see
    /// [`ClientState::unread_commit`]).
    unread: Mutex<BTreeSet<Revision>>,
    /// The frontend API's evaluation engines, built from the documents above.
    #[cfg(feature = "frontend")]
    pub(super) frontend: super::frontend::FrontendEngines,
}

/// How many of the latest unread commits are remembered.
const UNREAD_COMMITS: usize = 256;

impl ClientState {
    /// Remember that the commit of `revision` wrote nothing any client document reads
    /// (only usage metrics and registrations, in the applications collection): a document
    /// read before it is still current after it. SDKs and OFREP report usage all the time;
    /// without this, each write of their metrics would have every scope's document read
    /// and encoded again (and the frontend API's engine waiting for it).
    pub(super) fn unread_commit(&self, revision: Revision) {
        if let Ok(mut unread) = self.unread.lock() {
            unread.insert(revision);
            while unread.len() > UNREAD_COMMITS {
                unread.pop_first();
            }
        }
    }

    /// Whether every commit after `read` up to `latest` is one no document reads (commits
    /// of other instances, which this one does not know, are not).
    fn unread_between(&self, read: Revision, latest: Revision) -> bool {
        let Ok(unread) = self.unread.lock() else {
            return false;
        };
        latest > read
            && latest.0 - read.0 <= UNREAD_COMMITS as u64
            && (read.0 + 1..=latest.0).all(|r| unread.contains(&Revision(r)))
    }
}

impl ToggleAdmin {
    /// The client features document `caller` sees: the features of its projects (a client
    /// key's; every project for other keys), in its environment (a client key's;
    /// [`DEFAULT_CLIENT_ENVIRONMENT`](super::DEFAULT_CLIENT_ENVIRONMENT) for other keys), filtered by `query`. Archived
    /// features are left out, and so are disabled strategies. A revoked or expired key →
    /// [`Error::AuthenticationRequired`].
    ///
    /// The document is read from one consistent view of the store and cached per store
    /// revision and scope: calls between two commits share one document. A frontend key →
    /// [`Error::NoAccess`] (it reads the frontend API only).
    pub async fn client_features(
        &self,
        caller: &Caller,
        query: &ClientFeaturesQuery,
    ) -> Result<ClientFeaturesDocument> {
        if caller.info.access.is_frontend() {
            return Err(super::wrong_key_type());
        }
        self.client_document(caller, query).await
    }

    /// The feature `name` as the client API shows it to `caller` (`GET
    /// /api/client/features/{featureName}`): from the same document as
    /// [`client_features`](Self::client_features), so within the key's projects and
    /// environment; segments inlined into constraints unless `segments`. A feature the key
    /// does not see (another project, archived, unknown) → [`Error::NotFound`]
    /// `Could not find feature flag <name>`, as Unleash says.
    pub async fn client_feature(
        &self,
        caller: &Caller,
        name: &str,
        segments: bool,
    ) -> Result<ClientFeature> {
        let query = ClientFeaturesQuery {
            segments,
            ..ClientFeaturesQuery::default()
        };
        let document = self.client_features(caller, &query).await?;
        document
            .features
            .features
            .iter()
            .find(|f| f.name == name)
            .cloned()
            .ok_or_else(|| Error::not_found(format!("Could not find feature flag {name}")))
    }

    /// [`client_features`](Self::client_features) for any key, a frontend key included (the
    /// frontend API evaluates this document).
    pub(super) async fn client_document(
        &self,
        caller: &Caller,
        query: &ClientFeaturesQuery,
    ) -> Result<ClientFeaturesDocument> {
        let scope = self.client_scope(caller).await?;
        self.client_document_in(scope, query).await
    }

    /// [`client_document`](Self::client_document) for a key's `scope` already decided.
    pub(super) async fn client_document_in(
        &self,
        scope: super::client_scope::Scope,
        query: &ClientFeaturesQuery,
    ) -> Result<ClientFeaturesDocument> {
        let cache_key = (scope, query.clone());
        let latest = self.store.revision().await?;
        if let Some((revision, document)) = self.cached(&cache_key) {
            if revision == latest {
                return Ok(document);
            }
            if self.client.unread_between(revision, latest) {
                self.cache_document(cache_key, latest, &document);
                return Ok(document);
            }
        }
        // After a commit every request of a busy scope misses the cache at once: one builds
        // the document, the others wait for it (a build takes as long as the flags of the
        // scope take to read and encode).
        let gate = self.build_gate(&cache_key);
        let _turn = gate.lock().await;
        let earlier = match self.cached(&cache_key) {
            Some((revision, document)) if revision >= latest => return Ok(document),
            earlier => earlier.map(|(_, document)| document),
        };
        let view = self.store.view().await?;
        let revision = view.revision();
        let features = self
            .read_client_features(Reader::View(view.as_ref()), &cache_key.0, query)
            .await?;
        let json = serde_json::to_string(&features).map_err(|e| {
            Error::internal("could not encode the client features", Some(Box::new(e)))
        })?;
        let digest = Sha256::digest(json.as_bytes());
        let hex: String = digest.iter().take(10).map(|b| format!("{b:02x}")).collect();
        let etag = format!("\"{hex}\"");
        // A commit the scope does not see (a metrics write, another environment's change)
        // leaves the document as it was: the earlier one is kept, so that what is built
        // from it (the frontend API's compiled engine) is not built again.
        let document = match earlier {
            Some(earlier) if *earlier.etag == etag && *earlier.json == json => earlier,
            _ => ClientFeaturesDocument {
                etag: etag.into(),
                json: json.into(),
                features: Arc::new(features),
            },
        };
        self.cache_document(cache_key, revision, &document);
        Ok(document)
    }

    /// Cache `document` as read at `revision`, unless a newer one is cached.
    fn cache_document(
        &self,
        key: (Scope, ClientFeaturesQuery),
        revision: Revision,
        document: &ClientFeaturesDocument,
    ) {
        if let Ok(mut cache) = self.client.cache.lock() {
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            let newer = cache
                .get(&key)
                .is_some_and(|(cached, _)| *cached > revision);
            if !newer {
                cache.insert(key, (revision, document.clone()));
            }
        }
    }

    /// The gate of the builds of `key`'s document.
    fn build_gate(&self, key: &(Scope, ClientFeaturesQuery)) -> Arc<tokio::sync::Mutex<()>> {
        let Ok(mut gates) = self.client.building.lock() else {
            return Arc::default();
        };
        if gates.len() >= CACHE_ENTRIES && !gates.contains_key(key) {
            gates.clear();
        }
        gates.entry(key.clone()).or_default().clone()
    }

    /// The cached document of `key` and the revision it was read at.
    fn cached(
        &self,
        key: &(Scope, ClientFeaturesQuery),
    ) -> Option<(Revision, ClientFeaturesDocument)> {
        let cache = self.client.cache.lock().ok()?;
        cache.get(key).cloned()
    }

    pub(super) async fn read_client_features(
        &self,
        reader: Reader<'_>,
        scope: &Scope,
        query: &ClientFeaturesQuery,
    ) -> Result<ClientFeatures> {
        let environment = scope.environment.as_str();
        let (_, all) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let visible = |project: &str| {
            scope
                .projects
                .as_ref()
                .is_none_or(|ps| ps.iter().any(|p| p == project))
                && (query.projects.is_empty() || query.projects.iter().any(|p| p == project))
        };
        let selected: Vec<&FeatureRecord> = all
            .iter()
            .filter(|f| !f.archived && visible(&f.project))
            .filter(|f| {
                query
                    .name_prefix
                    .as_deref()
                    .is_none_or(|prefix| f.name.starts_with(prefix))
            })
            .collect();
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
        let (_, segments) = reader.segment_list().await?;
        let segments: BTreeMap<i64, &Segment> = segments.iter().map(|s| (s.id, s)).collect();
        let mut used_segments = BTreeSet::new();
        let mut features = Vec::with_capacity(selected.len());
        for (i, f) in selected.iter().enumerate() {
            let tags: FeatureTagsRecord =
                decode_opt(&keys[3 * i + 1], records[3 * i + 1].as_ref())?.unwrap_or_default();
            if !query.tags.is_empty()
                && !tags.tags.iter().any(|t| {
                    query
                        .tags
                        .iter()
                        .any(|(ty, v)| *ty == t.tag_type && *v == t.value)
                })
            {
                continue;
            }
            let fe: FeatureEnvironmentRecord = if with_environment.contains(f.project.as_str()) {
                decode_opt(&keys[3 * i], records[3 * i].as_ref())?.unwrap_or_default()
            } else {
                FeatureEnvironmentRecord::default()
            };
            let deps: FeatureDependenciesRecord =
                decode_opt(&keys[3 * i + 2], records[3 * i + 2].as_ref())?.unwrap_or_default();
            let mut strategies: Vec<&crate::model::FeatureStrategy> =
                fe.strategies.iter().filter(|s| !s.is_disabled()).collect();
            strategies.sort_by_key(|s| s.sort_order.unwrap_or(0));
            let strategies = strategies
                .into_iter()
                .map(|s| {
                    let mut strategy = client_strategy(s)?;
                    if query.segments {
                        used_segments.extend(s.segments.iter().copied());
                    } else {
                        let constraints = strategy.constraints.get_or_insert_with(Vec::new);
                        for id in &s.segments {
                            if let Some(segment) = segments.get(id) {
                                constraints
                                    .extend(wire::<_, Vec<WireConstraint>>(&segment.constraints)?);
                            }
                        }
                        strategy.segments = None;
                    }
                    Ok(strategy)
                })
                .collect::<Result<Vec<_>>>()?;
            features.push(ClientFeature {
                name: f.name.clone(),
                feature_type: Some(f.feature_type.clone()),
                description: f.description.clone(),
                created_at: None,
                last_seen_at: None,
                enabled: fe.enabled,
                stale: Some(f.stale),
                impression_data: Some(f.impression_data),
                project: Some(f.project.clone()),
                strategies: Some(strategies),
                variants: Some(wire::<_, Vec<WireVariant>>(&fe.variants)?),
                dependencies: (!deps.parents.is_empty()).then(|| {
                    deps.parents
                        .iter()
                        .map(|p| FeatureDependency {
                            feature: p.feature.clone(),
                            enabled: Some(p.is_enabled()),
                            variants: Some(p.variant_names().to_vec()),
                        })
                        .collect()
                }),
            });
        }
        features.sort_by(|a, b| a.name.cmp(&b.name));
        let segments = if query.segments {
            Some(
                used_segments
                    .iter()
                    .filter_map(|id| segments.get(id))
                    .map(|s| {
                        Ok(WireSegment {
                            id: s.id as i32,
                            constraints: wire(&s.constraints)?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            )
        } else {
            None
        };
        Ok(ClientFeatures {
            version: 2,
            features,
            segments,
            query: Some(Query {
                tags: (!query.tags.is_empty()).then(|| {
                    query
                        .tags
                        .iter()
                        .map(|(t, v)| vec![t.clone(), v.clone()])
                        .collect()
                }),
                projects: Some(match (&scope.projects, query.projects.is_empty()) {
                    (_, false) => query.projects.clone(),
                    (Some(projects), true) => projects.clone(),
                    (None, true) => vec!["*".to_owned()],
                }),
                name_prefix: query.name_prefix.clone(),
                environment: Some(scope.environment.clone()),
                inline_segment_constraints: Some(!query.segments),
            }),
            meta: None,
        })
    }
}

/// A stored strategy as the client API writes it, its segments by id (the playground
/// evaluates strategies one by one in this form).
pub(super) fn client_strategy(s: &crate::model::FeatureStrategy) -> Result<Strategy> {
    Ok(Strategy {
        name: s.name.clone(),
        // The list is in sort order already; Unleash's client API leaves `sortOrder` (and
        // `createdAt`) out, and so does its schema.
        sort_order: None,
        segments: Some(s.segments.iter().map(|id| *id as i32).collect()),
        constraints: Some(wire(&s.constraints)?),
        parameters: Some(
            s.parameters
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        variants: Some(wire::<_, Vec<WireStrategyVariant>>(&s.variants)?),
    })
}

/// Our model's value as the wire type that has the same JSON shape.
pub(super) fn wire<T: serde::Serialize, W: serde::de::DeserializeOwned>(value: &T) -> Result<W> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            Error::internal(
                "a stored value does not fit Unleash's client wire shape",
                Some(Box::new(e)),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_outlives_only_commits_known_to_be_unread() {
        let state = ClientState::default();
        state.unread_commit(Revision(5));
        state.unread_commit(Revision(6));
        state.unread_commit(Revision(8));
        assert!(state.unread_between(Revision(4), Revision(6)));
        assert!(state.unread_between(Revision(5), Revision(6)));
        // 7 is a commit this instance did not make, or one a document reads.
        assert!(!state.unread_between(Revision(4), Revision(8)));
        assert!(!state.unread_between(Revision(3), Revision(6)));
        assert!(!state.unread_between(Revision(6), Revision(6)));
        for r in 9..(9 + UNREAD_COMMITS as u64) {
            state.unread_commit(Revision(r));
        }
        // Only the latest are remembered.
        assert!(!state.unread_between(Revision(7), Revision(8)));
        assert!(state.unread_between(Revision(8), Revision(8 + UNREAD_COMMITS as u64)));
    }
}
