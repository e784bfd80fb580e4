//! A project's API keys over HTTP: `/api/admin/projects/{projectId}/api-tokens`, the client
//! and frontend keys for that project alone. Listings never show a secret (Unleash's do);
//! the creation response shows it once.

use axum::extract::State;
use axum::http::StatusCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params};
use super::keys::{ApiKeys, expiry, key_id};
use crate::ToggleAdmin;
use crate::admin::Need;
use crate::error::{Error, ErrorDetail};
use crate::model::{ApiKeyBody, ApiKeyView, Permission};

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(revoke))
}

/// `{projectId}/api-tokens/{token}`.
#[derive(utoipa::IntoParams)]
#[into_params(names("projectId", "token"), parameter_in = Path)]
#[allow(dead_code)]
struct ProjectKeyPath(String, String);

#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/api-tokens",
    tag = "api-tokens",
    params(super::openapi::ProjectPath),
    responses(
        (status = 200, description = "The project's client and frontend keys, without secrets.", body = ApiKeys),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
) -> HttpResult<Json<ApiKeys>> {
    let keys = admin.project_api_keys(&caller, &project).await?;
    Ok(Json::ok(ApiKeys {
        tokens: keys.into_iter().map(|k| ApiKeyView::new(k, None)).collect(),
    }))
}

/// Create a client or frontend key for this project alone; its secret is in the response
/// only.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/api-tokens",
    tag = "api-tokens",
    params(super::openapi::ProjectPath),
    request_body(content = ApiKeyBody, description = "The key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = ApiKeyView),
        super::openapi::BodyErrors
    )
)]
async fn create(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(project): Params<String>,
    body: LaterBody,
) -> HttpResult<Json<ApiKeyView>> {
    let permit = admin
        .permit(
            &caller,
            &[Need::project(Permission::CreateProjectApiToken, &project)],
        )
        .await?;
    let body: ApiKeyBody = body.object().await?;
    let mut problems = Vec::new();
    let expires_at = expiry(body.expires_at.as_ref(), &mut problems);
    let name = match body.name.clone().or_else(|| body.username.clone()) {
        Some(name) => {
            if let Some(problem) = crate::names::display_name_problem(&name, crate::names::MAX_NAME)
            {
                problems.push(ErrorDetail::at(
                    "/tokenName",
                    format!("the token name {problem}"),
                ));
            }
            name
        }
        None => {
            problems.push(ErrorDetail::at("/tokenName", "tokenName is required"));
            String::new()
        }
    };
    if !problems.is_empty() {
        return Err(Error::validation("The token is not valid.", problems).into());
    }
    let key = admin
        .create_project_api_key(permit, &project, &name, &body.request(), expires_at)
        .await?;
    Ok(Json::created(ApiKeyView::new(key.info, Some(key.secret))))
}

/// Revoke a key of this project alone, by id or by secret.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/api-tokens/{token}",
    tag = "api-tokens",
    params(ProjectKeyPath),
    responses(
        (status = 200, description = "Revoked; no body."),
        super::openapi::Errors
    )
)]
async fn revoke(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((project, token)): Params<(String, String)>,
) -> HttpResult<StatusCode> {
    let id = key_id(&admin, &token).await?;
    admin.revoke_project_api_key(&caller, &project, id).await?;
    Ok(StatusCode::OK)
}
