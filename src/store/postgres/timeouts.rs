//! How long the store waits for the database: it never waits without a bound.
//!
//! * **Connecting** is bounded by [`PostgresConfig::connect_timeout`](super::PostgresConfig)
//!   (the connection's own timeout, and the pool's for creating one).
//! * **Statements** are bounded on the server by its `statement_timeout`, which every
//!   session of the store sets to [`PostgresConfig::statement_timeout`](super::PostgresConfig)
//!   (a statement past it is cancelled: SQLSTATE 57014). That does not help when the server
//!   cannot answer at all (a host that froze, a network that drops packets), so the client
//!   waits for one attempt's round trips at most that long plus [`GRACE`], then gives up on
//!   the connection: it leaves the pool, and the operation fails with
//!   [`StoreError::Unavailable`].
//! * **A free connection** is waited for at most
//!   [`PostgresConfig::wait_timeout`](super::PostgresConfig).
//!
//! A commit cut off by the client's bound may have been applied (its `COMMIT` may have
//! reached the server): the error says its outcome is unknown, as for a lost connection.

use std::future::Future;
use std::time::Duration;

use super::failure::unavailable;
use crate::store::StoreError;

/// How much longer than the server's `statement_timeout` the client waits for an attempt:
/// enough for the server's own cancellation (a clearer error) to arrive first.
pub(super) const GRACE: Duration = Duration::from_secs(2);

/// The client's bound for one attempt at an operation whose statements run for at most
/// `statement_timeout` each on the server.
pub(super) fn client_bound(statement_timeout: Duration) -> Duration {
    statement_timeout.saturating_add(GRACE)
}

/// The `options` startup parameter that sets the session's `statement_timeout`, added to
/// `existing` (the connection string's own `options`, which win: PostgreSQL applies the
/// last setting, so the connection string's come after).
pub(super) fn session_options(existing: Option<&str>, statement_timeout: Duration) -> String {
    let ours = format!(
        "-c statement_timeout={}",
        statement_timeout.as_millis().max(1)
    );
    match existing {
        Some(theirs) if !theirs.trim().is_empty() => format!("{ours} {theirs}"),
        _ => ours,
    }
}

/// Run `operation`, or give up on it once `limit` has passed (it is dropped then). The
/// caller then drops the connection `operation` used, and fails with [`Elapsed::error`].
pub(super) async fn bounded<T>(
    limit: Duration,
    operation: impl Future<Output = T>,
) -> Result<T, Elapsed> {
    tokio::time::timeout(limit, operation)
        .await
        .map_err(|_| Elapsed(limit))
}

/// An operation the database did not answer within its bound.
#[derive(Debug, Clone, Copy)]
pub(super) struct Elapsed(Duration);

impl Elapsed {
    /// The error for `what`, which did not finish in time; for a commit, `outcome_unknown`.
    pub(super) fn error(self, what: &str, outcome_unknown: bool) -> StoreError {
        let mut message = format!(
            "PostgreSQL: {what}: no answer within {} s (the database is unreachable or \
             too busy); the connection was dropped",
            self.0.as_secs_f64()
        );
        if outcome_unknown {
            message.push_str(", so whether the change set was applied is unknown");
        }
        unavailable(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_strings_options_come_after_ours() {
        let ten = Duration::from_secs(10);
        assert_eq!(session_options(None, ten), "-c statement_timeout=10000");
        assert_eq!(
            session_options(Some("-c statement_timeout=0"), ten),
            "-c statement_timeout=10000 -c statement_timeout=0"
        );
    }

    #[tokio::test]
    async fn an_operation_past_its_bound_is_unavailable() {
        let never = std::future::pending::<()>();
        let elapsed = bounded(Duration::from_millis(10), never).await.unwrap_err();
        let error = elapsed.error("commit", true);
        assert!(error.is_unavailable());
        assert!(error.to_string().contains("unknown"), "{error}");
    }
}
