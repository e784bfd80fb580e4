//! The other operations on `/api/admin/api-tokens/{token}`: the keys of one name, and
//! changing when a key expires.

use chrono::{DateTime, Utc};

use super::keys::{all_keys, key_event_data, with_expiry};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{ApiKeyInfo, Permission};

impl ToggleAdmin {
    /// The keys named `name` (`GET /api/admin/api-tokens/{name}`), oldest first, without
    /// secrets. Needs `ADMIN`. No key of that name → an empty list.
    pub async fn api_keys_named(&self, caller: &Caller, name: &str) -> Result<Vec<ApiKeyInfo>> {
        self.permit(caller, &[Need::root(Permission::Admin)])
            .await?;
        let mut keys: Vec<ApiKeyInfo> = all_keys(self.reader())
            .await?
            .into_iter()
            .map(|(_, _, info)| info)
            .filter(|info| info.name == name)
            .collect();
        keys.sort_by_key(|info| info.created_at);
        Ok(keys)
    }

    /// Make the key `id` expire at `expires_at` (`PUT /api/admin/api-tokens/{token}`, body
    /// `{expiresAt}`). Needs `ADMIN`. As in Unleash the date may be in the past: the key is
    /// then refused from the next call on (401), and no write it authorised commits after this
    /// returns (its record is a precondition of every such commit). Returns the key as
    /// changed; one `api-token-updated` event with the key before and after (never its
    /// secret). An unknown (or revoked) key → [`Error::NotFound`] (Unleash answers 200 and
    /// changes nothing). The same date again changes nothing and writes no event.
    pub async fn set_api_key_expiry<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        id: uuid::Uuid,
        expires_at: DateTime<Utc>,
    ) -> Result<ApiKeyInfo> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::Admin)])
            .await?;
        self.change("set_api_key_expiry", permit, |tx| {
            Box::pin(async move {
                let keys = all_keys(tx.reader()).await?;
                let Some((key, revision, info)) =
                    keys.into_iter().find(|(_, _, info)| info.id == id)
                else {
                    return Err(Error::not_found(format!(
                        "There is no API key with id {id}."
                    )));
                };
                if info.expires_at == Some(expires_at) {
                    return Ok(info);
                }
                let Some(record) = tx.get(&key).await? else {
                    return Err(Error::not_found(format!(
                        "There is no API key with id {id}."
                    )));
                };
                let stored = with_expiry(&key, &record.value, expires_at)?;
                let updated = ApiKeyInfo {
                    expires_at: Some(expires_at),
                    ..info.clone()
                };
                tx.expect_revision(key.clone(), revision)
                    .put(key.clone(), stored)
                    .record(
                        "api-token-updated",
                        None,
                        None,
                        None,
                        Some(key_event_data(&key, &info)?),
                        Some(key_event_data(&key, &updated)?),
                    );
                Ok(updated)
            })
        })
        .await
    }
}
