//! The client API's write side: SDK registration and usage metrics.
//!
//! * [`ToggleAdmin::register_client`] records an SDK instance on its application (one
//!   commit per registration; SDKs register once at start-up).
//! * [`ToggleAdmin::record_client_metrics`] adds a metrics bucket to an in-memory buffer,
//!   aggregated per feature, application, environment and hour. The buffer is written in one
//!   commit for everything accumulated when a report arrives more than
//!   [`ToggleAdmin::set_metrics_flush_interval`] after the last write (5 s by default), and
//!   by [`ToggleAdmin::flush_client_metrics`], which a server calls at shutdown. Reads merge
//!   the buffer in, so they never lag. A crash loses what was buffered since the last write:
//!   at most the reports of one flush interval, plus those received while no further report
//!   arrived to trigger a write (call `flush_client_metrics` periodically to bound that).
//!
//! Metrics are kept 48 hours, in the applications collection under ids that start with a
//! unit separator (which no application name may contain).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use unleash_types::client_metrics::{ClientApplication, ClientMetrics};

use super::applications::{application_key, merge, stored_form};
use super::flow::InMaintenance;
use super::records::{SEP, decode_opt, encode};
use super::{Authority, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{Application, ApplicationInstance};
use crate::model::{FeatureEnvironmentMetrics, FeatureUsage};
use crate::store::{Collection, Key};

/// How long buffered metrics may wait for a write, by default.
pub const DEFAULT_METRICS_FLUSH_INTERVAL: Duration = Duration::from_secs(5);
/// How long metrics are kept.
const RETENTION_HOURS: i64 = 48;
/// At most this many (feature, application, environment, hour) counts wait in the buffer;
/// reports past it are dropped (and logged) until a write succeeds.
const MAX_BUFFERED: usize = 100_000;

/// `(feature, application, environment, hour)`.
type Bucket = (String, String, String, DateTime<Utc>);

/// Counts of one bucket.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Counts {
    yes: u64,
    no: u64,
    variants: BTreeMap<String, u64>,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.yes = self.yes.saturating_add(other.yes);
        self.no = self.no.saturating_add(other.no);
        for (name, n) in &other.variants {
            let slot = self.variants.entry(name.clone()).or_default();
            *slot = slot.saturating_add(*n);
        }
    }
}

/// A feature's stored metrics.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct MetricsRecord {
    metrics: Vec<FeatureEnvironmentMetrics>,
}

/// The buffer of metrics not yet written, and the settings of the client API.
#[derive(Debug)]
pub(crate) struct MetricsState {
    buffer: Mutex<BTreeMap<Bucket, Counts>>,
    last_flush: Mutex<Instant>,
    flush_interval: Mutex<Duration>,
    instance_timeout: Mutex<Option<Duration>>,
    /// The server's own evaluations (OFREP's), counted apart until the buffer is read or
    /// written.
    #[cfg(feature = "frontend")]
    evaluations: super::evaluation_counts::EvaluationCounts,
    /// Held by the one flush writing at a time.
    flushing: tokio::sync::Mutex<()>,
}

impl Default for MetricsState {
    fn default() -> Self {
        Self {
            buffer: Mutex::new(BTreeMap::new()),
            last_flush: Mutex::new(Instant::now()),
            flush_interval: Mutex::new(DEFAULT_METRICS_FLUSH_INTERVAL),
            instance_timeout: Mutex::new(None),
            #[cfg(feature = "frontend")]
            evaluations: Default::default(),
            flushing: tokio::sync::Mutex::new(()),
        }
    }
}

fn metrics_key(feature: &str) -> Key {
    Key::new(
        Collection::Applications,
        format!("{SEP}metrics{SEP}{feature}"),
    )
}

fn poisoned() -> Error {
    Error::internal("the client metrics buffer's lock is poisoned", None)
}

impl ToggleAdmin {
    /// Instances last seen more than `timeout` ago drop out of application listings and
    /// reads (`None`, the default, keeps every instance: instances recorded through the admin
    /// API may carry any `lastSeen`). Shared by every clone of this facade.
    pub fn set_instance_timeout(&self, timeout: Option<Duration>) {
        if let Ok(mut t) = self.client.metrics.instance_timeout.lock() {
            *t = timeout;
        }
    }

    /// Buffered metrics are written when a report arrives at least `interval` after the last
    /// write ([`DEFAULT_METRICS_FLUSH_INTERVAL`] unless set; zero writes every report).
    pub fn set_metrics_flush_interval(&self, interval: Duration) {
        if let Ok(mut t) = self.client.metrics.flush_interval.lock() {
            *t = interval;
        }
    }

    /// `application` without the instances not seen within the instance timeout.
    pub(super) fn without_stale_instances(&self, mut application: Application) -> Application {
        let timeout = self
            .client
            .metrics
            .instance_timeout
            .lock()
            .ok()
            .and_then(|t| *t);
        let oldest = timeout
            .and_then(|t| TimeDelta::from_std(t).ok())
            .and_then(|t| Utc::now().checked_sub_signed(t));
        if let Some(oldest) = oldest {
            application
                .instances
                .retain(|i| i.last_seen.is_none_or(|seen| seen >= oldest));
        }
        application
    }

    /// Record an SDK's registration (`POST /api/client/register`): its application gets the
    /// SDK version and strategies, and the instance (`instanceId`, `default` if none) is
    /// listed with the key's environment and `lastSeen` now. Any valid key; a revoked one
    /// fails with [`Error::AuthenticationRequired`], and a revocation racing the write wins.
    pub async fn register_client<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        registration: &ClientApplication,
    ) -> Result<()> {
        if let Some(problem) =
            crate::names::display_name_problem(&registration.app_name, crate::names::MAX_NAME)
        {
            return Err(Error::invalid_at(
                "appName",
                format!("the application name {problem}"),
            ));
        }
        let now = Utc::now();
        let (permit, scope) = self.permit_client(authority.into()).await?;
        let scope = &scope;
        self.change_in_maintenance("register_client", permit, |tx| {
            Box::pin(async move {
                let instance = ApplicationInstance {
                    instance_id: registration
                        .instance_id
                        .clone()
                        .filter(|i| !i.trim().is_empty())
                        .unwrap_or_else(|| "default".to_owned()),
                    sdk_version: registration.metadata.sdk_version.clone(),
                    environment: Some(scope.clone()),
                    last_seen: Some(now),
                };
                let update = Application {
                    name: registration.app_name.clone(),
                    sdk_version: registration.metadata.sdk_version.clone(),
                    strategies: registration.strategies.clone(),
                    instances: vec![instance],
                    ..Application::default()
                };
                let key = application_key(&registration.app_name);
                let record = tx.get(&key).await?;
                let current: Option<Application> = decode_opt(&key, record.as_ref())?;
                let merged = match &current {
                    None => stored_form(&update),
                    Some(stored) => merge(stored, &update),
                };
                tx.put(key.clone(), encode(&key, &merged)?);
                Ok(())
            })
        })
        .await
    }

    /// Add an SDK's metrics report (`POST /api/client/metrics`) to the buffer, counted in the
    /// key's environment and the hour the bucket started; write the buffer if the flush
    /// interval has passed since the last write (a failed write is logged and retried with
    /// the next report: the counts stay buffered). Any valid key. Counts for names that
    /// cannot be feature names (not URL-friendly, over 255 characters) are ignored; an
    /// application name that cannot be one → [`Error::Validation`].
    pub async fn record_client_metrics<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        report: &ClientMetrics,
    ) -> Result<()> {
        let (_, scope) = self.sdk_scope(authority.into()).await?;
        let environment = scope.environment;
        if let Some(problem) =
            crate::names::display_name_problem(&report.app_name, crate::names::MAX_NAME)
        {
            return Err(Error::invalid_at(
                "appName",
                format!("the application name {problem}"),
            ));
        }
        if let Some(bucket) = &report.bucket {
            let hour = bucket
                .start
                .duration_trunc(TimeDelta::hours(1))
                .unwrap_or(bucket.start);
            let mut buffer = self.client.metrics.buffer.lock().map_err(|_| poisoned())?;
            for (feature, stats) in &bucket.toggles {
                if crate::names::name_problem(feature, crate::names::MAX_NAME).is_some() {
                    continue;
                }
                let bucket_key = (
                    feature.clone(),
                    report.app_name.clone(),
                    environment.clone(),
                    hour,
                );
                if buffer.len() >= MAX_BUFFERED && !buffer.contains_key(&bucket_key) {
                    tracing::warn!(feature, "client metrics buffer full: counts dropped");
                    continue;
                }
                let counts = Counts {
                    yes: u64::from(stats.yes),
                    no: u64::from(stats.no),
                    variants: stats
                        .variants
                        .iter()
                        // A variant name no store could hold (PostgreSQL refuses a NUL) would
                        // keep the whole buffer from being written: ignored, as names that
                        // cannot be feature names are.
                        .filter(|(name, _)| !name.contains('\0'))
                        .map(|(k, v)| (k.clone(), u64::from(*v)))
                        .collect(),
                };
                buffer.entry(bucket_key).or_default().add(&counts);
            }
        }
        self.flush_if_due().await;
        Ok(())
    }

    /// Count evaluations made by this server (OFREP's, see `ofrep.rs`) as an SDK's report
    /// would: each `(place of the flag in document, enabled, variant)` once, for
    /// `application` in `environment`, in the current hour; the buffer is written if the
    /// flush interval has passed. The counts wait in a tally of their own
    /// (`evaluation_counts.rs`) until the buffer is read or written.
    #[cfg(feature = "frontend")]
    pub(super) async fn count_evaluations<'a>(
        &self,
        document: &std::sync::Arc<unleash_types::client_features::ClientFeatures>,
        environment: &str,
        application: &str,
        evaluations: impl Iterator<Item = (usize, bool, Option<&'a str>)>,
    ) {
        let now = Utc::now();
        let hour = now.duration_trunc(TimeDelta::hours(1)).unwrap_or(now);
        self.client.metrics.evaluations.count(
            document,
            environment,
            application,
            hour,
            MAX_BUFFERED,
            evaluations,
        );
        self.flush_if_due().await;
    }

    /// The buffer, locked, with the server's own evaluations counted in.
    fn buffer(&self) -> Result<std::sync::MutexGuard<'_, BTreeMap<Bucket, Counts>>> {
        #[cfg(feature = "frontend")]
        let tallies = self.client.metrics.evaluations.take();
        #[allow(unused_mut)]
        let mut buffer = self.client.metrics.buffer.lock().map_err(|_| poisoned())?;
        #[cfg(feature = "frontend")]
        for tally in &tallies {
            for (feature, counts) in tally.counted() {
                let bucket_key = (
                    feature.to_owned(),
                    tally.application.clone(),
                    tally.environment.clone(),
                    tally.hour,
                );
                if buffer.len() >= MAX_BUFFERED && !buffer.contains_key(&bucket_key) {
                    continue;
                }
                buffer.entry(bucket_key).or_default().add(&Counts {
                    yes: counts.yes,
                    no: counts.no,
                    variants: counts.variant_map(),
                });
            }
        }
        Ok(buffer)
    }

    /// Write the buffer if the flush interval has passed since the last write (a failure is
    /// logged; the counts stay buffered).
    async fn flush_if_due(&self) {
        let due = {
            let Ok(last) = self.client.metrics.last_flush.lock().map(|t| *t) else {
                return;
            };
            let Ok(interval) = self.client.metrics.flush_interval.lock().map(|t| *t) else {
                return;
            };
            last.elapsed() >= interval
        };
        if due && let Err(error) = self.flush_client_metrics().await {
            tracing::warn!(%error, "writing client metrics failed; they stay buffered");
        }
    }

    /// Write every buffered metric now, in one commit (retried on conflicts). On failure the
    /// counts go back to the buffer, so nothing is lost while the process lives. Call it at
    /// shutdown.
    pub async fn flush_client_metrics(&self) -> Result<()> {
        let _turn = self.client.metrics.flushing.lock().await;
        if let Ok(mut last) = self.client.metrics.last_flush.lock() {
            *last = Instant::now();
        }
        let taken = std::mem::take(&mut *self.buffer()?);
        if taken.is_empty() {
            return Ok(());
        }
        let taken_ref = &taken;
        let written = self
            .change_unkeyed(
                "flush_client_metrics",
                "metrics",
                InMaintenance::Allowed,
                |tx| {
                    Box::pin(async move {
                        let taken = taken_ref;
                        let features: BTreeSet<&str> =
                            taken.keys().map(|(f, _, _, _)| f.as_str()).collect();
                        let keys: Vec<Key> = features.iter().map(|f| metrics_key(f)).collect();
                        let records = tx.reader().get_all(&keys).await?;
                        let oldest = Utc::now() - TimeDelta::hours(RETENTION_HOURS);
                        for ((feature, key), record) in features.iter().zip(&keys).zip(&records) {
                            let mut stored: MetricsRecord =
                                decode_opt(key, record.as_ref())?.unwrap_or_default();
                            let mut merged = into_map(stored.metrics);
                            for ((f, app, env, hour), counts) in taken {
                                if f == feature {
                                    merged
                                        .entry((f.clone(), app.clone(), env.clone(), *hour))
                                        .or_default()
                                        .add(counts);
                                }
                            }
                            merged.retain(|(_, _, _, hour), _| *hour >= oldest);
                            stored.metrics = from_map(merged);
                            tx.put(key.clone(), encode(key, &stored)?);
                        }
                        Ok(())
                    })
                },
            )
            .await;
        if let Err(error) = written {
            if let Ok(mut buffer) = self.client.metrics.buffer.lock() {
                for (bucket, counts) in taken {
                    buffer.entry(bucket).or_default().add(&counts);
                }
            }
            return Err(error);
        }
        Ok(())
    }

    /// Every metric of `feature` in the last 48 hours, written or buffered, by hour,
    /// application and environment. Needs an admin key (any permission).
    pub async fn feature_metrics(
        &self,
        caller: &Caller,
        feature: &str,
    ) -> Result<Vec<FeatureEnvironmentMetrics>> {
        self.require(caller, &[]).await?;
        let key = metrics_key(feature);
        let stored: MetricsRecord =
            decode_opt(&key, self.store.get(&key).await?.as_ref())?.unwrap_or_default();
        let mut merged = into_map(stored.metrics);
        {
            let buffer = self.buffer()?;
            for (bucket, counts) in buffer.iter().filter(|((f, ..), _)| f == feature) {
                merged.entry(bucket.clone()).or_default().add(counts);
            }
        }
        Ok(from_map(merged))
    }

    /// Every metric of every feature in the last 48 hours, written or buffered, by feature,
    /// application, environment and hour (for the views over applications).
    pub(super) async fn all_metrics(&self) -> Result<Vec<FeatureEnvironmentMetrics>> {
        let prefix = format!("{SEP}metrics{SEP}");
        let listing = self.store.list(Collection::Applications, &prefix).await?;
        let mut merged: BTreeMap<Bucket, Counts> = BTreeMap::new();
        for (id, record) in &listing.records {
            let key = Key::new(Collection::Applications, id.clone());
            let stored: MetricsRecord = super::records::decode(&key, &record.value)?;
            for (bucket, counts) in into_map(stored.metrics) {
                merged.entry(bucket).or_default().add(&counts);
            }
        }
        {
            let buffer = self.buffer()?;
            for (bucket, counts) in buffer.iter() {
                merged.entry(bucket.clone()).or_default().add(counts);
            }
        }
        Ok(from_map(merged))
    }

    /// Unleash's usage summary of `feature`
    /// (`GET /api/admin/client-metrics/features/{name}`): the last hour's counts and the
    /// applications that reported it. A feature without metrics has empty lists.
    pub async fn feature_usage(&self, caller: &Caller, feature: &str) -> Result<FeatureUsage> {
        let all = self.feature_metrics(caller, feature).await?;
        let since = Utc::now() - TimeDelta::hours(1);
        let seen: BTreeSet<String> = all.iter().map(|m| m.app_name.clone()).collect();
        Ok(FeatureUsage {
            version: 1,
            maturity: "stable".to_owned(),
            feature_name: feature.to_owned(),
            last_hour_usage: all.into_iter().filter(|m| m.timestamp >= since).collect(),
            seen_applications: seen.into_iter().collect(),
        })
    }
}

fn into_map(metrics: Vec<FeatureEnvironmentMetrics>) -> BTreeMap<Bucket, Counts> {
    let mut map: BTreeMap<Bucket, Counts> = BTreeMap::new();
    for m in metrics {
        map.entry((m.feature_name, m.app_name, m.environment, m.timestamp))
            .or_default()
            .add(&Counts {
                yes: m.yes,
                no: m.no,
                variants: m.variants,
            });
    }
    map
}

fn from_map(map: BTreeMap<Bucket, Counts>) -> Vec<FeatureEnvironmentMetrics> {
    map.into_iter()
        .map(
            |((feature_name, app_name, environment, timestamp), c)| FeatureEnvironmentMetrics {
                feature_name,
                app_name,
                environment,
                timestamp,
                yes: c.yes,
                no: c.no,
                variants: c.variants,
            },
        )
        .collect()
}
