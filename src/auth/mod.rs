//! Authentication: who is calling ([`Caller`]) and the keys' secrets ([`NewApiKey`]).
//!
//! The wire types of keys, grants and permissions live in [`crate::model`].
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
//! [`Permission`](crate::model::Permission) optionally limited to a project and an
//! environment, as in Unleash: a grant with no project (or environment) covers all of them.

mod secret;

use std::fmt;

pub(crate) use secret::{
    constant_time_eq, hash_secret, new_client_secret, new_secret, verifier_of,
};

use crate::model::ApiKeyInfo;

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
