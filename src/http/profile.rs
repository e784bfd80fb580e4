//! The caller itself over HTTP: `/api/admin/user` (who it is and what it may do),
//! `/api/admin/user/profile`, `/api/admin/user/roles` (the roles it holds), and a user's own keys, `/api/admin/user/tokens` (Unleash's
//! personal access tokens: listed without secrets, the secret shown once at creation).

use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, HeaderValue};
use axum::response::IntoResponse;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, LaterBody, Params, QueryParams};
use super::keys::expiry;
use crate::ToggleAdmin;
use crate::error::{Error, ErrorDetail};
use crate::model::{
    CallerRoles, Me, PersonalApiKeyBody, PersonalApiKeyView, PersonalApiKeys, Profile, named_key,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(me))
        .routes(routes!(profile))
        .routes(routes!(roles))
        .routes(routes!(list_tokens, create_token))
        .routes(routes!(revoke_token))
}

/// `{id}` of a user's own key: its number, or its id (a UUID).
#[derive(utoipa::IntoParams)]
#[into_params(names("id"), parameter_in = Path)]
#[allow(dead_code)]
struct OwnKeyPath(String);

/// Who the caller is and what it may do; not cached (`Cache-Control: no-store`, as Unleash).
#[utoipa::path(
    get,
    path = "/api/admin/user",
    tag = "access",
    responses(
        (status = 200, description = "The caller, without secrets, and its permissions.", body = Me),
        super::openapi::Errors
    )
)]
async fn me(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<impl IntoResponse> {
    let me = admin.me(&caller).await?;
    Ok((
        [(CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        Json::ok(me),
    ))
}

#[utoipa::path(
    get,
    path = "/api/admin/user/profile",
    tag = "access",
    responses(
        (status = 200, description = "The caller's root role and projects.", body = Profile),
        super::openapi::Errors
    )
)]
async fn profile(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Profile>> {
    Ok(Json::ok(admin.profile(&caller).await?))
}

/// `?projectId=`: only the roles held in that project (after the root role). Other parameters
/// are ignored, as Unleash ignores them (its document allows no 400 here).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
struct RolesQuery {
    /// The project whose roles to list; every project's when absent or empty.
    #[param(rename = "projectId")]
    project_id: Option<String>,
}

/// The roles the caller holds: its root role (`project: null`), then its project roles, in
/// the project asked about or in every project.
#[utoipa::path(
    get,
    path = "/api/admin/user/roles",
    tag = "access",
    params(RolesQuery),
    responses(
        (status = 200, description = "`{version: 1, roles: [{id, type, name, description?, project}]}`.", body = CallerRoles),
        super::openapi::Errors
    )
)]
async fn roles(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(query): QueryParams<Vec<(String, String)>>,
) -> HttpResult<Json<CallerRoles>> {
    // The first `projectId` counts.
    let project = query
        .iter()
        .find(|(name, _)| name == "projectId")
        .map(|(_, value)| value.as_str())
        .filter(|p| !p.is_empty());
    let roles = admin.caller_roles(&caller, project).await?;
    Ok(Json::ok(CallerRoles { version: 1, roles }))
}

#[utoipa::path(
    get,
    path = "/api/admin/user/tokens",
    tag = "api-tokens",
    responses(
        (status = 200, description = "The keys acting as the caller's user, without secrets.", body = PersonalApiKeys),
        super::openapi::Errors
    )
)]
async fn list_tokens(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<PersonalApiKeys>> {
    let (user_id, keys) = admin.personal_api_keys(&caller).await?;
    Ok(Json::ok(PersonalApiKeys {
        pats: keys
            .into_iter()
            .map(|k| PersonalApiKeyView::new(k, user_id, None))
            .collect(),
    }))
}

/// Create a key acting as the caller's user, `{description, expiresAt}` (both required, as
/// Unleash's `createPatSchema`).
#[utoipa::path(
    post,
    path = "/api/admin/user/tokens",
    tag = "api-tokens",
    request_body(content = PersonalApiKeyBody, description = "The key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = PersonalApiKeyView),
        super::openapi::BodyErrors
    )
)]
async fn create_token(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    body: LaterBody,
) -> HttpResult<Json<PersonalApiKeyView>> {
    let permit = admin.permit(&caller, &[]).await?;
    let body: PersonalApiKeyBody = body.object().await?;
    let mut problems = Vec::new();
    let expires_at = expiry(body.expires_at.as_ref(), &mut problems);
    if expires_at.is_none() && problems.is_empty() {
        problems.push(ErrorDetail::at("/expiresAt", "expiresAt is required"));
    }
    let Some(expires_at) = expires_at.filter(|_| problems.is_empty()) else {
        return Err(Error::validation("The token is not valid.", problems).into());
    };
    let (user_id, key) = admin
        .create_personal_api_key(permit, &body.description, expires_at)
        .await?;
    Ok(Json::created(PersonalApiKeyView::new(
        key.info,
        user_id,
        Some(key.secret),
    )))
}

#[utoipa::path(
    delete,
    path = "/api/admin/user/tokens/{id}",
    tag = "api-tokens",
    params(OwnKeyPath),
    responses(
        (status = 200, description = "Revoked; no body."),
        super::openapi::Errors
    )
)]
async fn revoke_token(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(token): Params<String>,
) -> HttpResult<StatusCode> {
    let id = match uuid::Uuid::parse_str(&token) {
        Ok(id) => id,
        Err(_) => {
            let (user_id, keys) = admin.personal_api_keys(&caller).await?;
            named_key(&keys, &token).map(|k| k.id).ok_or_else(|| {
                Error::not_found(format!("User {user_id} has no token with id {token}."))
            })?
        }
    };
    admin.revoke_personal_api_key(&caller, id).await?;
    Ok(StatusCode::OK)
}
