//! API keys: bootstrap, create, list, revoke, authenticate.
//!
//! A key's record lives at its secret's SHA-256 (the lookup id) and holds the key's public
//! description ([`ApiKeyInfo`]) and the secret's verifier (see [`crate::auth`]): the secret
//! itself is never stored, logged or written to an event, and is returned only by the call
//! that creates the key.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::flow::InMaintenance;
use super::key_requests::{check_new_key, quoted, token_access};
use super::permit::expired;
use super::reader::Reader;
use super::records::{api_key_key, decode, encode};
use super::{Need, Permit, ToggleAdmin};
use crate::auth::{
    Caller, NewApiKey, constant_time_eq, hash_secret, new_client_secret, new_secret, verifier_of,
};
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{ApiKeyInfo, ApiKeyRequest as TokenRequest, KeyAccess, Permission};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::{Collection, Json, Key, ReadView, Revision, Versioned};

/// A rule a new key must meet, decided on every key there is (a user's own keys: at most
/// ten, descriptions unique).
pub(super) type KeyRule<'a> = dyn Fn(&[ApiKeyInfo]) -> Result<()> + Sync + 'a;

/// The shortest secret [`ToggleAdmin::bootstrap_admin_key_with_secret`] accepts.
pub(crate) const MIN_CHOSEN_SECRET: usize = 32;

/// A key's record: its description and its secret's verifier. Records written before
/// verifiers existed have none (`verifier` absent).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredKey {
    #[serde(flatten)]
    info: ApiKeyInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verifier: Option<String>,
}

/// The 401 of a key whose expiry has passed.
fn unknown_key() -> Error {
    Error::AuthenticationRequired {
        message: "The API key is unknown or was revoked.".to_owned(),
    }
}

impl ToggleAdmin {
    /// Create the first admin key of an empty deployment. No caller is needed, so this works
    /// only while the store holds no API key at all; afterwards it fails with
    /// [`Error::NoAccess`] (use an admin key and [`create_api_key`](Self::create_api_key)).
    ///
    /// The returned secret is shown only this once.
    pub async fn bootstrap_admin_key(&self, name: &str) -> Result<NewApiKey> {
        self.bootstrap_admin_key_with_secret(name, &new_secret()?)
            .await
    }

    /// Whether the store already holds an API key (revoked ones count), i.e. whether
    /// [`bootstrap_admin_key`](Self::bootstrap_admin_key) would refuse. A service on a
    /// persistent store calls it at start-up and bootstraps only when it is false, without
    /// matching [`Error::NoAccess`]. (Two instances starting at once may both see false; the
    /// second bootstrap then fails with [`Error::NoAccess`].)
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> toggle_admin::Result<()> {
    /// let admin = toggle_admin::ToggleAdmin::new(toggle_admin::MemoryStore::new());
    /// assert!(!admin.is_bootstrapped().await?);
    /// admin.bootstrap_admin_key("ops").await?;
    /// assert!(admin.is_bootstrapped().await?);
    /// # Ok(()) }
    /// ```
    pub async fn is_bootstrapped(&self) -> Result<bool> {
        Ok(!self
            .store
            .list(Collection::ApiKeys, "")
            .await?
            .records
            .is_empty())
    }

    /// [`bootstrap_admin_key`](Self::bootstrap_admin_key) with a secret of the caller's
    /// choosing (e.g. from a deployment's secret store), so that the first admin key is known
    /// in advance. The secret must be 32 to 512 visible ASCII characters (it travels in the
    /// `Authorization` header; 32 characters keep a guess out of reach even when chosen by a
    /// person); otherwise [`Error::Validation`].
    pub async fn bootstrap_admin_key_with_secret(
        &self,
        name: &str,
        secret: &str,
    ) -> Result<NewApiKey> {
        let name = key_name(name)?;
        if secret.len() < MIN_CHOSEN_SECRET {
            return Err(Error::invalid_at(
                "secret",
                format!(
                    "a chosen key secret must be at least {MIN_CHOSEN_SECRET} characters (this one \
                     has {}); generate one with e.g. `openssl rand -hex 32`",
                    secret.len()
                ),
            ));
        }
        if secret.len() > 512 || !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::invalid_at(
                "secret",
                "a key's secret must be 32 to 512 visible ASCII characters (no spaces)",
            ));
        }
        self.change_unkeyed(
            "bootstrap_admin_key",
            "bootstrap",
            InMaintenance::Refused,
            |tx| {
                Box::pin(async move {
                    let existing = tx.list(Collection::ApiKeys, "").await?;
                    if !existing.records.is_empty() {
                        return Err(Error::NoAccess {
                            message:
                                "An API key already exists; create further keys with an admin key."
                                    .to_owned(),
                            permissions: vec![Permission::Admin.to_string()],
                        });
                    }
                    let (key, stored) = key_for(name, KeyAccess::Admin, None, secret);
                    tx.put(key.clone(), encode(&key, &stored)?)
                        .event(crate::store::NewEvent {
                            event_type: "api-token-created".to_owned(),
                            created_by: "bootstrap".to_owned(),
                            created_at: Utc::now(),
                            project: None,
                            feature_name: None,
                            environment: None,
                            data: Some(key_event_data(&key, &stored.info)?),
                            pre_data: None,
                            created_by_user_id: Some(crate::model::SYSTEM_USER_ID),
                            tags: None,
                        });
                    Ok(NewApiKey {
                        info: stored.info,
                        secret: secret.to_owned(),
                    })
                })
            },
        )
        .await
    }

    /// Create a key with `access` that never expires; see
    /// [`create_api_key_expiring`](Self::create_api_key_expiring).
    pub async fn create_api_key(
        &self,
        caller: &Caller,
        name: &str,
        access: KeyAccess,
    ) -> Result<NewApiKey> {
        self.create_api_key_expiring(caller, name, access, None)
            .await
    }

    /// Create a key with `access` (admin, explicit grants, or acting as a user) that stops
    /// working at `expires_at`, if given. Needs `ADMIN`. The returned secret is shown only
    /// this once.
    ///
    /// Refused with [`Error::Validation`], every problem listed:
    /// * `name`: blank, over 255 characters, or holding a control character;
    /// * `expiresAt`: not in the future (Unleash: "The expiry date cannot be in the past.");
    /// * `access.grants[i].project` / `.environment`: a grant limited to a project or an
    ///   environment that does not exist (`*` means all of them).
    ///
    /// A key acting as a user that does not exist → [`Error::NotFound`]. The records named
    /// (user, projects, environments) are preconditions of the commit, so a key is never
    /// created for something deleted meanwhile.
    pub async fn create_api_key_expiring(
        &self,
        caller: &Caller,
        name: &str,
        access: KeyAccess,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<NewApiKey> {
        let permit = self
            .permit(caller, &[Need::root(Permission::Admin)])
            .await?;
        self.create_key(permit, name, access, expires_at, None)
            .await
    }

    /// [`create_api_key_expiring`](Self::create_api_key_expiring) admitted by `permit`
    /// (made by the operation for what its keys need: `ADMIN`, a project's key permission,
    /// or a user's own key).
    /// When `may` is given, it decides on every key there is (read in the same transaction,
    /// so that no key created meanwhile escapes it) whether this one may be created.
    pub(super) async fn create_key(
        &self,
        permit: Permit,
        name: &str,
        access: KeyAccess,
        expires_at: Option<DateTime<Utc>>,
        may: Option<&KeyRule<'_>>,
    ) -> Result<NewApiKey> {
        let name_problem = display_name_problem(name, MAX_NAME);
        let name = name.trim();
        let (access, name_problem) = (&access, &name_problem);
        self.change("create_api_key", permit, |tx| {
            Box::pin(async move {
                let (named, paths) = check_new_key(name_problem.as_deref(), access, expires_at)?;
                if let Some(may) = may {
                    let existing: Vec<ApiKeyInfo> = all_keys(tx.reader())
                        .await?
                        .into_iter()
                        .map(|(_, _, info)| info)
                        .collect();
                    may(&existing)?;
                }
                let found = tx.reader().get_all(&named).await?;
                let mut problems = Vec::new();
                for ((key, path), record) in named.iter().zip(&paths).zip(&found) {
                    if record.is_some() {
                        continue;
                    }
                    match access {
                        KeyAccess::User { user_id } => {
                            return Err(Error::not_found(format!(
                                "There is no user with id {user_id}."
                            )));
                        }
                        _ => problems.push(ErrorDetail::at(
                            path.clone(),
                            format!(
                                "there is no {} named {}",
                                if key.collection == Collection::Projects {
                                    "project"
                                } else {
                                    "environment"
                                },
                                quoted(&key.id)
                            ),
                        )),
                    }
                }
                if !problems.is_empty() {
                    return Err(Error::validation("The API key is not valid.", problems));
                }
                let secret = match access {
                    KeyAccess::Client {
                        projects,
                        environment,
                        ..
                    } => new_client_secret(projects, environment)?,
                    _ => new_secret()?,
                };
                let (key, stored) = key_for(name, access.clone(), expires_at, &secret);
                // A fresh 256-bit secret cannot collide; the precondition makes that a checked
                // fact.
                tx.expect_revision(key.clone(), Revision::ABSENT)
                    .put(key.clone(), encode(&key, &stored)?)
                    .record(
                        "api-token-created",
                        None,
                        None,
                        None,
                        None,
                        Some(key_event_data(&key, &stored.info)?),
                    );
                Ok(NewApiKey {
                    info: stored.info,
                    secret,
                })
            })
        })
        .await
    }

    /// Create a key from a token request, as `POST /api/admin/api-tokens` does: the request's
    /// `type` and scope mean what [`token_access`] says, `name` is the key's name. Needs
    /// `ADMIN`. A request [`token_access`] refuses, or a bad name → [`Error::Validation`]
    /// naming the field; then as [`create_api_key_expiring`](Self::create_api_key_expiring).
    pub async fn create_token(
        &self,
        caller: &Caller,
        name: &str,
        request: &TokenRequest,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<NewApiKey> {
        let access = token_access(request)
            .map_err(|problems| Error::validation("The token is not valid.", problems))?;
        self.create_api_key_expiring(caller, name, access, expires_at)
            .await
    }

    /// Every key (without secrets), oldest first, expired ones included. Needs `ADMIN`.
    pub async fn api_keys(&self, caller: &Caller) -> Result<Vec<ApiKeyInfo>> {
        self.require(caller, &[Need::root(Permission::Admin)])
            .await?;
        let mut keys = all_keys(self.reader()).await?;
        keys.sort_by_key(|(_, _, info)| info.created_at);
        Ok(keys.into_iter().map(|(_, _, info)| info).collect())
    }

    /// Revoke the key with public id `id`: from the next call on it authenticates no more,
    /// and no write it authorised commits after this returns. Needs `ADMIN`. Unknown id (or
    /// one already revoked) → [`Error::NotFound`], with no event: of concurrent revocations
    /// of one key exactly one succeeds and writes the `api-token-deleted` event.
    pub async fn revoke_api_key(&self, caller: &Caller, id: uuid::Uuid) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::Admin)])
            .await?;
        self.revoke_key(permit, id, &|_| Ok(())).await
    }

    /// [`revoke_api_key`](Self::revoke_api_key) admitted by `permit`, of a key that `may`
    /// accepts (read in the same transaction: a project's key must still be the project's).
    pub(super) async fn revoke_key(
        &self,
        permit: Permit,
        id: uuid::Uuid,
        may: &(dyn Fn(&ApiKeyInfo) -> Result<()> + Sync),
    ) -> Result<()> {
        self.change("revoke_api_key", permit, |tx| {
            Box::pin(async move {
                let keys = all_keys(tx.reader()).await?;
                let Some((key, revision, info)) =
                    keys.into_iter().find(|(_, _, info)| info.id == id)
                else {
                    return Err(Error::not_found(format!(
                        "There is no API key with id {id}."
                    )));
                };
                may(&info)?;
                tx.expect_revision(key.clone(), revision)
                    .delete(key.clone())
                    .record(
                        "api-token-deleted",
                        None,
                        None,
                        None,
                        Some(key_event_data(&key, &info)?),
                        None,
                    );
                Ok(())
            })
        })
        .await
    }

    /// Who presents `secret` (the `Authorization` header's value). A missing, empty, unknown,
    /// revoked or expired secret fails with [`Error::AuthenticationRequired`].
    ///
    /// The record is looked up by the secret's SHA-256, then the verifier it holds is
    /// compared in constant time with the presented secret's (see [`crate::auth`]).
    pub async fn authenticate(&self, secret: Option<&str>) -> Result<Caller> {
        let secret = secret
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::AuthenticationRequired {
                message: "You must send an API key in the Authorization header.".to_owned(),
            })?;
        let caller = self.find_key(secret).await?.ok_or_else(unknown_key)?;
        if caller.info.is_expired_at(Utc::now()) {
            return Err(expired());
        }
        Ok(caller)
    }

    /// The deployment's first admin key, as a caller, without its secret: the oldest admin
    /// key that is neither revoked nor expired (the one
    /// [`bootstrap_admin_key`](Self::bootstrap_admin_key) created, while it lives); `None`
    /// when there is none.
    ///
    /// For the process that holds this `ToggleAdmin` to act on its own account where no
    /// secret is at hand: the `toggle-admin` server imports `--import-file` at start-up this
    /// way, on every start, without writing a key of its own (which would leave events at
    /// each start). What it does is recorded under that key's name, as if its secret had
    /// been presented, and the key's revocation stops it as it stops the key. It takes no
    /// secret, so it must never be reachable from a request; whoever holds the `ToggleAdmin`
    /// can write to its store anyway.
    pub async fn first_admin_caller(&self) -> Result<Option<Caller>> {
        let listing = self.store.list(Collection::ApiKeys, "").await?;
        let now = Utc::now();
        let mut first: Option<Caller> = None;
        for (hash, record) in listing.records {
            let key = api_key_key(&hash);
            let stored: StoredKey = decode(&key, &record.value)?;
            if stored.info.access != KeyAccess::Admin || stored.info.is_expired_at(now) {
                continue;
            }
            if first
                .as_ref()
                .is_none_or(|f| stored.info.created_at < f.info.created_at)
            {
                first = Some(Caller {
                    secret_hash: hash,
                    info: stored.info,
                    revision: record.revision,
                });
            }
        }
        Ok(first)
    }

    /// The public id of the key whose secret is `secret`, expired or not; `None` if there
    /// is none (unknown or revoked). For revoking a key by its secret, as Unleash allows.
    pub async fn api_key_id(&self, secret: &str) -> Result<Option<uuid::Uuid>> {
        Ok(self.find_key(secret).await?.map(|caller| caller.info.id))
    }

    /// [`authenticate`](Self::authenticate) on the key's record as a decision view shows it
    /// (see [`Store::decision_view`](crate::Store::decision_view)), for an operation that
    /// commits with the key's revision as a precondition (see
    /// [`require_as_authenticated`](Self::require_as_authenticated)): a key revoked or
    /// changed since that view's record was learnt makes the commit conflict, and its retry
    /// decides on a fresh read. Only an acceptance comes from it: a refusal is decided by
    /// `authenticate` itself, on the store's current state.
    pub(crate) async fn authenticate_to_commit(&self, secret: Option<&str>) -> Result<Caller> {
        if let Some(secret) = secret.map(str::trim).filter(|s| !s.is_empty())
            && let Ok(view) = self.store.decision_view().await
            && let Ok(Some(caller)) = self.find_key_in(view.as_ref(), secret).await
            && !caller.info.is_expired_at(Utc::now())
        {
            return Ok(caller);
        }
        self.authenticate(secret).await
    }

    /// The key whose secret is `secret`, verified, whatever its expiry.
    async fn find_key(&self, secret: &str) -> Result<Option<Caller>> {
        let hash = hash_secret(secret);
        let record = self.store.get(&api_key_key(&hash)).await?;
        verified_key(secret, hash, record)
    }

    /// [`find_key`](Self::find_key) in `view`.
    async fn find_key_in(&self, view: &dyn ReadView, secret: &str) -> Result<Option<Caller>> {
        let hash = hash_secret(secret);
        let record = view.get(&api_key_key(&hash)).await?;
        verified_key(secret, hash, record)
    }
}

/// Every key with its record's key and revision, read through `reader`.
pub(super) async fn all_keys(reader: Reader<'_>) -> Result<Vec<(Key, Revision, ApiKeyInfo)>> {
    let listing = reader.list(Collection::ApiKeys, "").await?;
    listing
        .records
        .into_iter()
        .map(|(id, record)| {
            let key = api_key_key(&id);
            let info = decode(&key, &record.value)?;
            Ok((key, record.revision, info))
        })
        .collect()
}

/// `name` trimmed, if it is a valid key name (see
/// [`create_api_key_expiring`](ToggleAdmin::create_api_key_expiring)).
fn key_name(name: &str) -> Result<&str> {
    if let Some(problem) = display_name_problem(name, MAX_NAME) {
        return Err(Error::invalid_at(
            "name",
            format!("the key's name {problem}"),
        ));
    }
    Ok(name.trim())
}

fn key_for(
    name: &str,
    access: KeyAccess,
    expires_at: Option<DateTime<Utc>>,
    secret: &str,
) -> (Key, StoredKey) {
    let key = api_key_key(&hash_secret(secret));
    let info = ApiKeyInfo {
        id: uuid::Uuid::new_v4(),
        name: name.to_owned(),
        access,
        created_at: Utc::now(),
        expires_at,
    };
    let stored = StoredKey {
        info,
        verifier: Some(verifier_of(secret)),
    };
    (key, stored)
}

/// The key record `value` (at `key`) with its expiry set to `expires_at`, the rest (its
/// verifier included) as it was.
pub(super) fn with_expiry(key: &Key, value: &Json, expires_at: DateTime<Utc>) -> Result<Json> {
    let mut stored: StoredKey = decode(key, value)?;
    stored.info.expires_at = Some(expires_at);
    encode(key, &stored)
}

/// The event data of a key: the key as the key listings show it (Unleash's token without
/// its secret), never its secret or digests.
pub(super) fn key_event_data(key: &Key, info: &ApiKeyInfo) -> Result<Json> {
    encode(key, &crate::model::ApiKeyView::new(info.clone(), None))
}

/// The key whose secret is `secret` (its hash `hash`) from its `record`, if there is one and
/// it was made for this very secret.
fn verified_key(secret: &str, hash: String, record: Option<Versioned>) -> Result<Option<Caller>> {
    let key = api_key_key(&hash);
    let Some(record) = record else {
        return Ok(None);
    };
    let stored: StoredKey = decode(&key, &record.value)?;
    // The lookup alone would trust the store to have matched the id exactly; the
    // verifier is a second, independent digest of the secret that only the record made
    // for this very secret holds.
    if let Some(verifier) = &stored.verifier
        && !constant_time_eq(verifier, &verifier_of(secret))
    {
        return Ok(None);
    }
    Ok(Some(Caller {
        secret_hash: hash,
        info: stored.info,
        revision: record.revision,
    }))
}
