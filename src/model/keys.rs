//! API keys as listed and stored: what a key may do, its type, and its description (never
//! its secret).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Grant;

/// What a key may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub enum KeyAccess {
    /// Every permission everywhere.
    Admin,
    /// Exactly these grants.
    Grants {
        /// The grants.
        grants: Vec<Grant>,
    },
    /// Whatever the user may do, resolved at each check from the user's root role and the
    /// project roles the user holds directly or through its groups.
    User {
        /// The user's id.
        user_id: i64,
    },
    /// A client (server-side SDK) key: it reads the client API (`/api/client/*`) for
    /// `projects` in one `environment`, and is refused by every admin operation
    /// ([`Error::NoAccess`](crate::Error::NoAccess)).
    Client {
        /// Unleash's token type: `client` or its newer name `backend`.
        #[serde(default)]
        token_type: ClientKeyType,
        /// The projects it sees; `["*"]` for every project.
        projects: Vec<String>,
        /// The one environment it sees.
        environment: String,
    },
}

impl KeyAccess {
    /// A client key for `projects` (`*` or empty for every project) in `environment`.
    pub fn client(projects: Vec<String>, environment: impl Into<String>) -> Self {
        let mut projects = projects;
        projects.sort();
        projects.dedup();
        if projects.is_empty() || projects.iter().any(|p| p == "*") {
            projects = vec!["*".to_owned()];
        }
        KeyAccess::Client {
            token_type: ClientKeyType::Client,
            projects,
            environment: environment.into(),
        }
    }

    /// Whether this is a client key.
    pub fn is_client(&self) -> bool {
        matches!(self, KeyAccess::Client { .. })
    }

    /// A frontend key for `projects` (`*` or empty for every project) in `environment`.
    pub fn frontend(projects: Vec<String>, environment: impl Into<String>) -> Self {
        match Self::client(projects, environment) {
            KeyAccess::Client {
                projects,
                environment,
                ..
            } => KeyAccess::Client {
                token_type: ClientKeyType::Frontend,
                projects,
                environment,
            },
            other => other,
        }
    }

    /// Whether this is a frontend key: it may call the frontend API only.
    pub fn is_frontend(&self) -> bool {
        matches!(
            self,
            KeyAccess::Client {
                token_type: ClientKeyType::Frontend,
                ..
            }
        )
    }
}

/// The type name of a client key, as Unleash lists it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub enum ClientKeyType {
    /// `client`.
    #[default]
    Client,
    /// `backend`, the newer name of the same thing.
    Backend,
    /// `frontend`: a key for browser and mobile SDKs, which read the frontend API only.
    Frontend,
}

impl ClientKeyType {
    /// `client`, `backend` or `frontend`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKeyType::Client => "client",
            ClientKeyType::Backend => "backend",
            ClientKeyType::Frontend => "frontend",
        }
    }
}

/// An API key as stored: everything but the secret, whose hash is the record's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyInfo {
    /// The key's public id (to list and revoke it).
    pub id: uuid::Uuid,
    /// A name for people; shown as the author of the key's changes in the event log.
    pub name: String,
    /// What the key may do.
    pub access: KeyAccess,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it stops working, if ever: from this instant on it authenticates no more (401).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
}

impl ApiKeyInfo {
    /// Whether the key has expired at `now`: it has an expiry and `now` is at or past it.
    pub fn is_expired_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

/// What a request for a token asks for, by the fields of Unleash's `createApiTokenSchema`:
/// its `type` and its scope. What each type means is
/// [`admin::token_access`](crate::admin::token_access).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// `admin`, `client` or `backend` (any case).
    pub token_type: String,
    /// The environment a client key is for; Unleash's `default` when absent.
    pub environment: Option<String>,
    /// One project (Unleash's older field).
    pub project: Option<String>,
    /// The projects a client key is for; every project when neither this nor `project` is
    /// named.
    pub projects: Option<Vec<String>>,
}
