//! The Edge protocol's wire types: what `POST /edge/validate` answers (Unleash's
//! `validatedEdgeTokensSchema`) and what `POST /api/client/metrics/bulk` takes (Unleash's
//! `bulkMetricsSchema`, Unleash Edge's batches).

use serde::{Deserialize, Serialize};
use unleash_types::client_metrics::{ClientApplication, ClientMetricsEnv};

/// The type of a token Edge may use, as Unleash names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeTokenType {
    /// A client (backend) token: Edge reads the client API with it.
    Client,
    /// A frontend token: Edge answers the frontend API for it.
    Frontend,
}

/// A valid token with what it may see (Unleash's `edgeTokenSchema`; the environment is the
/// token's own, `project:environment.random`, as Edge reads it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeToken {
    /// The token as sent.
    pub token: String,
    /// Its type.
    #[serde(rename = "type")]
    pub token_type: EdgeTokenType,
    /// Its projects; `["*"]` for every project.
    pub projects: Vec<String>,
}

/// `{tokens: [...]}`: the answer of `POST /edge/validate`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeTokens {
    /// The valid tokens among those asked about, in the order asked.
    pub tokens: Vec<EdgeToken>,
}

/// A batch of applications and metrics from Unleash Edge (`POST /api/client/metrics/bulk`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BulkMetrics {
    /// SDK registrations Edge saw.
    #[serde(default)]
    pub applications: Vec<ClientApplication>,
    /// Evaluation counts, each for one feature, application, environment and hour.
    #[serde(default)]
    pub metrics: Vec<ClientMetricsEnv>,
}
