//! API keys as listed and stored: what a key may do, its type, and its description (never
//! its secret); and the bodies and views of the HTTP API's key routes
//! (`/api/admin/api-tokens`, `/api/admin/user-admin/{id}/tokens`), under Unleash's names.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// A name for people; the author the event log records for the changes of a key acting
    /// as no user (a key acting as a user records its user's email or username).
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

/// What a request for an API key asks for, by the fields of Unleash's `createApiTokenSchema`:
/// its `type` and its scope. What each type means is
/// [`admin::token_access`](crate::admin::token_access).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiKeyRequest {
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

/// The body of `POST /api/admin/api-tokens` (Unleash's `createApiTokenSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = NewToken))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyBody {
    /// A name for people (Unleash's `tokenName`).
    #[serde(rename = "tokenName", default)]
    pub name: Option<String>,
    /// Deprecated name of `tokenName`.
    #[serde(default)]
    pub username: Option<String>,
    /// `admin`, `client`, `backend` or `frontend` (any case).
    #[serde(rename = "type")]
    pub key_type: String,
    /// The environment a client or frontend key is for.
    #[serde(default)]
    pub environment: Option<String>,
    /// One project (Unleash's older field).
    #[serde(default)]
    pub project: Option<String>,
    /// The projects a client or frontend key is for.
    #[serde(default)]
    pub projects: Option<Vec<String>>,
    /// When the key stops working: an RFC 3339 date-time, or `null` for never. Kept as JSON
    /// so that a value of the wrong shape is reported at `/expiresAt`.
    #[serde(default)]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<Value>,
}

impl ApiKeyBody {
    /// The type and scope this body asks for.
    pub fn request(&self) -> ApiKeyRequest {
        ApiKeyRequest {
            token_type: self.key_type.clone(),
            environment: self.environment.clone(),
            project: self.project.clone(),
            projects: self.projects.clone(),
        }
    }
}

/// A key as `/api/admin/api-tokens` shows it (Unleash's `apiTokenSchema`); `secret` only when
/// it was just created: listings never show a secret (Unleash's do).
///
/// * `id`: the key's public id, which revokes it (Unleash revokes a token by its secret,
///   which listings here do not show).
/// * `type`: `admin` (every permission), `grants` (explicit grants, created through the
///   library; `grants` lists them), `user` (acts as the user `userId`), or a client key's type.
/// * `projects`: the projects the key is limited to, `["*"]` when it is not limited to some
///   (an admin key, a key acting as a user — which may do what the user may do — or a key
///   with a grant for every project); `project` is the same list joined with `,`, as in
///   Unleash.
/// * `environment`: the environment the key is limited to, `*` when it is not limited;
///   several environments joined with `,`.
/// * `expiresAt`: when the key stops working, `null` if never.
/// * `username`: the key's name again (Unleash's deprecated name of `tokenName`); `alias` and
///   `seenAt` are always `null` (keys have no alias here, and their use is not recorded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = TokenView))]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyView {
    /// The secret, in the creation response only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The key's public id (to revoke it).
    pub id: uuid::Uuid,
    /// A name for people (Unleash's `tokenName`).
    #[serde(rename = "tokenName")]
    pub name: String,
    /// `admin`, `grants`, `user`, or a client key's type (`client`, `backend`, `frontend`).
    #[serde(rename = "type")]
    pub key_type: String,
    /// `projects` joined with `,`, as in Unleash.
    pub project: String,
    /// The projects the key is limited to, `["*"]` when it is not limited to some.
    pub projects: Vec<String>,
    /// The environment the key is limited to, `*` when it is not limited; several
    /// environments joined with `,`.
    pub environment: String,
    /// When the key stops working, `null` if never.
    #[serde(with = "super::millis_timestamp::optional")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was created.
    #[serde(with = "super::millis_timestamp")]
    pub created_at: DateTime<Utc>,
    /// The key's name again: Unleash's deprecated name of `tokenName`.
    pub username: String,
    /// Always `null`: keys have no alias here.
    pub alias: Option<String>,
    /// Always `null`: when a key was last used is not recorded.
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub seen_at: Option<DateTime<Utc>>,
    /// The user a key of type `user` acts as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<i64>,
    /// Exactly what a key of type `grants` may do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grants: Option<Vec<Grant>>,
}

impl ApiKeyView {
    /// How the HTTP API shows `info`; `secret` when it was just created.
    pub fn new(info: ApiKeyInfo, secret: Option<String>) -> Self {
        let all = || vec!["*".to_owned()];
        let (key_type, projects, environments, user_id) = match &info.access {
            KeyAccess::Admin => ("admin", all(), all(), None),
            KeyAccess::User { user_id } => ("user", all(), all(), Some(*user_id)),
            KeyAccess::Client {
                token_type,
                projects,
                environment,
            } => (
                token_type.as_str(),
                projects.clone(),
                vec![environment.clone()],
                None,
            ),
            KeyAccess::Grants { grants } => {
                let scope = |of: fn(&Grant) -> Option<&str>| {
                    let mut names: Vec<String> = Vec::new();
                    for grant in grants {
                        match of(grant) {
                            None | Some("*") => return all(),
                            Some(name) => names.push(name.to_owned()),
                        }
                    }
                    names.sort();
                    names.dedup();
                    if names.is_empty() { all() } else { names }
                };
                (
                    "grants",
                    scope(|g| g.project.as_deref()),
                    scope(|g| g.environment.as_deref()),
                    None,
                )
            }
        };
        let grants = match info.access {
            KeyAccess::Grants { grants } => Some(grants),
            _ => None,
        };
        ApiKeyView {
            secret,
            id: info.id,
            username: info.name.clone(),
            alias: None,
            seen_at: None,
            grants,
            name: info.name,
            key_type: key_type.to_owned(),
            project: projects.join(","),
            projects,
            environment: environments.join(","),
            expires_at: info.expires_at,
            created_at: info.created_at,
            user_id,
        }
    }
}

/// The body of `POST /api/admin/user-admin/{id}/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = NewUserToken))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PersonalApiKeyBody {
    /// The key's name.
    pub description: String,
    /// When the key stops working: an RFC 3339 date-time, or `null` for never.
    #[serde(default)]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<Value>,
}

/// The number standing for the key `id` where Unleash numbers keys (a personal access
/// token's `id`): 47 bits of the UUID, at least 1, the same for the same key on every
/// instance and store.
pub fn key_number(id: &uuid::Uuid) -> i64 {
    let bytes = id.as_bytes();
    let mut number: i64 = 0;
    for byte in bytes.iter().take(6) {
        number = (number << 8) | i64::from(*byte);
    }
    (number >> 1).max(1)
}

/// Which of `keys` the path segment `token` names: a key's id (its UUID) or its number
/// ([`key_number`]); `None` when it names none of them.
pub fn named_key<'k>(keys: &'k [ApiKeyInfo], token: &str) -> Option<&'k ApiKeyInfo> {
    if let Ok(id) = uuid::Uuid::parse_str(token) {
        return keys.iter().find(|k| k.id == id);
    }
    let number: i64 = token.parse().ok()?;
    keys.iter().find(|k| key_number(&k.id) == number)
}

/// A key that acts as a user: Unleash's personal access token shape (`patSchema`), with its
/// secret only in the response that creates it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = UserTokenView))]
#[serde(rename_all = "camelCase")]
pub struct PersonalApiKeyView {
    /// The key's number ([`key_number`]), as Unleash numbers personal access tokens: it
    /// revokes the key, as does the key's id (its UUID).
    pub id: i64,
    /// The secret, in the creation response only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The key's name.
    pub description: String,
    /// The user the key acts as.
    pub user_id: i64,
    /// When the key stops working, `null` if never.
    #[serde(with = "super::millis_timestamp::optional")]
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub expires_at: Option<DateTime<Utc>>,
    /// When it was created.
    #[serde(with = "super::millis_timestamp")]
    pub created_at: DateTime<Utc>,
    /// Always `null`: when a key was last used is not recorded.
    #[cfg_attr(feature = "http", schema(value_type = Option<String>, format = DateTime))]
    pub seen_at: Option<DateTime<Utc>>,
}

impl PersonalApiKeyView {
    /// How the HTTP API shows `info`, a key acting as user `user_id`; `secret` when it was
    /// just created.
    pub fn new(info: ApiKeyInfo, user_id: i64, secret: Option<String>) -> Self {
        PersonalApiKeyView {
            id: key_number(&info.id),
            secret,
            description: info.name,
            user_id,
            expires_at: info.expires_at,
            created_at: info.created_at,
            seen_at: None,
        }
    }
}

/// `GET /api/admin/user/tokens` (Unleash's `patsSchema`): the caller's keys, never their
/// secrets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = UserTokens))]
pub struct PersonalApiKeys {
    /// The keys, oldest first.
    pub pats: Vec<PersonalApiKeyView>,
}

/// The body of `PUT /api/admin/api-tokens/{token}` (Unleash's `updateApiTokenSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema), schema(as = TokenExpiry))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApiKeyExpiryBody {
    /// When the key stops working: an RFC 3339 date-time (required; it may be in the past,
    /// which stops the key at once).
    #[serde(default)]
    #[cfg_attr(feature = "http", schema(value_type = String, format = DateTime))]
    pub expires_at: Option<Value>,
}
