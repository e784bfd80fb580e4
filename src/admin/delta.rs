//! The client API's delta protocol: what changed in a key's client features document since
//! an event id, as Unleash's `GET /api/client/delta` answers it (`unleash-types`'
//! [`ClientFeaturesDelta`] and [`DeltaEvent`]).
//!
//! # How deltas are derived
//!
//! Deltas are derived by diffing the scope's client features document before and after a
//! change, features by name and segments by id, each compared by a digest of its wire JSON.
//! Every write path (a toggle, a variant patch, a strategy, an import, an archive, a project
//! change, a segment edit) changes the document the same way, so one derivation covers them
//! all, and a change the key cannot see (another project, another environment) changes
//! nothing in its document and so produces no event for it.
//!
//! An event's id (`eventId`) is the store [`Revision`] of the document it leads to: every
//! event of one refresh shares it, and the `ETag` of an answer is `"<eventId>"` of its last
//! event. Revisions are the store's own order of commits, shared by every instance over one
//! store (a PostgresStore), so an SDK that moves from instance A to instance B resumes
//! there. (Unleash's `eventId` is a 32-bit number; a revision past `u32::MAX` is sent as
//! `u32::MAX`, which then always hydrates.)
//!
//! Documents are refreshed when asked for (a delta request, a stream's connection) or when
//! a commit is signalled while the scope has streams open (see `streaming.rs`); a refresh
//! that finds the store at a later revision reads one consistent view and diffs. So two
//! commits between refreshes become one set of events with the later revision's id; what
//! they carry is the state after both (each event holds the whole feature or segment).
//!
//! # Bounded history
//!
//! Each scope (a key's projects and environment, with the request's filters) keeps its
//! current document's digests and the events of its last changes: at most
//! [`PushConfig::history_events`] events, none older than [`PushConfig::history_age`]. A
//! client whose event id is older than the oldest kept change (or unknown, malformed, or
//! ahead of the store) gets a fresh `hydration`. At most [`MAX_SCOPES`] scopes are kept;
//! past that the least recently used one without streams is forgotten. So memory grows with
//! the flags and the scopes in use, never with time.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;
use unleash_types::client_features::{ClientFeatures, ClientFeaturesDelta, DeltaEvent};

use super::ToggleAdmin;
use super::client_scope::Scope;
use super::reader::Reader;
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::ClientFeaturesQuery;
use crate::store::Revision;

/// The default for [`PushConfig::history_events`]: 1,000 events per scope.
pub const DEFAULT_HISTORY_EVENTS: usize = 1000;
/// The default for [`PushConfig::history_age`]: one hour.
pub const DEFAULT_HISTORY_AGE: Duration = Duration::from_secs(3600);
/// How many scopes keep a history at most.
pub const MAX_SCOPES: usize = 1024;

/// How the delta API and the streams behave: history bounds, stream limits, timers.
/// [`ToggleAdmin::set_push_config`] sets it; `PushConfig::default()` is what an admin
/// starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushConfig {
    /// Events kept per scope at most ([`DEFAULT_HISTORY_EVENTS`]).
    pub history_events: usize,
    /// Events older than this are forgotten ([`DEFAULT_HISTORY_AGE`]).
    pub history_age: Duration,
    /// Streams open at once over this admin at most; one more is refused with 429
    /// `TooManyRequests` (default 20,000).
    pub max_streams: usize,
    /// Streams one API key may hold open at once; one more is refused with 429 (default
    /// 1,000).
    pub max_streams_per_key: usize,
    /// How often an idle stream gets a keep-alive comment (default 15 s; the Node SDK
    /// reconnects after 60 s of silence).
    pub keep_alive: Duration,
    /// How often the streams check the store's revision without a commit signalled: the
    /// safety net for a lost notification, and how commits made by other processes reach
    /// stores that signal none (default 5 s).
    pub catch_up: Duration,
}

impl Default for PushConfig {
    fn default() -> Self {
        Self {
            history_events: DEFAULT_HISTORY_EVENTS,
            history_age: DEFAULT_HISTORY_AGE,
            max_streams: 20_000,
            max_streams_per_key: 1000,
            keep_alive: Duration::from_secs(15),
            catch_up: Duration::from_secs(5),
        }
    }
}

/// An answer of the delta API.
#[derive(Debug, Clone)]
pub enum DeltaAnswer {
    /// Nothing changed since the client's event id; the ETag is the client's.
    NotModified {
        /// `"<eventId>"`.
        etag: String,
    },
    /// Events to apply (a `hydration`, or the changes since the client's event id).
    Events {
        /// `"<last eventId>"`.
        etag: String,
        /// The `ClientFeaturesDelta` as JSON.
        json: Bytes,
        /// The revision the events lead to.
        revision: Revision,
    },
}

/// One scope's identity: the key's projects and environment, and the request's filters.
pub(super) type ScopeKey = (Scope, ClientFeaturesQuery);

/// What a stream receives through its scope's channel. Encoded once, shared by every
/// subscriber.
#[derive(Debug, Clone)]
pub(super) enum StreamMessage {
    /// The scope's document moved from revision `from` to `to`; `text` is the encoded
    /// `unleash-updated` server-sent event.
    Update {
        from: Revision,
        to: Revision,
        text: Bytes,
    },
    /// A keep-alive comment.
    KeepAlive,
    /// Streams of these keys (secret hashes) end: revoked or expired.
    Revoked(Arc<HashSet<String>>),
    /// Every stream ends (shutdown).
    Close,
}

/// One scope's history and its stream channel.
#[derive(Debug)]
pub(super) struct ScopeHistory {
    pub(super) key: ScopeKey,
    pub(super) inner: tokio::sync::Mutex<History>,
    pub(super) channel: broadcast::Sender<StreamMessage>,
    last_used: Mutex<Instant>,
}

/// The kept state of one scope.
#[derive(Debug, Default)]
pub(super) struct History {
    /// The revision of the current document; [`Revision::ABSENT`] before the first read.
    pub(super) revision: Revision,
    /// Clients at this revision or later can be answered from `events`.
    base: Revision,
    features: HashMap<String, (String, [u8; 16])>,
    segments: HashMap<i32, [u8; 16]>,
    /// The current document, for hydrations.
    document: Option<Arc<ClientFeatures>>,
    /// The hydration of the current document as `ClientFeaturesDelta` JSON, once encoded.
    hydration: Option<Bytes>,
    events: VecDeque<KeptEvent>,
}

#[derive(Debug)]
struct KeptEvent {
    revision: Revision,
    at: Instant,
    event: DeltaEvent,
}

/// The push state of an admin: scope histories, stream counts and the commit signal.
#[derive(Debug)]
pub(crate) struct PushState {
    pub(super) config: Mutex<PushConfig>,
    scopes: Mutex<HashMap<ScopeKey, Arc<ScopeHistory>>>,
    /// The last revision committed through this admin or learnt from the store.
    pub(super) committed: tokio::sync::watch::Sender<Revision>,
    pub(super) streams: Mutex<StreamCounts>,
}

impl Default for PushState {
    fn default() -> Self {
        Self {
            config: Mutex::new(PushConfig::default()),
            scopes: Mutex::new(HashMap::new()),
            committed: tokio::sync::watch::Sender::new(Revision::ABSENT),
            streams: Mutex::new(StreamCounts::default()),
        }
    }
}

impl PushState {
    pub(super) fn config(&self) -> PushConfig {
        self.config.lock().map(|c| *c).unwrap_or_default()
    }

    /// Signal that `revision` was committed.
    pub(super) fn signal(&self, revision: Revision) {
        self.committed.send_if_modified(|last| {
            if revision > *last {
                *last = revision;
                true
            } else {
                false
            }
        });
    }

    /// The history of `key`, created if need be.
    pub(super) fn scope(&self, key: &ScopeKey) -> Arc<ScopeHistory> {
        let Ok(mut scopes) = self.scopes.lock() else {
            return Arc::new(ScopeHistory::new(key.clone()));
        };
        if let Some(found) = scopes.get(key) {
            if let Ok(mut used) = found.last_used.lock() {
                *used = Instant::now();
            }
            return Arc::clone(found);
        }
        if scopes.len() >= MAX_SCOPES {
            let idle = scopes
                .iter()
                .filter(|(_, s)| s.channel.receiver_count() == 0)
                .min_by_key(|(_, s)| s.last_used.lock().map(|t| *t).ok())
                .map(|(k, _)| k.clone());
            if let Some(idle) = idle {
                scopes.remove(&idle);
            }
        }
        let created = Arc::new(ScopeHistory::new(key.clone()));
        scopes.insert(key.clone(), Arc::clone(&created));
        created
    }

    /// The scopes that have streams open.
    pub(super) fn streamed_scopes(&self) -> Vec<Arc<ScopeHistory>> {
        self.scopes
            .lock()
            .map(|s| {
                s.values()
                    .filter(|h| h.channel.receiver_count() > 0)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Send `message` to every stream.
    pub(super) fn broadcast(&self, message: &StreamMessage) {
        for scope in self.streamed_scopes() {
            let _ = scope.channel.send(message.clone());
        }
    }
}

impl ScopeHistory {
    fn new(key: ScopeKey) -> Self {
        Self {
            key,
            inner: tokio::sync::Mutex::new(History::default()),
            // Lagging subscribers resynchronise from the history (see `streaming.rs`).
            channel: broadcast::Sender::new(64),
            last_used: Mutex::new(Instant::now()),
        }
    }
}

/// The event id of `revision` on the wire.
pub(super) fn event_id(revision: Revision) -> u32 {
    u32::try_from(revision.0).unwrap_or(u32::MAX)
}

fn digest<T: serde::Serialize>(value: &T) -> Result<[u8; 16]> {
    let json = serde_json::to_vec(value)
        .map_err(|e| Error::internal("could not encode a delta event", Some(Box::new(e))))?;
    let mut out = [0u8; 16];
    out.copy_from_slice(&Sha256::digest(&json)[..16]);
    Ok(out)
}

pub(super) fn encode_delta(events: Vec<DeltaEvent>) -> Result<Bytes> {
    serde_json::to_vec(&ClientFeaturesDelta { events })
        .map(Bytes::from)
        .map_err(|e| Error::internal("could not encode a delta", Some(Box::new(e))))
}

impl History {
    /// The hydration of the current document, encoded once per revision.
    pub(super) fn hydration(&mut self) -> Result<Bytes> {
        if let Some(json) = &self.hydration {
            return Ok(json.clone());
        }
        let document = self.document.clone().unwrap_or_default();
        let json = encode_delta(vec![DeltaEvent::Hydration {
            event_id: event_id(self.revision),
            features: document.features.clone(),
            segments: document.segments.clone().unwrap_or_default(),
        }])?;
        self.hydration = Some(json.clone());
        Ok(json)
    }

    /// The events after `since`, if the history still holds them all (`None`: hydrate).
    pub(super) fn since(&self, since: u64) -> Option<Vec<DeltaEvent>> {
        if since < self.base.0 || since > self.revision.0 || self.revision.0 > u64::from(u32::MAX) {
            return None;
        }
        Some(
            self.events
                .iter()
                .filter(|e| e.revision.0 > since)
                .map(|e| e.event.clone())
                .collect(),
        )
    }

    /// Take `document`, read at `revision`, as the current one: the events of the
    /// differences, appended to the history (which is then trimmed), are returned.
    fn advance(
        &mut self,
        revision: Revision,
        document: ClientFeatures,
        config: &PushConfig,
    ) -> Result<Vec<DeltaEvent>> {
        let id = event_id(revision);
        let first = self.document.is_none();
        let mut changed = Vec::new();
        let mut features = HashMap::with_capacity(document.features.len());
        for feature in &document.features {
            let d = digest(feature)?;
            let project = feature.project.clone().unwrap_or_default();
            if self
                .features
                .get(&feature.name)
                .is_none_or(|(_, old)| *old != d)
            {
                changed.push(DeltaEvent::FeatureUpdated {
                    event_id: id,
                    feature: feature.clone(),
                });
            }
            features.insert(feature.name.clone(), (project, d));
        }
        let mut removed: Vec<(&String, &String)> = self
            .features
            .iter()
            .filter(|(name, _)| !features.contains_key(*name))
            .map(|(name, (project, _))| (name, project))
            .collect();
        removed.sort();
        for (name, project) in removed {
            changed.push(DeltaEvent::FeatureRemoved {
                event_id: id,
                feature_name: name.clone(),
                project: project.clone(),
            });
        }
        let mut segments = HashMap::new();
        let mut segment_events = Vec::new();
        for segment in document.segments.iter().flatten() {
            let d = digest(segment)?;
            if self.segments.get(&segment.id) != Some(&d) {
                segment_events.push(DeltaEvent::SegmentUpdated {
                    event_id: id,
                    segment: segment.clone(),
                });
            }
            segments.insert(segment.id, d);
        }
        let mut gone: Vec<i32> = self
            .segments
            .keys()
            .filter(|id| !segments.contains_key(*id))
            .copied()
            .collect();
        gone.sort_unstable();
        for segment_id in gone {
            segment_events.push(DeltaEvent::SegmentRemoved {
                event_id: id,
                segment_id,
            });
        }
        // Segments first: a feature that refers to a new segment finds it.
        segment_events.append(&mut changed);
        let changed = segment_events;
        self.features = features;
        self.segments = segments;
        self.document = Some(Arc::new(document));
        self.hydration = None;
        self.revision = revision;
        if first {
            self.base = revision;
            return Ok(Vec::new());
        }
        let now = Instant::now();
        for event in &changed {
            self.events.push_back(KeptEvent {
                revision,
                at: now,
                event: event.clone(),
            });
        }
        while self.events.len() > config.history_events
            || self
                .events
                .front()
                .is_some_and(|e| now.duration_since(e.at) > config.history_age)
        {
            if let Some(dropped) = self.events.pop_front() {
                self.base = self.base.max(dropped.revision);
            }
        }
        Ok(changed)
    }
}

impl ToggleAdmin {
    /// Set how the delta API and the streams behave (history bounds, stream limits, timers).
    pub fn set_push_config(&self, config: PushConfig) {
        if let Ok(mut current) = self.client.push.config.lock() {
            *current = config;
        }
    }

    /// The delta API (`GET /api/client/delta`) for `caller`: with `since` (the event id of
    /// the client's `If-None-Match`) the events after it, or
    /// [`NotModified`](DeltaAnswer::NotModified) when there are none; without it, or when
    /// the history no longer reaches back to it, one `hydration` event. Scoped like
    /// [`client_features`](Self::client_features) (segments always by reference, as
    /// Unleash's delta API sends them). A revoked or expired key →
    /// [`Error::AuthenticationRequired`].
    pub async fn client_delta(
        &self,
        caller: &Caller,
        query: &ClientFeaturesQuery,
        since: Option<u64>,
    ) -> Result<DeltaAnswer> {
        let scope = self.client_scope_for_push(caller).await?;
        let history = self.client.push.scope(&(scope, delta_query(query)));
        let latest = self.store.revision().await?;
        let mut inner = history.inner.lock().await;
        self.refresh(&history, &mut inner, latest).await?;
        if let Some(since) = since
            && let Some(events) = inner.since(since)
        {
            if events.is_empty() {
                return Ok(DeltaAnswer::NotModified {
                    etag: format!("\"{since}\""),
                });
            }
            return Ok(DeltaAnswer::Events {
                etag: format!("\"{}\"", event_id(inner.revision)),
                json: encode_delta(events)?,
                revision: inner.revision,
            });
        }
        Ok(DeltaAnswer::Events {
            etag: format!("\"{}\"", event_id(inner.revision)),
            json: inner.hydration()?,
            revision: inner.revision,
        })
    }

    /// Bring `history` (locked as `inner`) to `latest` or later: read the document from one
    /// view, diff, keep the events and, if the scope has streams, send them the encoded
    /// update.
    pub(super) async fn refresh(
        &self,
        history: &ScopeHistory,
        inner: &mut History,
        latest: Revision,
    ) -> Result<()> {
        if inner.document.is_some() && inner.revision >= latest {
            return Ok(());
        }
        let view = self.store.view().await?;
        let revision = view.revision();
        if inner.document.is_some() && revision <= inner.revision {
            return Ok(());
        }
        let (scope, query) = &history.key;
        let document = self
            .read_client_features(Reader::View(view.as_ref()), scope, query)
            .await?;
        let from = inner.revision;
        let config = self.client.push.config();
        let events = inner.advance(revision, document, &config)?;
        if !events.is_empty() && history.channel.receiver_count() > 0 {
            let json = encode_delta(events)?;
            let text = sse_event("unleash-updated", revision, &json);
            let _ = history.channel.send(StreamMessage::Update {
                from,
                to: revision,
                text,
            });
        } else if history.channel.receiver_count() > 0 {
            // Nothing this scope sees changed: streams move on to the new revision silently.
            let _ = history.channel.send(StreamMessage::Update {
                from,
                to: revision,
                text: Bytes::new(),
            });
        }
        Ok(())
    }

    /// The scope of `caller`, its key read afresh (revoked or expired → 401).
    pub(super) async fn client_scope_for_push(&self, caller: &Caller) -> Result<Scope> {
        self.client_scope(caller).await
    }
}

/// The filters a delta scope keeps: the request's, with segments by reference.
pub(super) fn delta_query(query: &ClientFeaturesQuery) -> ClientFeaturesQuery {
    ClientFeaturesQuery {
        segments: true,
        ..query.clone()
    }
}

/// The streams open over one admin.
#[derive(Debug, Default)]
pub(crate) struct StreamCounts {
    pub(super) total: usize,
    pub(super) per_key: std::collections::HashMap<String, usize>,
    /// [`ToggleAdmin::end_streams`] was called: no stream opens any more.
    pub(super) closing: bool,
    /// The pump task runs.
    pub(super) pump: bool,
}

/// One server-sent event: `event:`, `id:` (the event id of `revision`), `data:`.
pub(super) fn sse_event(name: &str, revision: Revision, data: &[u8]) -> bytes::Bytes {
    let id = event_id(revision).to_string();
    let mut text = Vec::with_capacity(name.len() + id.len() + data.len() + 24);
    text.extend_from_slice(b"event: ");
    text.extend_from_slice(name.as_bytes());
    text.extend_from_slice(b"\nid: ");
    text.extend_from_slice(id.as_bytes());
    text.extend_from_slice(b"\ndata: ");
    text.extend_from_slice(data);
    text.extend_from_slice(b"\n\n");
    bytes::Bytes::from(text)
}
