//! OpenFeature's Remote Evaluation Protocol (OFREP) over HTTP, for OpenFeature's OFREP
//! providers (see `admin/ofrep.rs` for what is evaluated and how):
//!
//! * `POST /ofrep/v1/evaluate/flags/{key}`: one flag; 200 `{key, value, reason, variant,
//!   metadata}`.
//! * `POST /ofrep/v1/evaluate/flags`: every flag of the key's scope; 200 `{flags,
//!   eventStreams}` with an `ETag`, 304 when `If-None-Match` names it.
//! * `GET /ofrep/v1/events?token=…`: the stream the bulk answer names (server-sent events
//!   `{"type": "refetchEvaluation"}`).
//!
//! The key: `Authorization: <key>`, `Authorization: Bearer <key>` or `X-API-Key: <key>`, a
//! frontend or a client key. The body: `{"context": {...}}`; `{}`, `{"context": null}` and
//! an empty body are the empty context; any content type is read as JSON (the providers do
//! not all send one).
//!
//! Every answer is OFREP's, never the admin API's error body nor axum's plain-text
//! rejections: missing or unknown key 401, another kind of key 403 (as on the frontend
//! API), unknown or out-of-scope flag 404 `FLAG_NOT_FOUND`, a context that is not an object
//! or breaks the frontend API's limits 400 `INVALID_CONTEXT`, malformed JSON 400
//! `PARSE_ERROR`, a body over the router's limit 413, too many streams 429; each body is
//! `{errorCode, errorDetails}`, with the flag's `key` on the single flag's route. A flag
//! whose payload does not parse is its `PARSE_ERROR` (400 alone, an entry in a bulk answer).
//!
//! Browsers call these routes from other origins: the CORS layer answers with
//! [`RouterConfig::frontend_origins`](super::RouterConfig::frontend_origins), as the
//! frontend API's does, allows `Content-Type`, `Authorization`, `X-API-Key` and
//! `If-None-Match`, and exposes `ETag`.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{BytesRejection, FailedToBufferBody, PathRejection};
use axum::extract::{ConnectInfo, Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::options;
use serde::Serialize;
use serde_json::Value;
use tower_http::cors::{AllowHeaders, AllowMethods, CorsLayer};
use unleash_types::client_features::Context;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::request_origin;
use crate::ToggleAdmin;
use crate::admin::Permit;
use crate::admin::{OfrepAnswer, OfrepStream, ofrep_context};
use crate::error::Error;
use crate::model::{OfrepBulk, OfrepErrorCode, OfrepEventStream, OfrepFailure, OfrepFlag};

/// The path of the OFREP stream.
pub const OFREP_EVENTS_PATH: &str = "/ofrep/v1/events";

/// The routes, with the CORS layer for `origins`.
pub(crate) fn routes(origins: &[String]) -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(evaluate_flag))
        .routes(routes!(evaluate_flags))
        .routes(routes!(events))
        .route("/ofrep/v1/evaluate/flags/{key}", options(preflight))
        .route("/ofrep/v1/evaluate/flags", options(preflight))
        .route(OFREP_EVENTS_PATH, options(preflight))
        .layer(cors(origins))
}

/// An `OPTIONS` that is not a preflight (the CORS layer answers those): 204.
async fn preflight() -> StatusCode {
    StatusCode::NO_CONTENT
}

/// The frontend API's origins; the headers OFREP's providers send, by name; `ETag`
/// readable.
fn cors(origins: &[String]) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(super::frontend::allow_origin(origins))
        .allow_methods(AllowMethods::list([
            Method::GET,
            Method::POST,
            Method::OPTIONS,
        ]))
        .allow_headers(AllowHeaders::list([
            header::CONTENT_TYPE,
            header::AUTHORIZATION,
            HeaderName::from_static("x-api-key"),
            header::IF_NONE_MATCH,
            HeaderName::from_static("unleash-appname"),
        ]))
        .expose_headers([header::ETAG])
        .max_age(std::time::Duration::from_secs(172_800))
}

/// An OFREP error answer.
#[derive(Debug)]
struct OfrepError {
    status: StatusCode,
    body: OfrepFailure,
}

impl OfrepError {
    fn new(status: StatusCode, code: OfrepErrorCode, details: impl Into<String>) -> Self {
        Self {
            status,
            body: OfrepFailure {
                key: None,
                error_code: code,
                error_details: details.into(),
            },
        }
    }

    /// For the single flag's route: the body names the flag.
    fn for_key(mut self, key: Option<&str>) -> Self {
        self.body.key = key.map(str::to_owned);
        self
    }
}

impl From<Error> for OfrepError {
    fn from(error: Error) -> Self {
        let status =
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let code = match &error {
            Error::NotFound { .. } => OfrepErrorCode::FlagNotFound,
            Error::Validation { .. } => OfrepErrorCode::InvalidContext,
            _ => OfrepErrorCode::General,
        };
        let details = match &error {
            Error::Validation {
                message, details, ..
            } => {
                let named: Vec<String> = details
                    .iter()
                    .map(|d| format!("{}: {}", d.path.as_deref().unwrap_or(""), d.message))
                    .collect();
                if named.is_empty() {
                    message.clone()
                } else {
                    format!("{message} {}", named.join("; "))
                }
            }
            _ if status.is_server_error() => {
                tracing::error!(%error, "OFREP: the evaluation failed");
                "The flags could not be evaluated: the server failed.".to_owned()
            }
            other => other.to_string(),
        };
        OfrepError::new(status, code, details)
    }
}

impl IntoResponse for OfrepError {
    fn into_response(self) -> Response {
        let mut response = json(self.status, &self.body);
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

/// `value` as JSON with `status`.
fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    encoded(status, serde_json::to_vec(value))
}

/// A bulk answer, 200: written once, into a buffer of about its size (about 110 bytes a
/// flag, more with a payload), which becomes the body as it is.
fn bulk_json(flags: &OfrepBulk) -> Response {
    let capacity = flags.flags.len().saturating_mul(128).saturating_add(1024);
    let mut bytes = Vec::with_capacity(capacity);
    let written = flags.write_json(&mut bytes).map(|()| bytes);
    encoded(StatusCode::OK, written)
}

/// JSON bytes with `status`, or a 500 if they could not be encoded.
fn encoded(status: StatusCode, bytes: serde_json::Result<Vec<u8>>) -> Response {
    match bytes {
        Ok(bytes) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(%error, "OFREP: could not encode an answer");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                r#"{"errorCode":"GENERAL","errorDetails":"The answer could not be encoded."}"#,
            )
                .into_response()
        }
    }
}

type OfrepResult<T> = Result<T, OfrepError>;

/// The caller's address, when the server provides it.
type Peer = Option<Extension<ConnectInfo<SocketAddr>>>;

/// The key of `Authorization` (as is, or after `Bearer `) or `X-API-Key`, admitted as an
/// SDK's key (its record read once for the request).
async fn caller(admin: &ToggleAdmin, headers: &HeaderMap) -> OfrepResult<Permit> {
    let header = headers
        .get(header::AUTHORIZATION)
        .or_else(|| headers.get("x-api-key"));
    let secret = match header {
        None => None,
        Some(value) => Some(value.to_str().map_err(|_| {
            OfrepError::new(
                StatusCode::UNAUTHORIZED,
                OfrepErrorCode::General,
                "The API key header is not a valid API key.",
            )
        })?),
    };
    let secret = secret.map(|s| {
        let s = s.trim();
        match s.get(..7) {
            Some(prefix) if prefix.eq_ignore_ascii_case("bearer ") => s[7..].trim_start(),
            _ => s,
        }
    });
    Ok(admin.permit_sdk(secret).await?)
}

/// The context of a request body (see the [module](self) docs), the caller's address as
/// `remoteAddress` when it names none.
fn context(body: Result<Bytes, BytesRejection>, peer: Peer) -> OfrepResult<Context> {
    let bytes = body.map_err(|rejection| match rejection {
        BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(e)) => {
            OfrepError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                OfrepErrorCode::General,
                format!("The request body is too large: {e}."),
            )
        }
        other => OfrepError::new(
            StatusCode::BAD_REQUEST,
            OfrepErrorCode::ParseError,
            format!("The request body could not be read: {}", other.body_text()),
        ),
    })?;
    let mut context = if bytes.iter().all(u8::is_ascii_whitespace) {
        Context::default()
    } else {
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            OfrepError::new(
                StatusCode::BAD_REQUEST,
                OfrepErrorCode::ParseError,
                format!("The request body is not valid JSON: {e}"),
            )
        })?;
        let Value::Object(mut body) = value else {
            return Err(OfrepError::new(
                StatusCode::BAD_REQUEST,
                OfrepErrorCode::InvalidContext,
                "The request body must be a JSON object: {\"context\": {...}}.",
            ));
        };
        match body.remove("context") {
            None | Some(Value::Null) => Context::default(),
            Some(Value::Object(fields)) => ofrep_context(&fields)?,
            Some(_) => {
                return Err(OfrepError::new(
                    StatusCode::BAD_REQUEST,
                    OfrepErrorCode::InvalidContext,
                    "The context must be a JSON object.",
                ));
            }
        }
    };
    if context.remote_address.is_none()
        && let Some(Extension(ConnectInfo(address))) = peer
    {
        context.remote_address = Some(address.ip().to_string());
    }
    Ok(context)
}

/// The application the caller names (`unleash-appname`), for the usage metrics.
fn application(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("unleash-appname")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// One flag evaluated for the context in the body.
#[utoipa::path(
    post,
    path = "/ofrep/v1/evaluate/flags/{key}",
    tag = "ofrep",
    params(("key" = String, Path, description = "The flag's name.")),
    request_body(content = Object, description = "`{context: {targetingKey, ...}}`; `{}` is the empty context.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{key, value, reason, variant, metadata}`.", content_type = "application/json"),
        (status = 400, description = "`{key, errorCode: PARSE_ERROR | INVALID_CONTEXT, errorDetails}`.", content_type = "application/json"),
        (status = 401, description = "No key, or an unknown one: `{key, errorCode: GENERAL, errorDetails}`.", content_type = "application/json"),
        (status = 403, description = "Neither a frontend nor a client key.", content_type = "application/json"),
        (status = 404, description = "`{key, errorCode: FLAG_NOT_FOUND, errorDetails}`: no such flag in the key's scope.", content_type = "application/json"),
        (status = 413, description = "The body is over the limit.", content_type = "application/json"),
    )
)]
async fn evaluate_flag(
    State(admin): State<ToggleAdmin>,
    key: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    peer: Peer,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let key = match key {
        Ok(Path(key)) => key,
        Err(rejection) => {
            return OfrepError::new(
                StatusCode::BAD_REQUEST,
                OfrepErrorCode::General,
                format!("The flag's name is not valid: {}", rejection.body_text()),
            )
            .for_key(Some(""))
            .into_response();
        }
    };
    let answer = async {
        let caller = caller(&admin, &headers).await?;
        let context = context(body, peer)?;
        Ok::<_, OfrepError>(
            admin
                .ofrep_evaluate_flag(caller, &key, &context, application(&headers))
                .await?,
        )
    };
    match answer.await {
        Ok(OfrepFlag::Evaluation(evaluation)) => json(StatusCode::OK, &evaluation),
        Ok(OfrepFlag::Failure(failure)) => json(StatusCode::BAD_REQUEST, &failure),
        Err(error) => error.for_key(Some(&key)).into_response(),
    }
}

/// Every flag of the key's scope for the context in the body.
#[utoipa::path(
    post,
    path = "/ofrep/v1/evaluate/flags",
    tag = "ofrep",
    params(("If-None-Match" = Option<String>, Header, description = "The ETag of an earlier answer.")),
    request_body(content = Object, description = "`{context: {targetingKey, ...}}`; `{}` is the empty context.", content_type = "application/json"),
    responses(
        (status = 200, description = "`{flags: [...], eventStreams: [{type: sse, url}]}`, with an `ETag`.", content_type = "application/json"),
        (status = 304, description = "Neither the flags nor the context changed since the ETag of `If-None-Match`."),
        (status = 400, description = "`{errorCode: PARSE_ERROR | INVALID_CONTEXT, errorDetails}`.", content_type = "application/json"),
        (status = 401, description = "No key, or an unknown one.", content_type = "application/json"),
        (status = 403, description = "Neither a frontend nor a client key.", content_type = "application/json"),
        (status = 413, description = "The body is over the limit.", content_type = "application/json"),
    )
)]
async fn evaluate_flags(
    State(admin): State<ToggleAdmin>,
    headers: HeaderMap,
    uri: Uri,
    peer: Peer,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let answer = async {
        let caller = caller(&admin, &headers).await?;
        let context = context(body, peer)?;
        let if_none_match = headers
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok());
        Ok::<_, OfrepError>(
            admin
                .ofrep_evaluate_flags(caller, &context, application(&headers), if_none_match)
                .await?,
        )
    };
    match answer.await {
        Ok(OfrepAnswer::NotModified { etag }) => {
            let mut response = StatusCode::NOT_MODIFIED.into_response();
            if let Ok(value) = HeaderValue::from_str(&etag) {
                response.headers_mut().insert(header::ETAG, value);
            }
            response
        }
        Ok(OfrepAnswer::Flags {
            etag,
            mut flags,
            stream_token,
        }) => {
            if let Some(url) = stream_url(&headers, &uri, &stream_token) {
                flags.event_streams.push(OfrepEventStream {
                    stream_type: "sse".to_owned(),
                    url,
                });
            }
            let mut response = bulk_json(&flags);
            if let Ok(value) = HeaderValue::from_str(&etag) {
                response.headers_mut().insert(header::ETAG, value);
            }
            response
        }
        Err(error) => error.into_response(),
    }
}

/// The stream's absolute URL: at the origin the request was sent to
/// ([`request_origin`]); `None` without a host.
fn stream_url(headers: &HeaderMap, uri: &Uri, token: &str) -> Option<String> {
    let origin = request_origin(headers, uri)?;
    Some(format!("{origin}{OFREP_EVENTS_PATH}?token={token}"))
}

/// The stream of `refetchEvaluation` events the bulk answer names.
#[utoipa::path(
    get,
    path = "/ofrep/v1/events",
    tag = "ofrep",
    params(("token" = String, Query, description = "The credential of the bulk answer's `eventStreams` URL.")),
    responses(
        (status = 200, description = "Server-sent events: `data: {\"type\":\"refetchEvaluation\"}` at the connection and at each change of the key's flags, with `id:`; keep-alive comments.", content_type = "text/event-stream"),
        (status = 401, description = "A missing, forged or expired credential, or a revoked key.", content_type = "application/json"),
        (status = 429, description = "Too many streams, over the server or the key.", content_type = "application/json"),
    )
)]
async fn events(State(admin): State<ToggleAdmin>, uri: Uri) -> Response {
    let token = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .unwrap_or_default();
    let stream = match admin.ofrep_stream(token).await {
        Ok(stream) => stream,
        Err(error) => return OfrepError::from(error).into_response(),
    };
    let body = futures_util::stream::unfold(stream, |mut stream: OfrepStream| async move {
        let next: Bytes = stream.next().await?;
        Some((Ok::<_, Infallible>(next), stream))
    });
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // nginx and the like: pass events on as they come.
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
