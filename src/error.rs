//! The one public error type, its kinds, and the error body the HTTP contract returns.
//!
//! Every operation of [`ToggleAdmin`](crate::ToggleAdmin) fails with an [`Error`] whose kind
//! mirrors the specification: [`Error::name`] is the stable `name` of the error body and
//! [`Error::status`] its HTTP status. A failing operation changes nothing and writes no event.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;

/// `Result` with this crate's [`Error`] as the default error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One problem found in the input: where (`path`, e.g. `/2/weight` or `data.features[3]`) and
/// what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ErrorDetail {
    /// Where the problem is: a JSON pointer into the request body (`/2/weight`) or a dotted path
    /// (`data.features[3].name`). `None` when the problem concerns the request as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

/// `name` as one token of a JSON pointer (RFC 6901: `~` → `~0`, `/` → `~1`), for the path
/// of an [`ErrorDetail`].
pub(crate) fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// [`pointer_token`] of at most the first 64 characters of `name`: a path that names a key
/// of the caller's choosing stays short whatever its length.
#[cfg(feature = "frontend")]
pub(crate) fn short_pointer_token(name: &str) -> String {
    pointer_token(&name.chars().take(64).collect::<String>())
}

/// What kind of JSON value `value` is, for messages ("a number", "an object").
#[cfg(feature = "frontend")]
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl ErrorDetail {
    /// A problem at `path`.
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.into()),
            message: message.into(),
        }
    }

    /// A problem with the request as a whole.
    pub fn general(message: impl Into<String>) -> Self {
        Self {
            path: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{path}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Everything that can go wrong in an operation, by meaning.
///
/// | kind | [`name`](Error::name) | [`status`](Error::status) |
/// |---|---|---|
/// | [`Validation`](Error::Validation) | `ValidationError` | 400 |
/// | [`AuthenticationRequired`](Error::AuthenticationRequired) | `AuthenticationRequired` | 401 |
/// | [`NoAccess`](Error::NoAccess) | `NoAccessError` | 403 |
/// | [`NotFound`](Error::NotFound) | `NotFoundError` | 404 |
/// | [`NameExists`](Error::NameExists) | `NameExistsError` | 409 |
/// | [`Contention`](Error::Contention) | `ConflictError` | 409 |
/// | [`InUse`](Error::InUse) | `ConflictError` | 409 |
/// | [`TooManyRequests`](Error::TooManyRequests) | `TooManyRequests` | 429 |
/// | [`Store`](Error::Store) | `InternalError` | 500 |
/// | [`Internal`](Error::Internal) | `InternalError` | 500 |
/// | [`ServiceUnavailable`](Error::ServiceUnavailable) | `ServiceUnavailable` | 503 |
/// | [`Maintenance`](Error::Maintenance) | `MaintenanceModeError` | 503 |
/// | [`StorageFull`](Error::StorageFull) | `InsufficientStorage` | 507 |
///
/// [`Store`](Error::Store) is a failure of the store (I/O, damaged data);
/// [`Internal`](Error::Internal) is a bug of this crate (a value it cannot serialise, a
/// handler that panicked). Neither is the client's fault; neither body says more than that.
///
/// The refusals only HTTP knows (a method the path does not take 405, a body too large 413 or
/// not JSON 415) are not operations' errors: the HTTP layer has them (feature `http`,
/// `http::HttpError`).
///
/// Two store failures are conditions an operator can name and fix, and that pass by
/// themselves once fixed, so they have kinds of their own: a database that cannot be reached
/// or does not answer in time ([`ServiceUnavailable`](Error::ServiceUnavailable), 503, the
/// status HTTP gives a server that is temporarily unable to answer), and a full disk
/// ([`StorageFull`](Error::StorageFull), 507 Insufficient Storage: HTTP's own status for "the
/// server cannot store what this request needs", RFC 4918 §11.5). 507 rather than 503 so
/// that a client or an alert can tell "free some disk space" from "the database is down";
/// both are 5xx, so a client that only knows "server error, retry later" does the right
/// thing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input does not conform: schema, patch, weights, import rules. `details` lists every
    /// problem found, each with its path.
    #[error("{message}")]
    Validation {
        /// Summary of what is wrong.
        message: String,
        /// One entry per problem found.
        details: Vec<ErrorDetail>,
        /// The underlying parse error, where there was one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The credentials are missing, unknown or revoked.
    #[error("{message}")]
    AuthenticationRequired {
        /// What was wrong with the credentials.
        message: String,
    },
    /// The credentials are valid but lack a permission the operation needs.
    #[error("{message}")]
    NoAccess {
        /// Names the missing permission(s).
        message: String,
        /// The missing permissions, by Unleash name.
        permissions: Vec<String>,
    },
    /// A project, feature, environment, role … does not exist.
    #[error("{message}")]
    NotFound {
        /// Says which resource is missing.
        message: String,
        /// Where, when a request names several things (a bulk operation's features).
        details: Vec<ErrorDetail>,
    },
    /// A name is already taken.
    #[error("{message}")]
    NameExists {
        /// Says which name.
        message: String,
    },
    /// The thing to delete or change is still used by others (a segment or context field by
    /// flags' strategies, a strategy definition or tag type by flags): nothing was changed.
    /// `details` names each user (`flag "f" in environment "e"`).
    #[error("{message}")]
    InUse {
        /// Says what is in use, and by how many.
        message: String,
        /// One entry per user.
        details: Vec<ErrorDetail>,
    },
    /// Concurrent writers kept changing what this operation read, and it gave up after its
    /// bounded number of retries. Nothing was written; the caller may try again.
    #[error("{message}")]
    Contention {
        /// Says what was contended.
        message: String,
    },
    /// Too many streams are open, over the server or over the key
    /// ([`PushConfig`](crate::admin::PushConfig)); the client may poll instead or retry later.
    #[error("{message}")]
    TooManyRequests {
        /// Which limit was reached.
        message: String,
    },
    /// The store failed: I/O, corruption, a store that stopped after a failed write.
    #[error("the store failed: {0}")]
    Store(#[source] StoreError),
    /// The store's backend cannot be reached or did not answer in time (a database that is
    /// down, restarting or failing over). Nothing was written, unless the connection was lost
    /// while a commit was in flight (the store's error then says its outcome is unknown).
    /// Retry later; the store carries on by itself once the backend is back.
    #[error("the store is unavailable: {source}")]
    ServiceUnavailable {
        /// The store's error ([`StoreError::Unavailable`]).
        #[source]
        source: StoreError,
    },
    /// The service is in maintenance mode (`POST /api/admin/maintenance`): every change is
    /// refused until an administrator turns it off; reads, the SDKs' APIs and their metrics
    /// and registrations go on. 503, as Unleash answers (its body has only the message,
    /// which is the same; the name is ours). Nothing was written.
    #[error("{message}")]
    Maintenance {
        /// Says that the service is in maintenance mode.
        message: String,
    },
    /// The store is out of disk space: the write was refused and changed nothing. Reads
    /// still work, and writes work again as soon as space is freed, without a restart.
    #[error("the store is out of disk space: {source}")]
    StorageFull {
        /// The store's error ([`StoreError::OutOfSpace`]).
        #[source]
        source: StoreError,
    },
    /// A bug in this crate: something it should always be able to do failed (serialising
    /// its own values, a handler that panicked). Logged with its cause; the client sees only
    /// a 500.
    #[error("internal error: {message}")]
    Internal {
        /// What failed, for the logs.
        message: String,
        /// The underlying error, where there was one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl Error {
    /// The stable name of this kind, as sent in the error body's `name`.
    pub fn name(&self) -> &'static str {
        match self {
            Error::Validation { .. } => "ValidationError",
            Error::AuthenticationRequired { .. } => "AuthenticationRequired",
            Error::NoAccess { .. } => "NoAccessError",
            Error::NotFound { .. } => "NotFoundError",
            Error::NameExists { .. } => "NameExistsError",
            Error::Contention { .. } | Error::InUse { .. } => "ConflictError",
            Error::TooManyRequests { .. } => "TooManyRequests",
            Error::Store(_) | Error::Internal { .. } => "InternalError",
            Error::ServiceUnavailable { .. } => "ServiceUnavailable",
            Error::Maintenance { .. } => "MaintenanceModeError",
            Error::StorageFull { .. } => "InsufficientStorage",
        }
    }

    /// The HTTP status of this kind.
    pub fn status(&self) -> u16 {
        match self {
            Error::Validation { .. } => 400,
            Error::AuthenticationRequired { .. } => 401,
            Error::NoAccess { .. } => 403,
            Error::NotFound { .. } => 404,
            Error::NameExists { .. } | Error::Contention { .. } | Error::InUse { .. } => 409,
            Error::TooManyRequests { .. } => 429,
            Error::Store(_) | Error::Internal { .. } => 500,
            Error::ServiceUnavailable { .. } | Error::Maintenance { .. } => 503,
            Error::StorageFull { .. } => 507,
        }
    }

    /// The problems listed by a validation error, or the users of what is in use; empty for
    /// other kinds.
    pub fn details(&self) -> &[ErrorDetail] {
        match self {
            Error::Validation { details, .. }
            | Error::InUse { details, .. }
            | Error::NotFound { details, .. } => details,
            _ => &[],
        }
    }

    /// A validation error with one problem per detail. The message summarises them.
    pub fn validation(message: impl Into<String>, details: Vec<ErrorDetail>) -> Self {
        Error::Validation {
            message: message.into(),
            details,
            source: None,
        }
    }

    /// A validation error about one thing at one path.
    pub fn invalid_at(path: impl Into<String>, message: impl Into<String>) -> Self {
        let detail = ErrorDetail::at(path, message);
        Error::Validation {
            message: detail.to_string(),
            details: vec![detail],
            source: None,
        }
    }

    /// A not-found error with the given message.
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::NotFound {
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// A not-found error naming each missing thing at its path.
    pub fn not_found_at(message: impl Into<String>, details: Vec<ErrorDetail>) -> Self {
        Error::NotFound {
            message: message.into(),
            details,
        }
    }

    /// An internal error (a bug of this crate) described by `message`, caused by `source`.
    pub fn internal(
        message: impl Into<String>,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Internal {
            message: message.into(),
            source,
        }
    }

    /// A name-exists error with the given message.
    pub fn name_exists(message: impl Into<String>) -> Self {
        Error::NameExists {
            message: message.into(),
        }
    }

    /// The body of this error as the HTTP contract returns it, with a fresh id.
    ///
    /// A store failure's body says only that the store failed: its cause is for the logs
    /// (`tracing`), not for clients.
    pub fn body(&self) -> ErrorBody {
        let message = match self {
            Error::Store(_) => "The store failed to complete the operation.".to_owned(),
            Error::Internal { .. } => {
                "The server failed to complete the operation (an internal error).".to_owned()
            }
            Error::ServiceUnavailable { .. } => "The store's database cannot be reached or did \
                 not answer in time; retry later. If the connection was lost while a write was \
                 in flight, it may or may not have been applied: re-read before retrying."
                .to_owned(),
            Error::StorageFull { .. } => "The store is out of disk space: the change was not \
                 made. Reads still work; writes work again once space is freed."
                .to_owned(),
            other => other.to_string(),
        };
        let details = match self {
            Error::Validation { details, .. }
            | Error::InUse { details, .. }
            | Error::NotFound { details, .. } => details.clone(),
            Error::NoAccess { permissions, .. } => permissions
                .iter()
                .map(|p| ErrorDetail::general(format!("missing permission {p}")))
                .collect(),
            _ => Vec::new(),
        };
        ErrorBody {
            id: uuid::Uuid::new_v4(),
            name: self.name().to_owned(),
            message,
            details,
        }
    }
}

impl From<StoreError> for Error {
    /// A store's failure by what it means to the caller: out of space and unavailable are
    /// kinds of their own (507, 503), everything else is [`Error::Store`] (500).
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::OutOfSpace { .. } => Error::StorageFull { source: error },
            StoreError::Unavailable { .. } => Error::ServiceUnavailable { source: error },
            other => Error::Store(other),
        }
    }
}

/// The error body of the HTTP contract: `{id, name, message, details?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// A fresh id for this error instance.
    pub id: uuid::Uuid,
    /// The kind's [`Error::name`].
    pub name: String,
    /// What went wrong.
    pub message: String,
    /// One entry per problem, where the kind lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<ErrorDetail>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_are_500s_that_say_nothing_of_their_cause() {
        let source = serde_json::from_str::<u8>("x").unwrap_err();
        let error = Error::internal("could not encode the secret sauce", Some(Box::new(source)));
        assert_eq!(error.status(), 500);
        assert_eq!(error.name(), "InternalError");
        let body = error.body();
        assert!(!body.message.contains("secret sauce"), "{}", body.message);
        assert!(std::error::Error::source(&error).is_some());
        // Store failures stay store failures.
        let store = Error::from(StoreError::Backend {
            message: "connection lost".into(),
            source: None,
        });
        assert!(matches!(store, Error::Store(_)));
        assert_ne!(store.body().message, body.message);
    }

    #[test]
    fn a_full_disk_and_an_unreachable_database_are_named() {
        let full = Error::from(StoreError::OutOfSpace {
            context: "could not make room in /data/journal-1".into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        });
        assert_eq!((full.status(), full.name()), (507, "InsufficientStorage"));
        let body = full.body();
        assert!(
            body.message.contains("out of disk space"),
            "{}",
            body.message
        );
        // The path is for the logs.
        assert!(!body.message.contains("/data"), "{}", body.message);
        let down = Error::from(StoreError::Unavailable {
            message: "PostgreSQL: commit: connection refused".into(),
            source: None,
        });
        assert_eq!((down.status(), down.name()), (503, "ServiceUnavailable"));
        assert!(down.body().message.contains("cannot be reached"));
    }
}
