//! The frontend API for browser and mobile SDKs (`unleash-proxy-client` and the SDKs built on
//! it): `GET`/`POST /api/frontend` (the enabled flags, evaluated for the caller's context),
//! `GET`/`POST /api/frontend/all` (every flag), `POST /api/frontend/client/metrics` and
//! `/api/frontend/client/register` (counted and listed as the backend SDKs' are). Frontend
//! keys only: any other key → 403, as in Unleash.
//!
//! The context: at `GET`, in the query (`userId`, `sessionId`, `remoteAddress`, `appName`,
//! `environment`, `currentTime`, `properties[name]=value`; any other key is a property, as
//! in Unleash); at `POST`, the body `{context: {...}}` (or the context itself, as Unleash
//! Edge takes it). Values are strings: a number, a boolean, an object where a value belongs
//! → 400 naming it (`null` is absent). `remoteAddress` defaults to the caller's address.
//! Browsers call these routes from other origins: the CORS layer of
//! [`RouterConfig::frontend_origins`](super::RouterConfig::frontend_origins) answers their
//! preflights.

use std::collections::HashMap;
use std::net::SocketAddr;

use axum::Extension;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use axum::routing::{options, post};
use serde_json::{Map, Value};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};
use unleash_types::client_features::Context;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::client::sdk_body;
use super::error::{HttpResult, Json};
use super::extract::{JsonValue, permit_sdk};
use crate::ToggleAdmin;
use crate::admin::Permit;
use crate::error::{Error, ErrorDetail};
use crate::model::FrontendFeatures;

/// The longest query string `GET /api/frontend` reads (32 KiB); longer → 400 at `query`.
/// (A URI is at most 64 KiB in `http`; behind the server, hyper answers a longer request
/// head with 414 or 431 before any handler runs.)
pub const MAX_FRONTEND_QUERY: usize = 32 * 1024;

/// The routes, with the CORS layer for `origins` (`*` alone: any origin).
pub(crate) fn routes(origins: &[String]) -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(enabled_get, enabled_post))
        .routes(routes!(all_get, all_post))
        .routes(routes!(metrics))
        .routes(routes!(register))
        // What an SDK pointed at `/api/frontend/all` reports to (as Unleash Edge serves).
        .route("/api/frontend/all/client/metrics", post(metrics))
        .route("/api/frontend/all/client/register", post(register))
        // OPTIONS routes, so that the CORS layer sees the preflights (the router's
        // method-not-allowed answer would otherwise take them).
        .route("/api/frontend", options(preflight))
        .route("/api/frontend/all", options(preflight))
        .route("/api/frontend/client/metrics", options(preflight))
        .route("/api/frontend/client/register", options(preflight))
        .route("/api/frontend/all/client/metrics", options(preflight))
        .route("/api/frontend/all/client/register", options(preflight))
        .layer(cors(origins))
}

/// An `OPTIONS` that is not a preflight (the CORS layer answers those): 204.
async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// Unleash's CORS for the frontend API: the configured origins, `GET`/`POST` and the
/// preflight, the headers the browser asks for (`Authorization`, `Content-Type`, the SDKs'
/// `unleash-*`), `ETag` readable, preflights cached for two days (Unleash's `maxAge`).
fn cors(origins: &[String]) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(allow_origin(origins))
        .allow_methods(AllowMethods::list([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::OPTIONS,
        ]))
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([axum::http::header::ETAG])
        .max_age(std::time::Duration::from_secs(172_800))
}

/// The origins of [`RouterConfig::frontend_origins`](super::RouterConfig::frontend_origins)
/// (`*` alone, or none: any), for the frontend API and OFREP.
pub(super) fn allow_origin(origins: &[String]) -> AllowOrigin {
    if origins.is_empty() || origins.iter().any(|o| o.trim() == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(
            origins
                .iter()
                .filter_map(|o| axum::http::HeaderValue::from_str(o.trim()).ok()),
        )
    }
}

/// The admission of a frontend route: a frontend key (any other → 403, as in Unleash),
/// its record read once for the whole request.
struct FrontendKey(Permit);

impl FromRequestParts<ToggleAdmin> for FrontendKey {
    type Rejection = super::HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        admin: &ToggleAdmin,
    ) -> Result<Self, Self::Rejection> {
        let permit = permit_sdk(parts, admin).await?;
        if !permit.caller().key().access.is_frontend() {
            return Err(crate::admin::wrong_key_type().into());
        }
        Ok(FrontendKey(permit))
    }
}

/// The caller's address, when the server provides it.
type Peer = Option<Extension<ConnectInfo<SocketAddr>>>;

/// The flags enabled for the context in the query.
#[utoipa::path(
    get,
    path = "/api/frontend",
    tag = "frontend",
    responses(
        (status = 200, description = "`{toggles: [{name, enabled, impressionData, variant}]}`: the enabled flags.", content_type = "application/json"),
        super::openapi::Errors
    )
)]
async fn enabled_get(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    peer: Peer,
    uri: Uri,
) -> HttpResult<Json<FrontendFeatures>> {
    answer(&admin, caller, query_context(&uri)?, peer, false).await
}

/// The flags enabled for the context in the body (`{context: {...}}`).
#[utoipa::path(
    post,
    path = "/api/frontend",
    tag = "frontend",
    request_body(content = Object, description = "`{context: {userId, sessionId, remoteAddress, appName, environment, currentTime, properties}}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{toggles: [...]}`: the enabled flags.", content_type = "application/json"),
        super::openapi::BodyErrors
    )
)]
async fn enabled_post(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    peer: Peer,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<FrontendFeatures>> {
    answer(&admin, caller, body_context(body)?, peer, false).await
}

/// Every flag, enabled or not, for the context in the query.
#[utoipa::path(
    get,
    path = "/api/frontend/all",
    tag = "frontend",
    responses(
        (status = 200, description = "`{toggles: [...]}`: every flag of the key's scope.", content_type = "application/json"),
        super::openapi::Errors
    )
)]
async fn all_get(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    peer: Peer,
    uri: Uri,
) -> HttpResult<Json<FrontendFeatures>> {
    answer(&admin, caller, query_context(&uri)?, peer, true).await
}

/// Every flag, enabled or not, for the context in the body.
#[utoipa::path(
    post,
    path = "/api/frontend/all",
    tag = "frontend",
    request_body(content = Object, description = "`{context: {...}}`.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{toggles: [...]}`: every flag of the key's scope.", content_type = "application/json"),
        super::openapi::BodyErrors
    )
)]
async fn all_post(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    peer: Peer,
    JsonValue(body): JsonValue,
) -> HttpResult<Json<FrontendFeatures>> {
    answer(&admin, caller, body_context(body)?, peer, true).await
}

/// A frontend SDK's usage metrics (Unleash's `clientMetricsSchema`): 200, no body, counted
/// as a backend SDK's report in the key's environment.
#[utoipa::path(
    post,
    path = "/api/frontend/client/metrics",
    tag = "frontend",
    request_body(content = Object, description = "appName, instanceId, bucket {start, stop, toggles}.", content_type = "application/json"),
    responses(
        (status = 200, description = "Accepted; no body."),
        super::openapi::BodyErrors
    )
)]
async fn metrics(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    JsonValue(body): JsonValue,
) -> HttpResult<StatusCode> {
    let report: unleash_types::client_metrics::ClientMetrics = sdk_body(body)?;
    admin.record_client_metrics(caller, &report).await?;
    Ok(StatusCode::OK)
}

/// A frontend SDK's registration (Unleash's `frontendApiClientSchema`; `started` may be a
/// date-time or milliseconds since the epoch): 200, no body; the application lists it as
/// it lists a backend SDK's.
#[utoipa::path(
    post,
    path = "/api/frontend/client/register",
    tag = "frontend",
    request_body(content = Object, description = "appName, instanceId?, sdkVersion?, interval, started, strategies.", content_type = "application/json"),
    responses(
        (status = 200, description = "Registered; no body."),
        super::openapi::BodyErrors
    )
)]
async fn register(
    State(admin): State<ToggleAdmin>,
    FrontendKey(caller): FrontendKey,
    JsonValue(mut body): JsonValue,
) -> HttpResult<StatusCode> {
    if let Some(object) = body.as_object_mut() {
        if let Some(ms) = object.get("started").and_then(Value::as_i64) {
            let at = chrono::DateTime::from_timestamp_millis(ms)
                .ok_or_else(|| Error::invalid_at("/started", "not a date"))?;
            object.insert("started".to_owned(), Value::from(at.to_rfc3339()));
        }
        if let Some(interval) = object.get("interval").and_then(Value::as_f64) {
            object.insert("interval".to_owned(), Value::from(interval.max(0.0) as u32));
        }
        object
            .entry("strategies")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    let registration: unleash_types::client_metrics::ClientApplication = sdk_body(body)?;
    admin.register_client(caller, &registration).await?;
    Ok(StatusCode::OK)
}

async fn answer(
    admin: &ToggleAdmin,
    caller: Permit,
    mut context: Context,
    peer: Peer,
    include_disabled: bool,
) -> HttpResult<Json<FrontendFeatures>> {
    if context.remote_address.is_none()
        && let Some(Extension(ConnectInfo(address))) = peer
    {
        context.remote_address = Some(address.ip().to_string());
    }
    Ok(Json::ok(
        admin
            .frontend_features(caller, &context, include_disabled)
            .await?,
    ))
}

/// The context of a query string.
fn query_context(uri: &Uri) -> Result<Context, Error> {
    let query = uri.query().unwrap_or_default();
    if query.len() > MAX_FRONTEND_QUERY {
        return Err(Error::invalid_at(
            "query",
            format!(
                "the query string may have at most {MAX_FRONTEND_QUERY} bytes, not {}",
                query.len()
            ),
        ));
    }
    let axum::extract::Query(pairs) =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri).map_err(|e| {
            Error::validation(
                "A query parameter is not valid.",
                vec![ErrorDetail::general(e.body_text())],
            )
        })?;
    let mut context = Context::default();
    let mut properties = HashMap::new();
    let mut seen: Vec<&'static str> = Vec::new();
    for (name, value) in pairs {
        if let Some(property) = name
            .strip_prefix("properties[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            properties.insert(property.to_owned(), value);
            continue;
        }
        let Some((field, slot)) = field_slot(&mut context, &name) else {
            properties.insert(name, value);
            continue;
        };
        if seen.contains(&field) {
            return Err(Error::invalid_at(
                field,
                format!("{field} is given more than once"),
            ));
        }
        seen.push(field);
        *slot = Some(value);
    }
    context.properties = (!properties.is_empty()).then_some(properties);
    Ok(context)
}

/// The context field named `name`, if it is one.
fn field_slot<'a>(
    context: &'a mut Context,
    name: &str,
) -> Option<(&'static str, &'a mut Option<String>)> {
    Some(match name {
        "userId" => ("userId", &mut context.user_id),
        "sessionId" => ("sessionId", &mut context.session_id),
        "remoteAddress" => ("remoteAddress", &mut context.remote_address),
        "appName" => ("appName", &mut context.app_name),
        "environment" => ("environment", &mut context.environment),
        "currentTime" => ("currentTime", &mut context.current_time),
        _ => return None,
    })
}

/// The context of a POST body: `{context: {...}}`, or the context itself.
fn body_context(body: Value) -> Result<Context, Error> {
    let Value::Object(mut body) = body else {
        return Err(Error::invalid_at(
            "",
            "the request body must be a JSON object: {\"context\": {...}}",
        ));
    };
    let (raw, prefix) = match body.remove("context") {
        Some(Value::Object(inner)) => (inner, "/context"),
        Some(Value::Null) | None => (body, ""),
        Some(_) => {
            return Err(Error::invalid_at(
                "/context",
                "the context must be a JSON object",
            ));
        }
    };
    context_of(raw, prefix)
}

/// A context from a JSON object whose values must be strings (`null`: absent).
fn context_of(raw: Map<String, Value>, prefix: &str) -> Result<Context, Error> {
    let mut context = Context::default();
    let mut properties = HashMap::new();
    let mut problems = Vec::new();
    let string = |value: Value, path: String, problems: &mut Vec<ErrorDetail>| match value {
        Value::String(text) => Some(text),
        Value::Null => None,
        other => {
            if problems.len() < 10 {
                problems.push(ErrorDetail::at(
                    path,
                    format!(
                        "a context value must be a string, not {}",
                        crate::error::json_kind(&other)
                    ),
                ));
            }
            None
        }
    };
    for (name, value) in raw {
        if name == "properties" {
            match value {
                Value::Object(entries) => {
                    for (key, value) in entries {
                        let path = format!(
                            "{prefix}/properties/{}",
                            crate::error::short_pointer_token(&key)
                        );
                        if let Some(text) = string(value, path, &mut problems) {
                            properties.insert(key, text);
                        }
                    }
                }
                Value::Null => {}
                other => problems.push(ErrorDetail::at(
                    format!("{prefix}/properties"),
                    format!(
                        "properties must be an object, not {}",
                        crate::error::json_kind(&other)
                    ),
                )),
            }
            continue;
        }
        let path = format!("{prefix}/{}", crate::error::short_pointer_token(&name));
        let text = string(value, path, &mut problems);
        match field_slot(&mut context, &name) {
            Some((_, slot)) => *slot = text,
            None => {
                if let Some(text) = text {
                    properties.insert(name, text);
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation("The context is not valid.", problems));
    }
    context.properties = (!properties.is_empty()).then_some(properties);
    Ok(context)
}
