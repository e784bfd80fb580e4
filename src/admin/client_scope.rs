//! What a key sees of the client API: its projects and its environment, read afresh from
//! the key's record so that a revoked or expired key is refused at once.

use chrono::Utc;

use super::permit::expired;
use super::records::{api_key_key, decode};
use super::{Authority, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{ApiKeyInfo, KeyAccess};
use crate::store::{Key, Revision};

/// The environment a key that is not a client key reads the client API in, as in Unleash.
pub const DEFAULT_CLIENT_ENVIRONMENT: &str = "default";

/// What a key sees of the client API.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Scope {
    /// `None` for every project.
    pub(super) projects: Option<Vec<String>>,
    pub(super) environment: String,
}

impl ToggleAdmin {
    /// The projects and environment `caller` reads the client API in; the key is read
    /// afresh, so a revoked or expired key is refused at once.
    pub(super) async fn client_scope(&self, caller: &Caller) -> Result<Scope> {
        Ok(self.client_scope_and_basis(caller).await?.0)
    }

    /// [`client_scope`](Self::client_scope) and the key's record with its revision read.
    pub(super) async fn client_scope_and_basis(
        &self,
        caller: &Caller,
    ) -> Result<(Scope, (Key, Revision))> {
        let key = api_key_key(&caller.secret_hash);
        let Some(record) = self.store.get(&key).await? else {
            return Err(Error::AuthenticationRequired {
                message: "The API key is unknown or was revoked.".to_owned(),
            });
        };
        let decoded: ApiKeyInfo;
        let info = if record.revision == caller.revision {
            &caller.info
        } else {
            decoded = decode(&key, &record.value)?;
            &decoded
        };
        Ok((scope_of(info)?, (key, record.revision)))
    }

    /// The scope of the SDK key `permit` admitted, as its authentication read it (no second
    /// read of the key in the same request); of a caller, read afresh.
    pub(super) async fn sdk_scope(&self, authority: Authority<'_>) -> Result<(Caller, Scope)> {
        match authority {
            Authority::Permit(permit) if ToggleAdmin::is_sdk(&permit) => {
                let scope = scope_of(&permit.caller().info)?;
                Ok((permit.caller().clone(), scope))
            }
            Authority::Permit(permit) => {
                let scope = self.client_scope(permit.caller()).await?;
                Ok((permit.caller().clone(), scope))
            }
            Authority::Caller(caller) => Ok((caller.clone(), self.client_scope(caller).await?)),
        }
    }
}

/// The scope a key's description gives: its projects and environment (an admin key reads
/// everything in the default environment). An expired key has none.
fn scope_of(info: &ApiKeyInfo) -> Result<Scope> {
    if info.is_expired_at(Utc::now()) {
        return Err(expired());
    }
    let scope = match &info.access {
        KeyAccess::Client {
            projects,
            environment,
            ..
        } => Scope {
            projects: (!projects.iter().any(|p| p == "*")).then(|| projects.clone()),
            environment: environment.clone(),
        },
        _ => Scope {
            projects: None,
            environment: DEFAULT_CLIENT_ENVIRONMENT.to_owned(),
        },
    };
    Ok(scope)
}

/// The environment `caller` reports in, and its key's record with the revision read (a
/// precondition of the writes it makes).
pub(super) async fn client_key_basis(
    admin: &ToggleAdmin,
    caller: &Caller,
) -> Result<(String, (Key, Revision))> {
    let (scope, basis) = admin.client_scope_and_basis(caller).await?;
    Ok((scope.environment, basis))
}
