//! A project's API keys (`/api/admin/projects/{projectId}/api-tokens`): the client and
//! frontend keys for that project alone, which the project's members manage themselves.

use chrono::{DateTime, Utc};

use super::key_requests::token_access;
use super::keys::all_keys;
use super::records::{decode_opt, project_key, project_not_found};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::{Caller, NewApiKey};
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{ApiKeyInfo, ApiKeyRequest, KeyAccess, Permission, Project};

/// Whether `info` is a client or frontend key that sees `project` (named, not through `*`).
fn sees_project(info: &ApiKeyInfo, project: &str) -> bool {
    matches!(&info.access, KeyAccess::Client { projects, .. } if projects.iter().any(|p| p == project))
}

/// Whether `info` is a client or frontend key for `project` alone.
fn only_for(info: &ApiKeyInfo, project: &str) -> bool {
    matches!(&info.access, KeyAccess::Client { projects, .. } if only_one(projects, project))
}

/// Whether `projects` is `project` alone.
fn only_one(projects: &[String], project: &str) -> bool {
    matches!(projects, [only] if only == project)
}

/// The 400 of an admin key asked of a project.
fn admin_key_refused() -> Error {
    Error::invalid_at(
        "/type",
        "a project's key is a client, backend or frontend key, not an admin key",
    )
}

impl ToggleAdmin {
    /// The client and frontend keys that name `project` (`GET
    /// /api/admin/projects/{projectId}/api-tokens`), oldest first, **never with their
    /// secrets** (Unleash shows them; here a secret is shown only when its key is created).
    /// Needs `READ_PROJECT_API_TOKEN` in the project (Owners, Members and Editors have it). An
    /// unknown project → [`Error::NotFound`]. Keys for every project (`*`) and admin keys are
    /// not the project's and are not listed (Unleash lists every key to an admin token).
    pub async fn project_api_keys(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<Vec<ApiKeyInfo>> {
        self.permit(
            caller,
            &[Need::project(Permission::ReadProjectApiToken, project)],
        )
        .await?;
        let key = project_key(project);
        decode_opt::<Project>(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let mut keys: Vec<ApiKeyInfo> = all_keys(self.reader())
            .await?
            .into_iter()
            .map(|(_, _, info)| info)
            .filter(|info| sees_project(info, project))
            .collect();
        keys.sort_by_key(|info| info.created_at);
        Ok(keys)
    }

    /// Create a client or frontend key for `project` alone (`POST
    /// /api/admin/projects/{projectId}/api-tokens`, Unleash's `createApiTokenSchema`). Needs
    /// `CREATE_PROJECT_API_TOKEN` in the project. The secret is returned only this once.
    ///
    /// The request's `project`/`projects` may be left out (the key is then for `project`) or
    /// must name exactly `project`: a key for another project, for several, or for every
    /// project (`*`) → [`Error::Validation`] at `/projects` (as Unleash, "Project level tokens
    /// can only be created for one project"); an admin key → [`Error::Validation`] at `/type`.
    /// Then as [`create_api_key_expiring`](Self::create_api_key_expiring): name, expiry,
    /// environment; an unknown project → [`Error::NotFound`].
    pub async fn create_project_api_key<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        name: &str,
        request: &ApiKeyRequest,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<NewApiKey> {
        let permit = self
            .admit(
                authority.into(),
                &[Need::project(Permission::CreateProjectApiToken, project)],
            )
            .await?;
        let key = project_key(project);
        decode_opt::<Project>(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        if request.token_type.eq_ignore_ascii_case("admin") {
            return Err(admin_key_refused());
        }
        let mut request = request.clone();
        if request.project.is_none() && request.projects.as_ref().is_none_or(Vec::is_empty) {
            request.project = Some(project.to_owned());
        }
        let access = token_access(&request)
            .map_err(|problems| Error::validation("The token is not valid.", problems))?;
        match &access {
            KeyAccess::Client { projects, .. } if only_one(projects, project) => {}
            KeyAccess::Client { projects, .. } => {
                return Err(Error::validation(
                    "Project level tokens can only be created for one project.",
                    vec![ErrorDetail::at(
                        "/projects",
                        format!(
                            "a key of project \"{project}\" is for that project alone, not for {}",
                            projects.join(", ")
                        ),
                    )],
                ));
            }
            _ => return Err(admin_key_refused()),
        }
        self.create_key(permit, name, access, expires_at, None)
            .await
    }

    /// Revoke the key `id` of `project` (`DELETE
    /// /api/admin/projects/{projectId}/api-tokens/{token}`): from the next call on it
    /// authenticates no more. Needs `DELETE_PROJECT_API_TOKEN` in the project. An unknown
    /// key, or one that does not name the project → [`Error::NotFound`]; a key that names the
    /// project among others (or an admin key) is not the project's alone →
    /// [`Error::Validation`] (Unleash answers 400 with no body). One `api-token-deleted`
    /// event.
    pub async fn revoke_project_api_key(
        &self,
        caller: &Caller,
        project: &str,
        id: uuid::Uuid,
    ) -> Result<()> {
        let permit = self
            .permit(
                caller,
                &[Need::project(Permission::DeleteProjectApiToken, project)],
            )
            .await?;
        let may = |info: &ApiKeyInfo| {
            if only_for(info, project) {
                Ok(())
            } else if sees_project(info, project) {
                Err(Error::invalid_at(
                    "/token",
                    format!(
                        "the key {id} is for other projects too; revoke it at /api/admin/api-tokens"
                    ),
                ))
            } else {
                Err(Error::not_found(format!(
                    "Project \"{project}\" has no API key with id {id}."
                )))
            }
        };
        self.revoke_key(permit, id, &may).await
    }
}
