//! API keys: `/api/admin/api-tokens` (admin keys) and `/api/admin/user-admin/{id}/tokens`
//! (keys that act as a user).
//!
//! `/api/admin/api-tokens` creates admin keys and client keys (`type: "client"` or
//! `"backend"`, for `projects`/`project` in one `environment`, Unleash's `default` if none
//! is named); a client key's secret has Unleash's shape `project:environment.random` (`*`
//! for every project, `[]` for several). Frontend tokens (`type: "frontend"`) have the same
//! shape and scope; they may call the frontend API (`/api/frontend*`) only. The secret is in the creation
//! response only; the store keeps digests of it (see [`crate::auth`]).
//!
//! `expiresAt` (an RFC 3339 date-time, or `null`) is honoured at both creation routes: a
//! date not in the future is a 400 (as in Unleash), and from that instant on the key is
//! refused with 401. Listings show each key as it is: its type, scope and expiry.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, LaterBody, Params};
use crate::admin::{Need, token_access};
use crate::auth::NewApiKey;
use crate::error::{Error, ErrorDetail};
use crate::model::{
    ApiKeyBody, ApiKeyExpiryBody, ApiKeyInfo, ApiKeyView, KeyAccess, Permission,
    PersonalApiKeyBody, PersonalApiKeyView, named_key,
};
use crate::{Caller, ToggleAdmin};

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list, create_admin_key))
        .routes(routes!(by_name, update_expiry, revoke))
        .routes(routes!(create_user_key))
        .routes(routes!(revoke_user_key))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Tokens)]
pub(super) struct ApiKeys {
    pub(super) tokens: Vec<ApiKeyView>,
}

#[utoipa::path(
    get,
    path = "/api/admin/api-tokens",
    tag = "api-tokens",
    responses(
        (status = 200, description = "Every API key, without secrets.", body = ApiKeys),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<ApiKeys>> {
    let keys = admin.api_keys(&caller).await?;
    Ok(Json::ok(ApiKeys {
        tokens: keys.into_iter().map(|k| ApiKeyView::new(k, None)).collect(),
    }))
}

#[utoipa::path(
    post,
    path = "/api/admin/api-tokens",
    tag = "api-tokens",
    request_body(content = ApiKeyBody, description = "The admin key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = ApiKeyView),
        super::openapi::BodyErrors
    )
)]
async fn create_admin_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<ApiKeyBody>,
) -> HttpResult<Json<ApiKeyView>> {
    let mut problems = Vec::new();
    let access = token_access(&body.request())
        .map_err(|found| problems.extend(found))
        .ok();
    let expires_at = expiry(body.expires_at.as_ref(), &mut problems);
    let Some(name) = body.name.or(body.username) else {
        problems.push(ErrorDetail::at("/tokenName", "tokenName is required"));
        return Err(Error::validation("The token is not valid.", problems).into());
    };
    if let Some(problem) = crate::names::display_name_problem(&name, crate::names::MAX_NAME) {
        problems.push(ErrorDetail::at(
            "/tokenName",
            format!("the token name {problem}"),
        ));
    }
    if !problems.is_empty() {
        return Err(Error::validation("The token is not valid.", problems).into());
    }
    let Some(access) = access else {
        return Err(Error::validation("The token is not valid.", problems).into());
    };
    let key = admin
        .create_api_key_expiring(&caller, &name, access, expires_at)
        .await?;
    Ok(Json::created(created_view(key)))
}

fn created_view(key: NewApiKey) -> ApiKeyView {
    ApiKeyView::new(key.info, Some(key.secret))
}

/// The `expiresAt` of a creation body: absent or `null` for never, else an RFC 3339
/// date-time (`2030-01-01T00:00:00Z`, `2030-01-01T01:00:00+01:00`). Anything else is a
/// problem at `/expiresAt`. Whether it is in the future is the library's check.
pub(super) fn expiry(
    value: Option<&Value>,
    problems: &mut Vec<ErrorDetail>,
) -> Option<DateTime<Utc>> {
    match value {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => match DateTime::parse_from_rfc3339(text) {
            Ok(at) => Some(at.with_timezone(&Utc)),
            Err(e) => {
                problems.push(ErrorDetail::at(
                    "/expiresAt",
                    format!("expiresAt must be an RFC 3339 date-time: {e}"),
                ));
                None
            }
        },
        Some(_) => {
            problems.push(ErrorDetail::at(
                "/expiresAt",
                "expiresAt must be an RFC 3339 date-time string or null",
            ));
            None
        }
    }
}

/// Revoke by the key's id, or by its secret as Unleash does.
#[utoipa::path(
    delete,
    path = "/api/admin/api-tokens/{token}",
    tag = "api-tokens",
    params(super::openapi::ApiKeyPath),
    responses(
        (status = 200, description = "Revoked; no body."),
        super::openapi::Errors
    )
)]
async fn revoke(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(token): Params<String>,
) -> HttpResult<StatusCode> {
    let id = key_id(&admin, &token).await?;
    admin.revoke_api_key(&caller, id).await?;
    Ok(StatusCode::OK)
}

/// The id of the key `token` names: its id, or its secret as Unleash names keys (expired keys
/// too: they can still be revoked or given a new expiry). Neither → 404.
pub(super) async fn key_id(admin: &ToggleAdmin, token: &str) -> crate::Result<uuid::Uuid> {
    if let Ok(id) = uuid::Uuid::parse_str(token) {
        return Ok(id);
    }
    admin
        .api_key_id(token)
        .await?
        .ok_or_else(|| Error::not_found("There is no such API token."))
}

/// The keys with this token name (Unleash's `GET /api/admin/api-tokens/{name}`), never a
/// secret.
#[utoipa::path(
    get,
    path = "/api/admin/api-tokens/{token}",
    tag = "api-tokens",
    params(super::openapi::ApiKeyPath),
    responses(
        (status = 200, description = "The keys with this name, without secrets.", body = ApiKeys),
        super::openapi::Errors
    )
)]
async fn by_name(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(name): Params<String>,
) -> HttpResult<Json<ApiKeys>> {
    let keys = admin.api_keys_named(&caller, &name).await?;
    Ok(Json::ok(ApiKeys {
        tokens: keys.into_iter().map(|k| ApiKeyView::new(k, None)).collect(),
    }))
}

/// Change when a key (by id or secret) expires, `{expiresAt}`; a date in the past stops it
/// at once.
#[utoipa::path(
    put,
    path = "/api/admin/api-tokens/{token}",
    tag = "api-tokens",
    params(super::openapi::ApiKeyPath),
    request_body(content = ApiKeyExpiryBody, description = "The new expiry.", content_type = "application/json"),
    responses(
        (status = 200, description = "Changed; no body."),
        super::openapi::BodyErrors
    )
)]
async fn update_expiry(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(token): Params<String>,
    body: LaterBody,
) -> HttpResult<StatusCode> {
    let permit = admin
        .permit(&caller, &[Need::root(Permission::Admin)])
        .await?;
    let body: ApiKeyExpiryBody = body.object().await?;
    let mut problems = Vec::new();
    let expires_at = match expiry(body.expires_at.as_ref(), &mut problems) {
        Some(at) => at,
        None if problems.is_empty() => {
            return Err(Error::invalid_at("/expiresAt", "expiresAt is required").into());
        }
        None => return Err(Error::validation("The expiry is not valid.", problems).into()),
    };
    let id = key_id(&admin, &token).await?;
    admin.set_api_key_expiry(permit, id, expires_at).await?;
    Ok(StatusCode::OK)
}

#[utoipa::path(
    post,
    path = "/api/admin/user-admin/{id}/tokens",
    tag = "api-tokens",
    params(super::openapi::IdPath),
    request_body(content = PersonalApiKeyBody, description = "The key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = PersonalApiKeyView),
        super::openapi::BodyErrors
    )
)]
async fn create_user_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(user_id): Params<i64>,
    JsonBody(body): JsonBody<PersonalApiKeyBody>,
) -> HttpResult<Json<PersonalApiKeyView>> {
    let mut problems = Vec::new();
    // The library names the key's name `name`; here it is the body's `description`.
    if let Some(problem) =
        crate::names::display_name_problem(&body.description, crate::names::MAX_NAME)
    {
        problems.push(ErrorDetail::at(
            "/description",
            format!("the description {problem}"),
        ));
    }
    let expires_at = expiry(body.expires_at.as_ref(), &mut problems);
    if !problems.is_empty() {
        return Err(Error::validation("The token is not valid.", problems).into());
    }
    let key = admin
        .create_api_key_expiring(
            &caller,
            &body.description,
            KeyAccess::User { user_id },
            expires_at,
        )
        .await?;
    Ok(Json::created(PersonalApiKeyView::new(
        key.info,
        user_id,
        Some(key.secret),
    )))
}

#[utoipa::path(
    delete,
    path = "/api/admin/user-admin/{id}/tokens/{tokenId}",
    tag = "api-tokens",
    params(super::openapi::PersonalApiKeyPath),
    responses(
        (status = 200, description = "Revoked; no body."),
        super::openapi::Errors
    )
)]
async fn revoke_user_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((user_id, token)): Params<(i64, String)>,
) -> HttpResult<StatusCode> {
    let token_id = user_key_id(&admin, &caller, user_id, &token).await?;
    admin.revoke_api_key(&caller, token_id).await?;
    Ok(StatusCode::OK)
}

/// The id of the key `token` (its number or id) that acts as `user_id`; 404 unless there is
/// one.
async fn user_key_id(
    admin: &ToggleAdmin,
    caller: &Caller,
    user_id: i64,
    token: &str,
) -> crate::Result<uuid::Uuid> {
    let keys: Vec<ApiKeyInfo> = admin
        .api_keys(caller)
        .await?
        .into_iter()
        .filter(|k| k.access == KeyAccess::User { user_id })
        .collect();
    named_key(&keys, token)
        .map(|k| k.id)
        .ok_or_else(|| Error::not_found(format!("User {user_id} has no token with id {token}.")))
}
