//! The Edge protocol: what an Unleash Edge in front of this service asks of it besides the
//! client API — which of its tokens are valid ([`ToggleAdmin::validate_edge_tokens`]), and
//! the applications and metrics of the SDKs behind it, in batches
//! ([`ToggleAdmin::record_bulk_metrics`]).

use std::collections::{BTreeMap, HashMap};

use chrono::{DurationRound, TimeDelta};
use unleash_types::client_metrics::{ClientMetrics, MetricBucket, MetricsMetadata, ToggleStats};

use super::ToggleAdmin;
use super::client_scope::client_key_basis;
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{BulkMetrics, EdgeToken, EdgeTokenType};
use crate::model::{ClientKeyType, KeyAccess};

impl ToggleAdmin {
    /// The valid tokens among `tokens`, in the order given, each with its type and
    /// projects, as Unleash answers Edge: client (and backend) keys and frontend keys; admin
    /// keys, unknown, revoked and expired ones are left out. Needs no caller (Edge asks
    /// before it has a token it trusts, as with Unleash).
    pub async fn validate_edge_tokens(&self, tokens: &[String]) -> Result<Vec<EdgeToken>> {
        let mut valid = Vec::new();
        for token in tokens {
            let caller = match self.authenticate(Some(token)).await {
                Ok(caller) => caller,
                Err(Error::AuthenticationRequired { .. }) => continue,
                Err(other) => return Err(other),
            };
            if let KeyAccess::Client {
                token_type,
                projects,
                ..
            } = &caller.info.access
            {
                valid.push(EdgeToken {
                    token: token.clone(),
                    token_type: match token_type {
                        ClientKeyType::Frontend => EdgeTokenType::Frontend,
                        ClientKeyType::Client | ClientKeyType::Backend => EdgeTokenType::Client,
                    },
                    projects: projects.clone(),
                });
            }
        }
        Ok(valid)
    }

    /// Record a batch from Unleash Edge: each application as
    /// [`register_client`](Self::register_client) records an SDK's registration, each count
    /// as [`record_client_metrics`](Self::record_client_metrics) records an SDK's report.
    /// Counts are taken in the caller's environment (a client key's); counts Edge labels
    /// with another environment are left out, as the key could not have read them. A
    /// frontend key → [`Error::NoAccess`].
    pub async fn record_bulk_metrics(&self, caller: &Caller, batch: &BulkMetrics) -> Result<()> {
        if caller.info.access.is_frontend() {
            return Err(super::wrong_key_type());
        }
        let (environment, _) = client_key_basis(self, caller).await?;
        for application in &batch.applications {
            self.register_client(caller, application).await?;
        }
        let mut reports: BTreeMap<
            (String, chrono::DateTime<chrono::Utc>),
            HashMap<String, ToggleStats>,
        > = BTreeMap::new();
        for metric in batch
            .metrics
            .iter()
            .filter(|m| m.environment == environment)
        {
            let hour = metric
                .timestamp
                .duration_trunc(TimeDelta::hours(1))
                .unwrap_or(metric.timestamp);
            let stats = reports
                .entry((metric.app_name.clone(), hour))
                .or_default()
                .entry(metric.feature_name.clone())
                .or_default();
            stats.yes = stats.yes.saturating_add(metric.yes);
            stats.no = stats.no.saturating_add(metric.no);
            for (variant, count) in &metric.variants {
                let total = stats.variants.entry(variant.clone()).or_default();
                *total = total.saturating_add(*count);
            }
        }
        for ((app_name, hour), toggles) in reports {
            let report = ClientMetrics {
                app_name,
                bucket: Some(MetricBucket {
                    start: hour,
                    stop: hour,
                    toggles,
                }),
                environment: Some(environment.clone()),
                instance_id: None,
                connection_id: None,
                impact_metrics: None,
                metadata: MetricsMetadata::default(),
            };
            self.record_client_metrics(caller, &report).await?;
        }
        Ok(())
    }
}
