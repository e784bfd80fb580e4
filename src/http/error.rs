//! The one mapping from an error to an HTTP response, and the JSON success response.

use std::error::Error as _;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::error::{Error, ErrorBody};

/// An error as the HTTP API answers it: an operation's [`Error`], or a refusal only HTTP
/// knows (a method the path does not take, a body too large or not JSON).
///
/// | kind | [`name`](HttpError::name) | [`status`](HttpError::status) |
/// |---|---|---|
/// | [`Operation`](HttpError::Operation) | [`Error::name`] | [`Error::status`] |
/// | [`MethodNotAllowed`](HttpError::MethodNotAllowed) | `MethodNotAllowedError` | 405 |
/// | [`PayloadTooLarge`](HttpError::PayloadTooLarge) | `PayloadTooLarge` | 413 |
/// | [`ContentType`](HttpError::ContentType) | `ContentTypeError` | 415 |
///
/// As a response: that status, and the body of [`HttpError::body`] (`{id, name, message,
/// details?}`, `application/json`). Handlers return `Result<_, HttpError>` and use `?` on
/// the facade's results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// An operation failed: the library's error, answered with its own status and body.
    #[error(transparent)]
    Operation(#[from] Error),
    /// The path exists but not with this method.
    #[error("{message}")]
    MethodNotAllowed {
        /// The method and path that were refused.
        message: String,
    },
    /// The request body is over the configured limit.
    #[error("{message}")]
    PayloadTooLarge {
        /// The limit that was exceeded.
        message: String,
    },
    /// The request body is not JSON.
    #[error("{message}")]
    ContentType {
        /// The content type that was refused.
        message: String,
    },
}

impl HttpError {
    /// The stable name of this kind, as sent in the error body's `name`.
    pub fn name(&self) -> &'static str {
        match self {
            HttpError::Operation(error) => error.name(),
            HttpError::MethodNotAllowed { .. } => "MethodNotAllowedError",
            HttpError::PayloadTooLarge { .. } => "PayloadTooLarge",
            HttpError::ContentType { .. } => "ContentTypeError",
        }
    }

    /// The HTTP status of this kind.
    pub fn status(&self) -> u16 {
        match self {
            HttpError::Operation(error) => error.status(),
            HttpError::MethodNotAllowed { .. } => 405,
            HttpError::PayloadTooLarge { .. } => 413,
            HttpError::ContentType { .. } => 415,
        }
    }

    /// The body of this error as the HTTP contract returns it, with a fresh id (see
    /// [`Error::body`]).
    pub fn body(&self) -> ErrorBody {
        match self {
            HttpError::Operation(error) => error.body(),
            refusal => ErrorBody {
                id: uuid::Uuid::new_v4(),
                name: refusal.name().to_owned(),
                message: refusal.to_string(),
                details: Vec::new(),
            },
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        match &self {
            HttpError::Operation(error) => error_response(error),
            refusal => {
                let status = StatusCode::from_u16(refusal.status())
                    .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let body = refusal.body();
                tracing::debug!(error_id = %body.id, status = status.as_u16(), name = body.name, "request refused");
                body_response(status, &body)
            }
        }
    }
}

/// The response for `error`. A server error (5xx) is logged with its whole cause chain; its
/// body says only what kind of failure it was (the store failed, is out of space or is
/// unavailable, or an internal error happened), never the cause.
pub(crate) fn error_response(error: &Error) -> Response {
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = error.body();
    // A refusal in maintenance mode is the service doing as told, not a failure.
    if status.is_server_error() && !matches!(error, Error::Maintenance { .. }) {
        let mut causes = Vec::new();
        let mut source = error.source();
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        if matches!(
            error,
            Error::Store(_) | Error::StorageFull { .. } | Error::ServiceUnavailable { .. }
        ) {
            metrics::counter!("toggle_admin_store_errors_total", "store" => "http").increment(1);
        }
        tracing::error!(error_id = %body.id, %error, causes = ?causes, "request failed: {}", match error {
            Error::Store(_) => "the store failed",
            Error::StorageFull { .. } => "the store is out of disk space",
            Error::ServiceUnavailable { .. } => "the store's database is unavailable",
            _ => "internal error",
        });
    } else {
        tracing::debug!(error_id = %body.id, status = status.as_u16(), name = body.name, "request refused");
    }
    body_response(status, &body)
}

fn body_response(status: StatusCode, body: &ErrorBody) -> Response {
    let bytes = serde_json::to_vec(body).unwrap_or_else(|_| {
        // An ErrorBody is strings and a UUID; this cannot fail, but must not panic either.
        format!(
            r#"{{"id":"{}","name":"InternalError","message":"The error could not be described."}}"#,
            body.id
        )
        .into_bytes()
    });
    json_bytes(status, bytes)
}

/// `value` as a JSON response with `status`. A value that cannot be serialised (a bug, not
/// the client's fault) gives the 500 error response.
pub(crate) fn json_response<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => json_bytes(status, bytes),
        Err(source) => error_response(&Error::internal(
            "could not encode the response body",
            Some(Box::new(source)),
        )),
    }
}

fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        )],
        bytes,
    )
        .into_response()
}

/// A JSON success response: `200 OK` by default, [`Json::created`] for `201 Created`.
#[derive(Debug)]
pub(crate) struct Json<T> {
    status: StatusCode,
    value: T,
}

impl<T> Json<T> {
    /// `200 OK` with `value`.
    pub(crate) fn ok(value: T) -> Self {
        Self {
            status: StatusCode::OK,
            value,
        }
    }

    /// `201 Created` with `value`.
    pub(crate) fn created(value: T) -> Self {
        Self {
            status: StatusCode::CREATED,
            value,
        }
    }
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        json_response(self.status, &self.value)
    }
}

/// The result of a handler.
pub(crate) type HttpResult<T> = std::result::Result<T, HttpError>;
