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
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params};
use crate::admin::token_access;
use crate::auth::NewApiKey;
use crate::error::{Error, ErrorDetail};
use crate::model::{ApiKeyInfo, KeyAccess, TokenRequest};
use crate::{Caller, ToggleAdmin};

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list, create_admin_key))
        .routes(routes!(revoke))
        .routes(routes!(create_user_key))
        .routes(routes!(revoke_user_key))
}

/// The body of `POST /api/admin/api-tokens` (Unleash's `createApiTokenSchema`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewToken {
    #[serde(default)]
    token_name: Option<String>,
    /// Deprecated name of `tokenName`.
    #[serde(default)]
    username: Option<String>,
    #[serde(rename = "type")]
    token_type: String,
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    projects: Option<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<Value>,
}

/// A key as `/api/admin/api-tokens` shows it; `secret` only when it was just created.
///
/// * `type`: `admin` (every permission), `grants` (explicit grants, created through the
///   library) or `user` (acts as the user `userId`).
/// * `projects`: the projects the key is limited to, `["*"]` when it is not limited to some
///   (an admin key, a key acting as a user — which may do what the user may do — or a key
///   with a grant for every project); `project` is the same list joined with `,`, as in
///   Unleash.
/// * `environment`: the environment the key is limited to, `*` when it is not limited;
///   several environments joined with `,`.
/// * `expiresAt`: when the key stops working, `null` if never.
/// * `access`: exactly what the key may do.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct TokenView {
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    id: uuid::Uuid,
    token_name: String,
    #[serde(rename = "type")]
    token_type: &'static str,
    project: String,
    projects: Vec<String>,
    environment: String,
    #[serde(with = "crate::model::millis_timestamp::optional")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<DateTime<Utc>>,
    #[serde(with = "crate::model::millis_timestamp")]
    created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user_id: Option<i64>,
    #[schema(value_type = crate::KeyAccess)]
    access: KeyAccess,
}

impl TokenView {
    fn of(info: ApiKeyInfo, secret: Option<String>) -> Self {
        let all = || vec!["*".to_owned()];
        let (token_type, projects, environments, user_id) = match &info.access {
            KeyAccess::Admin => ("admin", all(), all(), None),
            KeyAccess::User { user_id } => ("user", all(), all(), Some(*user_id)),
            KeyAccess::Client {
                token_type,
                projects,
                environment,
            } => (
                token_type.as_str(),
                projects.clone(),
                vec![environment.clone()],
                None,
            ),
            KeyAccess::Grants { grants } => {
                let scope = |of: fn(&crate::model::Grant) -> Option<&str>| {
                    let mut names: Vec<String> = Vec::new();
                    for grant in grants {
                        match of(grant) {
                            None | Some("*") => return all(),
                            Some(name) => names.push(name.to_owned()),
                        }
                    }
                    names.sort();
                    names.dedup();
                    if names.is_empty() { all() } else { names }
                };
                (
                    "grants",
                    scope(|g| g.project.as_deref()),
                    scope(|g| g.environment.as_deref()),
                    None,
                )
            }
        };
        TokenView {
            secret,
            id: info.id,
            token_name: info.name,
            token_type,
            project: projects.join(","),
            projects,
            environment: environments.join(","),
            expires_at: info.expires_at,
            created_at: info.created_at,
            user_id,
            access: info.access,
        }
    }
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
struct Tokens {
    tokens: Vec<TokenView>,
}

#[utoipa::path(
    get,
    path = "/api/admin/api-tokens",
    tag = "api-tokens",
    responses(
        (status = 200, description = "Every API key, without secrets.", body = Tokens),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Tokens>> {
    let keys = admin.api_keys(&caller).await?;
    Ok(Json::ok(Tokens {
        tokens: keys.into_iter().map(|k| TokenView::of(k, None)).collect(),
    }))
}

#[utoipa::path(
    post,
    path = "/api/admin/api-tokens",
    tag = "api-tokens",
    request_body(content = NewToken, description = "The admin key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = TokenView),
        super::openapi::BodyErrors
    )
)]
async fn create_admin_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<NewToken>,
) -> HttpResult<Json<TokenView>> {
    let mut problems = Vec::new();
    let request = TokenRequest {
        token_type: body.token_type.clone(),
        environment: body.environment.clone(),
        project: body.project.clone(),
        projects: body.projects.clone(),
    };
    let access = token_access(&request)
        .map_err(|found| problems.extend(found))
        .ok();
    let expires_at = expiry(body.expires_at.as_ref(), &mut problems);
    let Some(name) = body.token_name.or(body.username) else {
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

fn created_view(key: NewApiKey) -> TokenView {
    TokenView::of(key.info, Some(key.secret))
}

/// The `expiresAt` of a creation body: absent or `null` for never, else an RFC 3339
/// date-time (`2030-01-01T00:00:00Z`, `2030-01-01T01:00:00+01:00`). Anything else is a
/// problem at `/expiresAt`. Whether it is in the future is the library's check.
fn expiry(value: Option<&Value>, problems: &mut Vec<ErrorDetail>) -> Option<DateTime<Utc>> {
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
    params(super::openapi::TokenPath),
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
    let id = match uuid::Uuid::parse_str(&token) {
        Ok(id) => id,
        // By secret: expired keys too (they can still be revoked).
        Err(_) => match admin.api_key_id(&token).await? {
            Some(id) => id,
            None => return Err(Error::not_found("There is no such API token.").into()),
        },
    };
    admin.revoke_api_key(&caller, id).await?;
    Ok(StatusCode::OK)
}

/// The body of `POST /api/admin/user-admin/{id}/tokens`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewUserToken {
    description: String,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<Value>,
}

/// A key that acts as a user, as created: Unleash's personal access token shape.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct UserTokenView {
    id: uuid::Uuid,
    secret: String,
    description: String,
    user_id: i64,
    #[serde(with = "crate::model::millis_timestamp::optional")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<DateTime<Utc>>,
    #[serde(with = "crate::model::millis_timestamp")]
    created_at: DateTime<Utc>,
}

#[utoipa::path(
    post,
    path = "/api/admin/user-admin/{id}/tokens",
    tag = "api-tokens",
    params(super::openapi::IdPath),
    request_body(content = NewUserToken, description = "The key to create.", content_type = "application/json"),
    responses(
        (status = 201, description = "The key created, with its secret (shown only now).", body = UserTokenView),
        super::openapi::BodyErrors
    )
)]
async fn create_user_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(user_id): Params<i64>,
    JsonBody(body): JsonBody<NewUserToken>,
) -> HttpResult<Json<UserTokenView>> {
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
    Ok(Json::created(UserTokenView {
        id: key.info.id,
        secret: key.secret,
        description: key.info.name,
        user_id,
        expires_at: key.info.expires_at,
        created_at: key.info.created_at,
    }))
}

#[utoipa::path(
    delete,
    path = "/api/admin/user-admin/{id}/tokens/{tokenId}",
    tag = "api-tokens",
    params(super::openapi::UserTokenPath),
    responses(
        (status = 200, description = "Revoked; no body."),
        super::openapi::Errors
    )
)]
async fn revoke_user_key(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params((user_id, token_id)): Params<(i64, uuid::Uuid)>,
) -> HttpResult<StatusCode> {
    ensure_user_key(&admin, &caller, user_id, token_id).await?;
    admin.revoke_api_key(&caller, token_id).await?;
    Ok(StatusCode::OK)
}

/// 404 unless `token_id` is a key that acts as `user_id`.
async fn ensure_user_key(
    admin: &ToggleAdmin,
    caller: &Caller,
    user_id: i64,
    token_id: uuid::Uuid,
) -> crate::Result<()> {
    let keys = admin.api_keys(caller).await?;
    let owned = keys
        .iter()
        .any(|k| k.id == token_id && k.access == KeyAccess::User { user_id });
    if owned {
        Ok(())
    } else {
        Err(Error::not_found(format!(
            "User {user_id} has no token with id {token_id}."
        )))
    }
}
