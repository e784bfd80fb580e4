//! The record reads a [`PostgresStore`](super::PostgresStore) and its views share. The
//! statements are the same; only where they run differs: the store runs each on a pooled
//! connection (again on another if that one is dead), a view runs them all in its one
//! `REPEATABLE READ` transaction.

use async_trait::async_trait;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::sql::{Statements, prefix_upper_bound};
use super::{listing_of, records_in_order, versioned};
use crate::store::{Collection, Key, Listing, StoreError, Versioned};

/// Somewhere read statements run.
#[async_trait]
pub(super) trait Queries: Sync {
    /// The prepared statements' text.
    fn statements(&self) -> &Statements;

    /// Run one read statement; `what` names it in errors.
    async fn query(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError>;

    /// Run one read statement on a snapshot with no revision in flight below what it sees
    /// (see `batch.rs`, "Commits in parallel"): for reads whose revision a later commit
    /// relies on (a listing's, for a collection precondition) or that page through the
    /// event log. A view's snapshot is such a snapshot already.
    async fn query_settled(
        &self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError>;
}

/// The record at `key`.
pub(super) async fn get(
    queries: &(impl Queries + ?Sized),
    key: &Key,
) -> Result<Option<Versioned>, StoreError> {
    let what = "reading a record";
    let rows = queries
        .query(
            what,
            &queries.statements().get,
            &[&key.collection.as_str(), &key.id],
        )
        .await?;
    rows.first()
        .map(|row| versioned(row, 0, 1, what))
        .transpose()
}

/// The records at `keys`, in their order.
pub(super) async fn get_many(
    queries: &(impl Queries + ?Sized),
    keys: &[Key],
) -> Result<Vec<Option<Versioned>>, StoreError> {
    let what = "reading records";
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let collections: Vec<&str> = keys.iter().map(|k| k.collection.as_str()).collect();
    let ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
    let rows = queries
        .query(what, &queries.statements().get_many, &[&collections, &ids])
        .await?;
    records_in_order(&rows, keys.len(), what)
}

/// The records of `collection` whose ids start with `prefix`.
pub(super) async fn list(
    queries: &(impl Queries + ?Sized),
    collection: Collection,
    prefix: &str,
) -> Result<Listing, StoreError> {
    let what = "listing records";
    let name = collection.as_str();
    let statements = queries.statements();
    let rows = match prefix_upper_bound(prefix) {
        Some(upper) => {
            queries
                .query_settled(what, &statements.list_range, &[&name, &prefix, &upper])
                .await?
        }
        None => {
            queries
                .query_settled(what, &statements.list_from, &[&name, &prefix])
                .await?
        }
    };
    listing_of(&rows, what)
}
