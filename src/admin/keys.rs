//! API keys: bootstrap, create, list, revoke, authenticate.

use chrono::Utc;

use super::records::{decode, encode};
use super::{Check, ToggleAdmin, event};
use crate::auth::{
    ApiKeyInfo, Caller, KeyAccess, NewApiKey, Permission, constant_time_eq, hash_secret, new_secret,
};
use crate::error::{Error, Result};
use crate::store::{ChangeSet, Collection, Json, Key, Revision};

impl ToggleAdmin {
    /// Create the first admin key of an empty deployment. No caller is needed, so this works
    /// only while the store holds no API key at all; afterwards it fails with
    /// [`Error::NoAccess`] (use an admin key and [`create_api_key`](Self::create_api_key)).
    ///
    /// The returned secret is shown only this once.
    pub async fn bootstrap_admin_key(&self, name: &str) -> Result<NewApiKey> {
        self.bootstrap_admin_key_with_secret(name, &new_secret())
            .await
    }

    /// [`bootstrap_admin_key`](Self::bootstrap_admin_key) with a secret of the caller's
    /// choosing (e.g. from a deployment's secret store), so that the first admin key is known
    /// in advance. The secret must be 16 to 512 visible ASCII characters (it travels in the
    /// `Authorization` header); otherwise [`Error::Validation`].
    pub async fn bootstrap_admin_key_with_secret(
        &self,
        name: &str,
        secret: &str,
    ) -> Result<NewApiKey> {
        let name = key_name(name)?;
        if !(16..=512).contains(&secret.len()) || !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::invalid_at(
                "secret",
                "a key's secret must be 16 to 512 visible ASCII characters (no spaces)",
            ));
        }
        retrying!("bootstrap_admin_key", async {
            let existing = self.store.list(Collection::ApiKeys, "").await?;
            if !existing.records.is_empty() {
                return Err(Error::NoAccess {
                    message: "An API key already exists; create further keys with an admin key."
                        .to_owned(),
                    permissions: vec![Permission::Admin.to_string()],
                });
            }
            let (key, info) = key_for(name, KeyAccess::Admin, secret);
            let mut changes = ChangeSet::new();
            changes
                .expect_collection(Collection::ApiKeys, existing.revision)
                .put(key.clone(), encode(&key, &info)?)
                .event(crate::store::NewEvent {
                    event_type: "api-token-created".to_owned(),
                    created_by: "bootstrap".to_owned(),
                    created_at: Utc::now(),
                    project: None,
                    feature_name: None,
                    environment: None,
                    data: Some(key_event_data(&info)),
                    pre_data: None,
                });
            self.store.commit(changes).await?;
            Ok(NewApiKey {
                info,
                secret: secret.to_owned(),
            })
        })
    }

    /// Create a key with `access`: admin, explicit grants, or acting as a user. Needs
    /// `ADMIN`. The returned secret is shown only this once.
    pub async fn create_api_key(
        &self,
        caller: &Caller,
        name: &str,
        access: KeyAccess,
    ) -> Result<NewApiKey> {
        self.require(caller, &[Check::root(Permission::Admin)])
            .await?;
        let name = key_name(name)?;
        if let KeyAccess::User { user_id } = &access {
            let user = Key::new(Collection::Users, user_id.to_string());
            if self.store.get(&user).await?.is_none() {
                return Err(Error::not_found(format!(
                    "There is no user with id {user_id}."
                )));
            }
        }
        let (key, info, secret) = fresh_key(name, access);
        let mut changes = ChangeSet::new();
        // A fresh 256-bit secret cannot collide; the precondition makes that a checked fact.
        changes
            .expect_revision(key.clone(), Revision::ABSENT)
            .put(key.clone(), encode(&key, &info)?)
            .event(event(
                caller,
                "api-token-created",
                None,
                None,
                None,
                None,
                Some(key_event_data(&info)),
            ));
        self.store.commit(changes).await?;
        Ok(NewApiKey { info, secret })
    }

    /// Every key (without secrets), oldest first. Needs `ADMIN`.
    pub async fn api_keys(&self, caller: &Caller) -> Result<Vec<ApiKeyInfo>> {
        self.require(caller, &[Check::root(Permission::Admin)])
            .await?;
        let mut keys = self.all_keys().await?;
        keys.sort_by_key(|(_, info)| info.created_at);
        Ok(keys.into_iter().map(|(_, info)| info).collect())
    }

    /// Revoke the key with public id `id`: from the next call on it authenticates no more.
    /// Needs `ADMIN`. Unknown id → [`Error::NotFound`].
    pub async fn revoke_api_key(&self, caller: &Caller, id: uuid::Uuid) -> Result<()> {
        self.require(caller, &[Check::root(Permission::Admin)])
            .await?;
        retrying!("revoke_api_key", async {
            let keys = self.all_keys().await?;
            let Some((key, info)) = keys.into_iter().find(|(_, info)| info.id == id) else {
                return Err(Error::not_found(format!(
                    "There is no API key with id {id}."
                )));
            };
            let mut changes = ChangeSet::new();
            changes.delete(key).event(event(
                caller,
                "api-token-deleted",
                None,
                None,
                None,
                Some(key_event_data(&info)),
                None,
            ));
            self.store.commit(changes).await?;
            Ok(())
        })
    }

    /// Who presents `secret` (the `Authorization` header's value). A missing, empty or
    /// unknown secret fails with [`Error::AuthenticationRequired`].
    pub async fn authenticate(&self, secret: Option<&str>) -> Result<Caller> {
        let secret = secret
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::AuthenticationRequired {
                message: "You must send an API key in the Authorization header.".to_owned(),
            })?;
        let hash = hash_secret(secret);
        let key = Key::new(Collection::ApiKeys, hash.clone());
        let record = self.store.get(&key).await?;
        match record {
            // The store looked the record up by hash; comparing the hash again in constant
            // time guards against a backend whose lookup is not exact (e.g. collations).
            Some(record) if constant_time_eq(&key.id, &hash) => Ok(Caller {
                secret_hash: hash,
                info: decode(&key, &record.value)?,
                revision: record.revision,
            }),
            _ => Err(Error::AuthenticationRequired {
                message: "The API key is unknown or was revoked.".to_owned(),
            }),
        }
    }

    async fn all_keys(&self) -> Result<Vec<(Key, ApiKeyInfo)>> {
        let listing = self.store.list(Collection::ApiKeys, "").await?;
        listing
            .records
            .into_iter()
            .map(|(id, record)| {
                let key = Key::new(Collection::ApiKeys, id);
                let info = decode(&key, &record.value)?;
                Ok((key, info))
            })
            .collect()
    }
}

fn key_name(name: &str) -> Result<&str> {
    let trimmed = name.trim();
    if trimmed.is_empty() || trimmed.len() > 100 {
        return Err(Error::invalid_at(
            "name",
            "a key's name must be 1 to 100 characters",
        ));
    }
    Ok(trimmed)
}

fn fresh_key(name: &str, access: KeyAccess) -> (Key, ApiKeyInfo, String) {
    let secret = new_secret();
    let (key, info) = key_for(name, access, &secret);
    (key, info, secret)
}

fn key_for(name: &str, access: KeyAccess, secret: &str) -> (Key, ApiKeyInfo) {
    let key = Key::new(Collection::ApiKeys, hash_secret(secret));
    let info = ApiKeyInfo {
        id: uuid::Uuid::new_v4(),
        name: name.to_owned(),
        access,
        created_at: Utc::now(),
    };
    (key, info)
}

fn key_event_data(info: &ApiKeyInfo) -> Json {
    Json::of(&serde_json::json!({ "id": info.id, "name": info.name, "access": info.access }))
}
