//! The client API's streams (`GET /api/client/streaming`): server-sent events carrying the
//! delta protocol of `delta.rs`, as Unleash's streaming SDKs consume them.
//!
//! A stream starts with `unleash-connected` (a `hydration`, or the events since the
//! client's `Last-Event-ID` when the history still holds them), then gets `unleash-updated`
//! with each change its key can see; every event carries `id: <eventId>`.
//!
//! # One encoding per change, fanned out
//!
//! A stream holds no task, no lock and no copy of the document: only a receiver of its
//! scope's [`broadcast`](tokio::sync::broadcast) channel and its last event id. One task per
//! admin (the *pump*, running while any stream is open) wakes on a commit signal, refreshes
//! every scope that has streams (one read and one diff per scope), encodes the
//! `unleash-updated` event once, and sends it to the channel, whose subscribers share the
//! encoded bytes. The pump wakes on:
//!
//! * a commit made through this admin;
//! * the store's change notifications ([`Store::changes`](crate::Store::changes): a
//!   PostgresStore's `LISTEN`, for commits made by other instances);
//! * the catch-up timer ([`PushConfig::catch_up`]): the safety net for a lost
//!   notification;
//! * the keep-alive timer ([`PushConfig::keep_alive`]): a comment to every stream, and
//!   nothing else (no read of the store).
//!
//! After each other wake it reads the store's revision and, when the store moved on (or
//! once a minute), the records of the keys that hold streams: a revoked or expired key's
//! streams end. So idle streams cost the store one small read per catch-up period and
//! instance (two idle instances over PostgreSQL: about 0.4 transactions a second). A stream that falls behind its channel (64 messages) catches up from
//! the history (or is sent a new hydration) rather than being dropped.
//!
//! [`ToggleAdmin::end_streams`] ends every stream (graceful shutdown).

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::ToggleAdmin;
use super::delta::{ScopeHistory, StreamMessage, delta_query, encode_delta, sse_event};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::ApiKeyInfo;
use crate::model::ClientFeaturesQuery;
use crate::store::{Collection, Key, Revision};

/// The keep-alive comment.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// How often the streams' task reads the keys of open streams while the store does not move
/// (to end the streams of keys that expired; a revocation moves the store).
const REVOCATION_CHECK: std::time::Duration = std::time::Duration::from_secs(60);

/// Counts a stream while it lives.
#[derive(Debug)]
struct StreamGuard {
    admin: ToggleAdmin,
    secret_hash: String,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.admin.client.push.streams.lock() {
            counts.total = counts.total.saturating_sub(1);
            if let Some(n) = counts.per_key.get_mut(&self.secret_hash) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    counts.per_key.remove(&self.secret_hash);
                }
            }
        }
    }
}

/// One client's stream: the server-sent events to write, from [`next`](Self::next).
#[derive(Debug)]
pub struct ClientStream {
    guard: Option<StreamGuard>,
    history: Arc<ScopeHistory>,
    receiver: broadcast::Receiver<StreamMessage>,
    last: Revision,
    first: Option<Bytes>,
    /// What the stream's events say.
    format: StreamFormat,
}

/// What a stream's events say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StreamFormat {
    /// Unleash's streaming protocol: `unleash-connected`, `unleash-updated` with the deltas.
    Unleash,
    /// OFREP's: an unnamed event `{"type":"refetchEvaluation"}` at the connection and at each
    /// change the key can see (see `ofrep.rs`).
    Refetch,
}

impl ClientStream {
    /// The next piece of the stream to write (an event or a keep-alive comment); `None`
    /// when the stream ends (its key revoked or expired, shutdown, the store failing).
    pub async fn next(&mut self) -> Option<Bytes> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        self.guard.as_ref()?;
        loop {
            match self.receiver.recv().await {
                Ok(StreamMessage::Update { from, to, text }) => {
                    if to <= self.last {
                        continue;
                    }
                    if from != self.last {
                        match self.resync().await {
                            Some(Some(text)) => return Some(text),
                            Some(None) => continue,
                            None => return self.end(),
                        }
                    }
                    self.last = to;
                    if !text.is_empty() {
                        return Some(self.render(text, to));
                    }
                }
                Ok(StreamMessage::KeepAlive) => return Some(Bytes::from_static(KEEP_ALIVE)),
                Ok(StreamMessage::Revoked(keys)) => {
                    let mine = self
                        .guard
                        .as_ref()
                        .is_some_and(|g| keys.contains(&g.secret_hash));
                    if mine {
                        return self.end();
                    }
                }
                Ok(StreamMessage::Close) | Err(RecvError::Closed) => return self.end(),
                Err(RecvError::Lagged(_)) => match self.resync().await {
                    Some(Some(text)) => return Some(text),
                    Some(None) => {}
                    None => return self.end(),
                },
            }
        }
    }

    fn end(&mut self) -> Option<Bytes> {
        self.guard = None;
        None
    }

    /// Catch up from the history after a gap: the events since the last one sent, or a new
    /// hydration; `Some(None)` when there is nothing to send, `None` when the stream must end.
    async fn resync(&mut self) -> Option<Option<Bytes>> {
        let admin = self.guard.as_ref()?.admin.clone();
        let latest = admin.store.revision().await.ok()?;
        let mut inner = self.history.inner.lock().await;
        admin
            .refresh(&self.history, &mut inner, latest)
            .await
            .ok()?;
        self.receiver = self.history.channel.subscribe();
        let json = match inner.since(self.last.0) {
            Some(events) if events.is_empty() => {
                self.last = inner.revision;
                return Some(None);
            }
            Some(_) if self.format == StreamFormat::Refetch => Bytes::new(),
            Some(events) => encode_delta(events).ok()?,
            None if self.format == StreamFormat::Refetch => Bytes::new(),
            None => inner.hydration().ok()?,
        };
        self.last = inner.revision;
        let text = sse_event("unleash-updated", inner.revision, &json);
        Some(Some(self.render(text, inner.revision)))
    }

    /// `text`, an encoded `unleash-updated` event leading to `revision`, as this stream's
    /// format says it.
    fn render(&self, text: Bytes, revision: Revision) -> Bytes {
        match self.format {
            StreamFormat::Unleash => text,
            StreamFormat::Refetch => refetch_event(revision),
        }
    }
}

impl ToggleAdmin {
    /// Open a stream of `caller`'s client features (`GET /api/client/streaming`), scoped
    /// like [`client_delta`](Self::client_delta). With `last_event_id` (the client's
    /// `Last-Event-ID`) still in the history, the stream resumes with the events since;
    /// otherwise it starts with a hydration.
    ///
    /// A revoked or expired key → [`Error::AuthenticationRequired`]; over
    /// [`PushConfig::max_streams`](super::delta::PushConfig::max_streams) or
    /// [`max_streams_per_key`](super::delta::PushConfig::max_streams_per_key) →
    /// [`Error::TooManyRequests`]. After [`end_streams`](Self::end_streams) the stream
    /// ends at once.
    pub async fn client_stream(
        &self,
        caller: &Caller,
        query: &ClientFeaturesQuery,
        last_event_id: Option<u64>,
    ) -> Result<ClientStream> {
        self.open_stream(caller, query, last_event_id, StreamFormat::Unleash)
            .await
    }

    /// [`client_stream`](Self::client_stream) in `format`.
    pub(super) async fn open_stream(
        &self,
        caller: &Caller,
        query: &ClientFeaturesQuery,
        last_event_id: Option<u64>,
        format: StreamFormat,
    ) -> Result<ClientStream> {
        let scope = self.client_scope_for_push(caller).await?;
        let guard = self.register_stream(&caller.secret_hash)?;
        let history = self.client.push.scope(&(scope, delta_query(query)));
        let latest = self.store.revision().await?;
        let mut inner = history.inner.lock().await;
        self.refresh(&history, &mut inner, latest).await?;
        let first = match format {
            // Whatever changed between the evaluation and the connection: the client
            // refetches (with its ETag, so an answer that did not change costs a 304).
            StreamFormat::Refetch => refetch_event(inner.revision),
            StreamFormat::Unleash => {
                let json = match last_event_id.and_then(|id| inner.since(id)) {
                    Some(events) => encode_delta(events)?,
                    None => inner.hydration()?,
                };
                sse_event("unleash-connected", inner.revision, &json)
            }
        };
        let receiver = history.channel.subscribe();
        let last = inner.revision;
        drop(inner);
        let guard = match guard {
            Some(guard) => {
                self.ensure_pump();
                Some(guard)
            }
            None => None,
        };
        Ok(ClientStream {
            guard,
            history,
            receiver,
            last,
            first: Some(first),
            format,
        })
    }

    /// End every stream open over this admin, and every stream opened later (at once, after
    /// its first event): for a graceful shutdown, so that open streams do not hold it up.
    /// [`RouterConfig::serve`](crate::http::RouterConfig::serve) calls it when its shutdown
    /// signal completes.
    pub fn end_streams(&self) {
        if let Ok(mut counts) = self.client.push.streams.lock() {
            counts.closing = true;
        }
        self.client.push.broadcast(&StreamMessage::Close);
    }

    /// How many streams are open over this admin.
    pub fn open_streams(&self) -> usize {
        self.client
            .push
            .streams
            .lock()
            .map(|c| c.total)
            .unwrap_or(0)
    }

    /// Count a new stream of the key `secret_hash` (`None` when shutting down).
    fn register_stream(&self, secret_hash: &str) -> Result<Option<StreamGuard>> {
        let config = self.client.push.config();
        let mut counts = self
            .client
            .push
            .streams
            .lock()
            .map_err(|_| Error::internal("the stream counts' lock is poisoned", None))?;
        if counts.closing {
            return Ok(None);
        }
        if counts.total >= config.max_streams {
            return Err(Error::TooManyRequests {
                message: format!(
                    "This server holds its limit of {} streams; poll /api/client/delta or \
                     retry later.",
                    config.max_streams
                ),
            });
        }
        let mine = counts.per_key.get(secret_hash).copied().unwrap_or(0);
        if mine >= config.max_streams_per_key {
            return Err(Error::TooManyRequests {
                message: format!(
                    "This API key holds its limit of {} streams; close one or retry later.",
                    config.max_streams_per_key
                ),
            });
        }
        counts.total += 1;
        *counts.per_key.entry(secret_hash.to_owned()).or_insert(0) += 1;
        Ok(Some(StreamGuard {
            admin: self.clone(),
            secret_hash: secret_hash.to_owned(),
        }))
    }

    /// Start the pump if it is not running.
    fn ensure_pump(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let start = match self.client.push.streams.lock() {
            Ok(mut counts) if !counts.pump => {
                counts.pump = true;
                true
            }
            _ => false,
        };
        if start {
            // Subscribed here, not in the task: a commit between this stream's first read
            // and the task's first poll still wakes it; and it starts with a refresh.
            let mut local = self.client.push.committed.subscribe();
            local.mark_changed();
            handle.spawn(self.clone().pump(local));
        }
    }

    /// The pump: wakes on commits, notifications and timers, refreshes the streamed scopes,
    /// ends the streams of revoked keys; stops when no stream is open.
    async fn pump(self, mut local: tokio::sync::watch::Receiver<Revision>) {
        let push = &self.client.push;
        let config = push.config();
        let mut remote = self.store.changes();
        let mut keep_alive = tokio::time::interval(config.keep_alive);
        let mut catch_up = tokio::time::interval(config.catch_up);
        keep_alive.tick().await;
        catch_up.tick().await;
        let mut checked: Option<(Revision, std::time::Instant)> = None;
        loop {
            let stop = match push.streams.lock() {
                Ok(mut counts) if counts.total == 0 => {
                    counts.pump = false;
                    true
                }
                Ok(_) => false,
                Err(_) => true,
            };
            if stop {
                return;
            }
            let remote_changed = async {
                match remote.as_mut() {
                    Some(r) => r.changed().await.is_ok(),
                    None => std::future::pending().await,
                }
            };
            let keep_alive_only = tokio::select! {
                _ = local.changed() => false,
                ok = remote_changed => {
                    if !ok {
                        remote = None;
                    }
                    false
                }
                _ = keep_alive.tick() => {
                    push.broadcast(&StreamMessage::KeepAlive);
                    true
                }
                _ = catch_up.tick() => false,
            };
            // A keep-alive is a comment to the streams, not a question to the store.
            if keep_alive_only {
                continue;
            }
            match self.store.revision().await {
                Ok(latest) => {
                    for history in push.streamed_scopes() {
                        let mut inner = history.inner.lock().await;
                        if let Err(error) = self.refresh(&history, &mut inner, latest).await {
                            tracing::warn!(%error, "a stream scope could not be refreshed");
                        }
                    }
                    // A revocation is a commit: the keys are read again when the store moved
                    // on, and otherwise only every REVOCATION_CHECK (for expiries), so that an
                    // idle catch-up costs the store one small read.
                    let due =
                        checked.is_none_or(|(revision, at): (Revision, std::time::Instant)| {
                            revision != latest || at.elapsed() >= REVOCATION_CHECK
                        });
                    if due {
                        self.end_revoked_streams().await;
                        checked = Some((latest, std::time::Instant::now()));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "streams: the store's revision failed");
                    self.end_revoked_streams().await;
                }
            }
        }
    }

    /// End the streams of keys that were revoked or have expired.
    async fn end_revoked_streams(&self) {
        let hashes: Vec<String> = match self.client.push.streams.lock() {
            Ok(counts) => counts.per_key.keys().cloned().collect(),
            Err(_) => return,
        };
        if hashes.is_empty() {
            return;
        }
        let keys: Vec<Key> = hashes
            .iter()
            .map(|h| Key::new(Collection::ApiKeys, h.clone()))
            .collect();
        let Ok(records) = self.store.get_many(&keys).await else {
            return;
        };
        let now = Utc::now();
        let revoked: HashSet<String> = keys
            .iter()
            .zip(records)
            .filter(|(key, record)| match record {
                None => true,
                Some(record) => super::records::decode::<ApiKeyInfo>(key, &record.value)
                    .map(|info| info.is_expired_at(now))
                    .unwrap_or(false),
            })
            .map(|(key, _)| key.id.clone())
            .collect();
        if !revoked.is_empty() {
            self.client
                .push
                .broadcast(&StreamMessage::Revoked(Arc::new(revoked)));
        }
    }
}

/// OFREP's stream event for a change leading to `revision`: unnamed (the web provider
/// listens to `message` events only), with its `id:`.
fn refetch_event(revision: Revision) -> Bytes {
    let id = super::delta::event_id(revision);
    Bytes::from(format!(
        "id: {id}\ndata: {{\"type\":\"refetchEvaluation\"}}\n\n"
    ))
}
