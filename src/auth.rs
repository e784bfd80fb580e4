//! API keys, grants and permissions.
//!
//! A key is a random secret (256 bits from the operating system's random source, via
//! `getrandom`) shown once when created and never stored: the store holds two digests of it,
//! neither usable as a key.
//!
//! Why plain SHA-256 digests are safe here: a generated secret has 256 bits of entropy and an
//! operator-chosen bootstrap secret at least 32 characters, so recovering a secret from a
//! stolen digest means searching a space far beyond any brute force; slow password hashes
//! (argon2, bcrypt) exist to protect *low-entropy* human passwords and would only cost every
//! request their deliberate slowness. Whoever can read the store learns neither the secrets
//! nor anything that authenticates.
//!
//! * The **lookup id**, the record's id, is the secret's SHA-256. A presented secret is
//!   hashed and the record looked up by that id; the lookup reveals nothing about the secret
//!   (finding the record of a given id needs a SHA-256 preimage).
//! * The **verifier**, kept inside the record, is a second digest of the secret under a
//!   different domain (SHA-256 of a fixed prefix and the secret). After the lookup the
//!   verifier stored in the record is compared, in constant time, with the verifier of the
//!   presented secret. So a record is accepted only if it was made for exactly this secret,
//!   even from a store whose lookup is not exact (a collation, a prefix index, a bug).
//!   Records written before verifiers existed have none; they are accepted on the exact
//!   lookup alone (re-create such keys to give them one).
//!
//! A key may have an expiry ([`ApiKeyInfo::expires_at`]): from that instant on it is refused
//! like a revoked key, at authentication and at every permission check.
//!
//! A key either is an admin key (every permission) or carries explicit grants, each a
//! [`Permission`] optionally limited to a project and an environment, as in Unleash: a grant
//! with no project (or environment) covers all of them.

use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A permission, by Unleash's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum Permission {
    /// Everything.
    Admin,
    /// Create projects.
    CreateProject,
    /// Change a project's settings and environments.
    UpdateProject,
    /// Create environments.
    CreateEnvironment,
    /// Create features in a project.
    CreateFeature,
    /// Change a feature's metadata, tags and dependencies.
    UpdateFeature,
    /// Archive features.
    DeleteFeature,
    /// Enable or disable a feature in an environment.
    UpdateFeatureEnvironment,
    /// Change a feature's variants in an environment.
    UpdateFeatureEnvironmentVariants,
    /// Add strategies to a feature in an environment.
    CreateFeatureStrategy,
    /// Change a feature's strategies in an environment.
    UpdateFeatureStrategy,
    /// Remove a feature's strategies in an environment.
    DeleteFeatureStrategy,
    /// Create strategy definitions.
    CreateStrategy,
    /// Create context fields.
    CreateContextField,
    /// Change context fields.
    UpdateContextField,
    /// Create segments.
    CreateSegment,
    /// Change segments.
    UpdateSegment,
    /// Create tag types.
    CreateTagType,
    /// Change or delete registered applications.
    UpdateApplication,
    /// Change which users hold which roles in a project.
    ProjectUserAccessWrite,
    /// Change which groups hold which roles in a project.
    ProjectGroupAccessWrite,
    /// Manage users, groups and roles.
    ManageUsers,
    /// Add or remove a feature's parent dependencies.
    UpdateFeatureDependency,
}

impl Permission {
    /// Every permission.
    pub const ALL: [Permission; 23] = [
        Permission::Admin,
        Permission::CreateProject,
        Permission::UpdateProject,
        Permission::CreateEnvironment,
        Permission::CreateFeature,
        Permission::UpdateFeature,
        Permission::DeleteFeature,
        Permission::UpdateFeatureEnvironment,
        Permission::UpdateFeatureEnvironmentVariants,
        Permission::CreateFeatureStrategy,
        Permission::UpdateFeatureStrategy,
        Permission::DeleteFeatureStrategy,
        Permission::CreateStrategy,
        Permission::CreateContextField,
        Permission::UpdateContextField,
        Permission::CreateSegment,
        Permission::UpdateSegment,
        Permission::CreateTagType,
        Permission::UpdateApplication,
        Permission::ProjectUserAccessWrite,
        Permission::ProjectGroupAccessWrite,
        Permission::ManageUsers,
        Permission::UpdateFeatureDependency,
    ];

    /// Unleash's name of the permission.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Admin => "ADMIN",
            Permission::CreateProject => "CREATE_PROJECT",
            Permission::UpdateProject => "UPDATE_PROJECT",
            Permission::CreateEnvironment => "CREATE_ENVIRONMENT",
            Permission::CreateFeature => "CREATE_FEATURE",
            Permission::UpdateFeature => "UPDATE_FEATURE",
            Permission::DeleteFeature => "DELETE_FEATURE",
            Permission::UpdateFeatureEnvironment => "UPDATE_FEATURE_ENVIRONMENT",
            Permission::UpdateFeatureEnvironmentVariants => "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
            Permission::CreateFeatureStrategy => "CREATE_FEATURE_STRATEGY",
            Permission::UpdateFeatureStrategy => "UPDATE_FEATURE_STRATEGY",
            Permission::DeleteFeatureStrategy => "DELETE_FEATURE_STRATEGY",
            Permission::CreateStrategy => "CREATE_STRATEGY",
            Permission::CreateContextField => "CREATE_CONTEXT_FIELD",
            Permission::UpdateContextField => "UPDATE_CONTEXT_FIELD",
            Permission::CreateSegment => "CREATE_SEGMENT",
            Permission::UpdateSegment => "UPDATE_SEGMENT",
            Permission::CreateTagType => "CREATE_TAG_TYPE",
            Permission::UpdateApplication => "UPDATE_APPLICATION",
            Permission::ProjectUserAccessWrite => "PROJECT_USER_ACCESS_WRITE",
            Permission::ProjectGroupAccessWrite => "PROJECT_GROUP_ACCESS_WRITE",
            Permission::ManageUsers => "MANAGE_USERS",
            Permission::UpdateFeatureDependency => "UPDATE_FEATURE_DEPENDENCY",
        }
    }

    /// The permission named `name` by [`Permission::as_str`].
    pub fn from_name(name: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One permission, optionally limited to a project and an environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct Grant {
    /// What is allowed.
    #[cfg_attr(feature = "http", schema(value_type = String))]
    pub permission: Permission,
    /// The project it is limited to; `None` (or `*`) for every project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The environment it is limited to; `None` (or `*`) for every environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl Grant {
    /// `permission` everywhere.
    pub fn everywhere(permission: Permission) -> Self {
        Self {
            permission,
            project: None,
            environment: None,
        }
    }

    /// `permission` in `project` (every environment).
    pub fn in_project(permission: Permission, project: impl Into<String>) -> Self {
        Self {
            permission,
            project: Some(project.into()),
            environment: None,
        }
    }

    /// `permission` in `project` and `environment`.
    pub fn in_environment(
        permission: Permission,
        project: impl Into<String>,
        environment: impl Into<String>,
    ) -> Self {
        Self {
            permission,
            project: Some(project.into()),
            environment: Some(environment.into()),
        }
    }

    /// Whether this grant satisfies a check of `permission` in `project`/`environment`, by
    /// Unleash's rule: the permission matches or is `ADMIN`, and the grant's project and
    /// environment are unset, `*`, or equal to the checked ones. A check without a project
    /// (or environment) is satisfied only by a grant unlimited in it.
    pub fn covers(
        &self,
        permission: Permission,
        project: Option<&str>,
        environment: Option<&str>,
    ) -> bool {
        fn scope_covers(grant: Option<&str>, checked: Option<&str>) -> bool {
            match grant {
                None | Some("*") => true,
                Some(limited) => checked == Some(limited),
            }
        }
        (self.permission == permission || self.permission == Permission::Admin)
            && scope_covers(self.project.as_deref(), project)
            && scope_covers(self.environment.as_deref(), environment)
    }
}

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
    /// ([`Error::NoAccess`](crate::Error::NoAccess)). With `token_type`
    /// [`ClientKeyType::Frontend`] it is a frontend key: it reads the frontend API
    /// (`/api/frontend*`, evaluated answers) of that scope and nothing else.
    Client {
        /// Unleash's token type: `client` or its newer name `backend`; `frontend` for a
        /// frontend key.
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

    /// Whether this is a client key (a frontend key included: neither may call the admin
    /// API).
    pub fn is_client(&self) -> bool {
        matches!(self, KeyAccess::Client { .. })
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

/// A newly created key: its description and its secret, which is shown only this once.
#[derive(Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The key as stored.
    pub info: ApiKeyInfo,
    /// The secret to send in the `Authorization` header.
    pub secret: String,
}

impl fmt::Debug for NewApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The secret stays out of logs.
        f.debug_struct("NewApiKey")
            .field("info", &self.info)
            .field("secret", &"<redacted>")
            .finish()
    }
}

/// Who is calling: the result of [`authenticate`](crate::ToggleAdmin::authenticate).
///
/// Holding a `Caller` grants nothing by itself: every operation re-reads the key, so a
/// revoked key stops working at its next call, and a user's permissions are resolved at each
/// check.
#[derive(Clone, PartialEq, Eq)]
pub struct Caller {
    pub(crate) secret_hash: String,
    pub(crate) info: ApiKeyInfo,
    /// The revision of the key's record when `info` was decoded from it. While the record is
    /// still at this revision (checked at every call), `info` is what it holds, so the check
    /// need not decode it again.
    pub(crate) revision: crate::store::Revision,
}

impl Caller {
    /// The key's description as it was when authenticated.
    pub fn key(&self) -> &ApiKeyInfo {
        &self.info
    }
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller").field("key", &self.info).finish()
    }
}

/// A fresh secret: `ta_` and 64 hex digits of 256 bits from the OS random source. Fails only
/// when the operating system cannot provide randomness.
pub(crate) fn new_secret() -> Result<String, crate::Error> {
    Ok(format!("ta_{}", random_hex()?))
}

/// 64 hex digits of 256 bits from the OS random source.
fn random_hex() -> Result<String, crate::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| {
        crate::Error::internal(
            format!("the operating system's random source failed: {e}"),
            None,
        )
    })?;
    let mut hex = String::with_capacity(64);
    for byte in bytes {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    Ok(hex)
}

/// A fresh secret of a client key, in Unleash's shape `project:environment.random`: the
/// project is `*` for every project and `[]` for several.
pub(crate) fn new_client_secret(
    projects: &[String],
    environment: &str,
) -> Result<String, crate::Error> {
    let project = match projects {
        [one] => one.as_str(),
        _ => "[]",
    };
    Ok(format!("{project}:{environment}.{}", random_hex()?))
}

/// The stored form of a secret: its SHA-256 as lowercase hex.
pub(crate) fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The verifier of a secret, kept in its key's record and compared in constant time with
/// the presented secret's at authentication: SHA-256 of a domain prefix and the secret, as
/// lowercase hex. The prefix makes it independent of the lookup id ([`hash_secret`]), so a
/// record whose id was reached without knowing the secret still does not verify.
pub(crate) fn verifier_of(secret: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"toggle-admin api key verifier v1\0");
    hasher.update(secret.as_bytes());
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    hex
}

/// Equality of two strings in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_long_random_and_hashed() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 3 + 64);
        let hash = hash_secret(&a);
        assert_eq!(hash.len(), 64);
        assert_ne!(hash, a);
        assert_eq!(hash, hash_secret(&a));
        assert_eq!(
            hash_secret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn client_secrets_have_unleash_shape() {
        let all = new_client_secret(&["*".to_owned()], "production").unwrap();
        assert!(all.starts_with("*:production."), "{all}");
        assert_eq!(all.len(), "*:production.".len() + 64);
        let one = new_client_secret(&["web".to_owned()], "dev").unwrap();
        assert!(one.starts_with("web:dev."), "{one}");
        let several = new_client_secret(&["a".to_owned(), "b".to_owned()], "dev").unwrap();
        assert!(several.starts_with("[]:dev."), "{several}");
        assert_eq!(
            KeyAccess::client(vec![], "dev"),
            KeyAccess::Client {
                token_type: ClientKeyType::Client,
                projects: vec!["*".to_owned()],
                environment: "dev".to_owned()
            }
        );
    }

    #[test]
    fn constant_time_eq_compares() {
        assert!(constant_time_eq("abc", "abc"));
        assert!(!constant_time_eq("abc", "abd"));
        assert!(!constant_time_eq("abc", "ab"));
    }

    #[test]
    fn verifiers_differ_from_lookup_ids() {
        let secret = new_secret().unwrap();
        assert_ne!(verifier_of(&secret), hash_secret(&secret));
        assert_eq!(verifier_of(&secret), verifier_of(&secret));
        let mut other = secret.clone();
        other.pop();
        other.push('!');
        assert_ne!(verifier_of(&secret), verifier_of(&other));
    }

    #[test]
    fn grants_cover_by_unleash_rules() {
        let p = Permission::UpdateFeatureEnvironmentVariants;
        let g = Grant::in_environment(p, "a", "prod");
        assert!(g.covers(p, Some("a"), Some("prod")));
        assert!(!g.covers(p, Some("b"), Some("prod")));
        assert!(!g.covers(p, Some("a"), Some("dev")));
        assert!(!g.covers(Permission::UpdateFeature, Some("a"), Some("prod")));
        assert!(!g.covers(p, None, None));
        let star = Grant {
            permission: p,
            project: Some("*".into()),
            environment: None,
        };
        assert!(star.covers(p, Some("x"), Some("y")));
        assert!(Grant::everywhere(Permission::Admin).covers(p, Some("x"), None));
    }
}
