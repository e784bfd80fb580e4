//! [`ToggleAdmin`]: the facade, one file per resource.
//!
//! Every operation takes the same road: admitted by a [`Permit`] (`permit.rs`, the door),
//! it reads through a transaction, decides (a pure domain function) and commits with its
//! events (`flow.rs`, the flow); on a conflict the flow decides again on fresh reads, so
//! concurrent writers never lose an update. Each other file says only what its resource's
//! operations decide.

mod access;
mod application_overview;
mod applications;
mod author;
mod catalog;
mod client;
mod client_metrics;
mod client_scope;
mod constraints;
mod context;
mod delta;
mod dependencies;
mod edge;
mod environments;
#[cfg(feature = "frontend")]
mod evaluation_counts;
mod events;
mod export;
mod feature_archive;
mod feature_edits;
mod feature_environments;
mod feature_lifecycle;
mod feature_links;
mod feature_list;
mod feature_search;
mod feature_types;
mod feature_variants;
mod features;
mod flow;
#[cfg(feature = "frontend")]
mod frontend;
mod import;
mod key_expiry;
mod key_requests;
mod keys;
mod maintenance;
#[cfg(feature = "frontend")]
mod ofrep;
mod permit;
#[cfg(feature = "frontend")]
mod playground;
#[cfg(feature = "frontend")]
mod playground_context;
#[cfg(feature = "frontend")]
mod playground_explain;
#[cfg(feature = "frontend")]
mod playground_page;
mod profile;
mod project_environments;
mod project_health;
mod project_keys;
mod project_status;
mod projects;
mod reader;
pub(crate) mod records;
mod segments;
mod stored_text;
mod strategy_checks;
mod strategy_copy;
mod streaming;
mod tags;
mod ui_config;
mod user_access;
mod user_changes;
mod users;
mod variant_records;
mod variant_writers;
mod variants;
mod variants_batch;
mod views;

use std::sync::Arc;

use crate::store::Store;

pub use client_metrics::DEFAULT_METRICS_FLUSH_INTERVAL;
pub use client_scope::DEFAULT_CLIENT_ENVIRONMENT;
pub use delta::{DEFAULT_HISTORY_AGE, DEFAULT_HISTORY_EVENTS, DeltaAnswer, MAX_SCOPES, PushConfig};
pub use events::{creator_id, event_view, parse_event_filter};
pub use feature_edits::FEATURE_TYPES;
#[cfg(feature = "frontend")]
pub use frontend::{MAX_CONTEXT_PROPERTIES, MAX_CONTEXT_VALUE};
pub use key_requests::token_access;
#[cfg(feature = "frontend")]
pub use ofrep::{
    DEFAULT_OFREP_APPLICATION, OfrepAnswer, OfrepStream, STREAM_TOKEN_WINDOW_SECS, ofrep_context,
};
pub use permit::{Authority, Need, Permit};
#[cfg(feature = "frontend")]
pub use playground::MAX_PLAYGROUND_EVALUATIONS;
pub use profile::MAX_PERSONAL_KEYS;
pub use streaming::ClientStream;

pub(crate) use flow::{MAX_ATTEMPTS, Tx, contention, event};
pub(crate) use permit::wrong_key_type;

/// The administration core: the four operations of the specification and the supporting
/// surface around them, over any [`Store`].
///
/// Cheap to clone (the store is shared), so one instance can serve many tasks.
#[derive(Debug, Clone)]
pub struct ToggleAdmin {
    store: Arc<dyn Store>,
    /// Orders the decisions of writers on the same record (see `views.rs`).
    locks: Arc<views::DecisionLocks>,
    /// Concurrent variant changes of one feature environment, combined (see
    /// `variant_writers.rs`).
    writers: Arc<variant_writers::VariantWriters>,
    /// The client API's caches and buffers (see `client.rs`).
    client: Arc<client::ClientState>,
    /// What this instance last learnt of maintenance mode, a guess each commit checks (see
    /// `maintenance.rs`).
    maintenance_seen: Arc<maintenance::MaintenanceSeen>,
}

impl ToggleAdmin {
    /// An admin core over `store`.
    pub fn new(store: impl Store) -> Self {
        Self::from_arc(Arc::new(store))
    }

    /// An admin core over a store that is already shared.
    pub fn from_arc(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            locks: Arc::new(views::DecisionLocks::new()),
            writers: Arc::new(variant_writers::VariantWriters::default()),
            client: Arc::new(client::ClientState::default()),
            maintenance_seen: Arc::new(maintenance::MaintenanceSeen::default()),
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
}
