//! Turning PostgreSQL and pool errors into [`StoreError`]s, and telling a lost connection from
//! other failures (a lost connection at the start of an operation is worth one more try).
//!
//! A database that cannot be reached or does not answer in time is
//! [`StoreError::Unavailable`]: a connection refused, lost or timed out, a server shutting
//! down or starting up, a statement cancelled by `statement_timeout`, no free connection
//! within the pool's wait. Everything else (a refused statement, bad credentials, a missing
//! database) is [`StoreError::Backend`]: waiting would not help.

use std::error::Error as _;

use deadpool_postgres::PoolError;
use tokio_postgres::error::SqlState;

use crate::store::StoreError;

/// A backend error that says what failed and keeps PostgreSQL's error as the source.
pub(super) fn backend(what: &str, source: tokio_postgres::Error) -> StoreError {
    // tokio-postgres prints only "db error" for a server error; the server's own message is
    // what tells an operator what went wrong, so it goes in the message too.
    let detail = describe(&source);
    let message = format!("PostgreSQL: {what}: {detail}");
    if connection_lost(&source) || timed_out(&source) {
        StoreError::Unavailable {
            message,
            source: Some(Box::new(source)),
        }
    } else {
        StoreError::Backend {
            message,
            source: Some(Box::new(source)),
        }
    }
}

/// An unavailable-backend error with no underlying error (a client-side timeout).
pub(super) fn unavailable(message: String) -> StoreError {
    StoreError::Unavailable {
        message,
        source: None,
    }
}

/// The same error again, for another caller of one batch: its kind and message, without
/// its source (which cannot be cloned).
pub(super) fn copy(error: &StoreError) -> StoreError {
    match error {
        StoreError::Unavailable { message, .. } => unavailable(message.clone()),
        StoreError::Conflict(what) => StoreError::Conflict(what.clone()),
        other => plain(other.to_string()),
    }
}

/// True when the server cancelled a statement for running past `statement_timeout` (or a
/// lock wait past `lock_timeout`): it is too busy or blocked to answer in time.
pub(super) fn timed_out(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        *code == SqlState::QUERY_CANCELED || *code == SqlState::LOCK_NOT_AVAILABLE
    })
}

/// The server's message and SQLSTATE for a server error; otherwise the error and its causes
/// (tokio-postgres prints "error connecting to server" and keeps the reason in its source).
fn describe(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        let next_text = next.to_string();
        if !text.contains(&next_text) {
            text.push_str(": ");
            text.push_str(&next_text);
        }
        cause = next.source();
    }
    text
}

/// A backend error for a connection the pool could not hand out.
pub(super) fn pool(what: &str, source: PoolError) -> StoreError {
    let detail = match &source {
        PoolError::Backend(e) => describe(e),
        other => other.to_string(),
    };
    let message = format!("PostgreSQL: {what}: could not get a connection: {detail}");
    let down = match &source {
        // No connection within the wait, or connecting took too long.
        PoolError::Timeout(_) => true,
        // Refused, reset, or a server shutting down or starting up.
        PoolError::Backend(e) => connection_lost(e),
        _ => false,
    };
    if down {
        StoreError::Unavailable {
            message,
            source: Some(Box::new(source)),
        }
    } else {
        StoreError::Backend {
            message,
            source: Some(Box::new(source)),
        }
    }
}

/// A backend error with no underlying error (bad configuration, unexpected stored data).
pub(super) fn plain(message: String) -> StoreError {
    StoreError::Backend {
        message,
        source: None,
    }
}

/// True when `error` means the connection is gone (closed, reset, or the server ended the
/// session), as opposed to a statement that failed on a working connection.
pub(super) fn connection_lost(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        // Class 08 is "connection exception"; 57P01-57P03 are the server shutting the
        // session down (pg_terminate_backend, a restart, a server still starting up).
        return code.code().starts_with("08")
            || *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW;
    }
    error
        .source()
        .is_some_and(|source| source.downcast_ref::<std::io::Error>().is_some())
}

/// True when the server answered a request by ending the session (`pg_terminate_backend`,
/// a shutdown, a server still starting up): the request did not run. Requests sent after it
/// on the same connection did not run either.
pub(super) fn session_ended_instead(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| {
        *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_errors_say_what_failed() {
        let error = plain("bad schema".to_owned());
        assert_eq!(error.to_string(), "bad schema");
        assert!(std::error::Error::source(&error).is_none());
    }
}
