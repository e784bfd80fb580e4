//! The store's own schema migrations: versioned SQL files in the crate, applied in order, each
//! recorded in `schema_migrations`.

use deadpool_postgres::Client;

use super::failure::{backend, plain};
use super::sql::quote_identifier;
use crate::store::StoreError;

/// One step of the schema's history.
#[derive(Debug)]
pub(super) struct Migration {
    /// Its position; applied in increasing order, never renumbered.
    pub version: i32,
    /// A short name, recorded beside the version for whoever reads the table.
    pub name: &'static str,
    /// The statements, run with `search_path` set to the store's schema.
    pub sql: &'static str,
}

/// Every migration, oldest first. Append only: a released migration never changes.
pub(super) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "initial",
        sql: include_str!("migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "event filters",
        sql: include_str!("migrations/0002_event_filters.sql"),
    },
    Migration {
        version: 3,
        name: "parallel commits",
        sql: include_str!("migrations/0003_parallel_commits.sql"),
    },
    Migration {
        version: 4,
        name: "commit functions",
        sql: include_str!("migrations/0004_commit_functions.sql"),
    },
    Migration {
        version: 5,
        name: "computed lock ids",
        sql: include_str!("migrations/0005_computed_lock_ids.sql"),
    },
    Migration {
        version: 6,
        name: "event authors",
        sql: include_str!("migrations/0006_event_authors.sql"),
    },
];

/// The first key of the advisory lock migrations take; the second is the hash of the schema
/// name, so stores on different schemas do not wait for each other.
const LOCK_CLASS: i32 = 0x7461_646d; // "tadm"

/// Bring `schema` up to the latest migration, creating it if needed.
///
/// Everything happens in one transaction that first takes a transaction-scoped advisory lock:
/// when several instances start at once, one migrates while the others wait, and each then
/// re-reads which migrations are applied, so every migration runs exactly once. A failed
/// migration rolls back whole.
pub(super) async fn migrate(client: &mut Client, schema: &str) -> Result<(), StoreError> {
    let quoted = quote_identifier(schema);
    let fail = |what: &str, e| backend(&format!("migrating schema {schema}: {what}"), e);
    let tx = client.transaction().await.map_err(|e| fail("begin", e))?;
    // A migration (and the wait for another instance's) may take longer than the sessions'
    // statement timeout: it runs once, at start, and must not be cut off halfway.
    tx.batch_execute("SET LOCAL statement_timeout = 0")
        .await
        .map_err(|e| fail("lifting the statement timeout", e))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1::int4, hashtext($2::text))",
        &[&LOCK_CLASS, &schema],
    )
    .await
    .map_err(|e| fail("taking the migration lock", e))?;

    // Check before creating: CREATE SCHEMA IF NOT EXISTS still demands the CREATE privilege
    // on the database, which a store given an existing schema need not have.
    let exists = tx
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .await
        .map_err(|e| fail("looking for the schema", e))?
        .is_some();
    let mut setup = String::new();
    if !exists {
        setup.push_str(&format!("CREATE SCHEMA {quoted};"));
    }
    setup.push_str(&format!(
        "SET LOCAL search_path TO {quoted};
         CREATE TABLE IF NOT EXISTS {quoted}.schema_migrations (
             version integer PRIMARY KEY,
             name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
         );"
    ));
    tx.batch_execute(&setup)
        .await
        .map_err(|e| fail("creating the schema", e))?;

    let applied: Vec<i32> = tx
        .query(
            &format!("SELECT version FROM {quoted}.schema_migrations ORDER BY version"),
            &[],
        )
        .await
        .map_err(|e| fail("reading schema_migrations", e))?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(|e| fail("reading schema_migrations", e))?;
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    if let Some(&newest) = applied.last()
        && newest > known
    {
        // A newer version of this crate migrated the schema; its data may mean things this
        // version does not know, so refuse rather than guess.
        return Err(plain(format!(
            "PostgreSQL schema {schema} is at migration {newest}; this version of toggle-admin \
             knows migrations up to {known}"
        )));
    }

    for migration in MIGRATIONS {
        if applied.contains(&migration.version) {
            continue;
        }
        let what = format!(
            "applying migration {} ({})",
            migration.version, migration.name
        );
        tx.batch_execute(migration.sql)
            .await
            .map_err(|e| fail(&what, e))?;
        tx.execute(
            &format!("INSERT INTO {quoted}.schema_migrations (version, name) VALUES ($1, $2)"),
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(|e| fail(&what, e))?;
        tracing::info!(
            schema,
            version = migration.version,
            name = migration.name,
            "applied migration"
        );
    }
    tx.commit().await.map_err(|e| fail("commit", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_from_one() {
        for (i, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version, i as i32 + 1, "{}", migration.name);
            assert!(!migration.sql.trim().is_empty());
        }
    }
}
