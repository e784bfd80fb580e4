//! One commit as one transaction: lock the keys it reads and writes, enter the gate, check the
//! preconditions and apply every write and event, commit.
//!
//! A change set committed alone is `BEGIN`, one call of the function `commit_change_set` of
//! schema migration 5 (which takes the key locks and the gate, checks the preconditions and
//! applies the writes and events) and `COMMIT`, all sent at once: one round trip whatever the
//! size of the change set (the writes and events travel as arrays). A batch is `BEGIN`, one
//! call per change set, the first of which takes the key locks of all of them, and `COMMIT`,
//! sent at once too. `COMMIT` is what says the transaction is durable: the answer to a
//! statement alone in an implicit transaction comes before that transaction commits.
//!
//! The price of one round trip: once the request is on its way, `COMMIT` is too, so a
//! connection lost before the answer leaves the outcome unknown, and the caller gets an error
//! that says so instead of a silent retry. The commit is sent again on another connection
//! only when nothing of it can have committed: the connection was known to be closed before
//! anything was sent, or the server answered `BEGIN` or a change set by ending the session
//! (so the `COMMIT` after them never ran).

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use futures_util::future::{MaybeDone, join, join3, maybe_done};
use serde_json::value::RawValue;
use tokio_postgres::types::{Json as PgJson, ToSql};

use super::failure::{backend, connection_lost, plain, session_ended_instead};
use super::known::KnownRecords;
use super::lock_ids::{self, KeyLock};
use super::notify::Carry;
use super::sql::{GATE_CLASS, Statements};
use crate::store::{
    ChangeSet, Collection, Json, Key, Precondition, Revision, StoreError, Versioned, Write,
};

/// A change set laid out as the array parameters of the check and apply statements.
pub(super) struct Plan<'a> {
    preconditions: &'a [Precondition],
    /// The locks of the keys it expects or writes, in the order they are taken, each once
    /// ([`lock_ids::ordered`]).
    lock_keys: Vec<i64>,
    lock_exclusive: Vec<bool>,
    check_collections: Vec<&'static str>,
    check_ids: Vec<Option<&'a str>>,
    check_revisions: Vec<i64>,
    put_collections: Vec<&'static str>,
    put_ids: Vec<&'a str>,
    put_values: Vec<PgJson<&'a RawValue>>,
    delete_collections: Vec<&'static str>,
    delete_ids: Vec<&'a str>,
    touched: Vec<&'static str>,
    event_types: Vec<&'a str>,
    event_created_by: Vec<&'a str>,
    event_created_at: Vec<DateTime<Utc>>,
    event_projects: Vec<Option<&'a str>>,
    event_features: Vec<Option<&'a str>>,
    event_environments: Vec<Option<&'a str>>,
    event_data: Vec<Option<PgJson<&'a RawValue>>>,
    event_pre_data: Vec<Option<PgJson<&'a RawValue>>>,
    event_created_by_user_id: Vec<Option<i64>>,
    event_tags: Vec<Option<PgJson<&'a RawValue>>>,
}

/// A revision as a `bigint`. Revisions never come near `i64::MAX` in practice; saturating
/// keeps the comparison right anyway (no stored revision equals or exceeds it).
fn to_bigint(revision: Revision) -> i64 {
    i64::try_from(revision.0).unwrap_or(i64::MAX)
}

impl<'a> Plan<'a> {
    /// The plan of `changes` for the store in `schema`.
    pub(super) fn new(schema: &str, changes: &'a ChangeSet) -> Self {
        let mut locks: Vec<KeyLock> = Vec::new();
        let mut plan = Plan {
            preconditions: &changes.preconditions,
            lock_keys: Vec::new(),
            lock_exclusive: Vec::new(),
            check_collections: Vec::with_capacity(changes.preconditions.len()),
            check_ids: Vec::with_capacity(changes.preconditions.len()),
            check_revisions: Vec::with_capacity(changes.preconditions.len()),
            put_collections: Vec::new(),
            put_ids: Vec::new(),
            put_values: Vec::new(),
            delete_collections: Vec::new(),
            delete_ids: Vec::new(),
            touched: Vec::new(),
            event_types: Vec::new(),
            event_created_by: Vec::new(),
            event_created_at: Vec::new(),
            event_projects: Vec::new(),
            event_features: Vec::new(),
            event_environments: Vec::new(),
            event_data: Vec::new(),
            event_pre_data: Vec::new(),
            event_created_by_user_id: Vec::new(),
            event_tags: Vec::new(),
        };
        for precondition in &changes.preconditions {
            let (collection, id, revision) = match precondition {
                Precondition::Record { key, revision } => {
                    (key.collection, Some(key.id.as_str()), revision)
                }
                Precondition::CollectionUnchanged {
                    collection,
                    revision,
                } => (*collection, None, revision),
            };
            if let Some(id) = id {
                locks.push((lock_ids::lock_id(schema, collection.as_str(), id), false));
            }
            plan.check_collections.push(collection.as_str());
            plan.check_ids.push(id);
            plan.check_revisions.push(to_bigint(*revision));
        }

        // Only each key's last write reaches the database (a later write to the same key
        // wins), which also keeps one statement from touching a row twice. A put moves its
        // collection's revision even when a later delete of the same key wins, as in
        // `StoreState::apply`, hence `touched`.
        let mut last_write: HashMap<(&str, &str), usize> = HashMap::new();
        let mut touched = BTreeSet::new();
        for (index, write) in changes.writes.iter().enumerate() {
            let key = write.key();
            last_write.insert((key.collection.as_str(), key.id.as_str()), index);
            locks.push((
                lock_ids::lock_id(schema, key.collection.as_str(), &key.id),
                true,
            ));
            if matches!(write, Write::Put { .. }) {
                touched.insert(key.collection.as_str());
            }
        }
        plan.touched = touched.into_iter().collect();
        (plan.lock_keys, plan.lock_exclusive) = lock_ids::ordered(&mut locks);
        for (index, write) in changes.writes.iter().enumerate() {
            let key = write.key();
            if last_write.get(&(key.collection.as_str(), key.id.as_str())) != Some(&index) {
                continue;
            }
            match write {
                Write::Put { key, value } => {
                    plan.put_collections.push(key.collection.as_str());
                    plan.put_ids.push(&key.id);
                    plan.put_values.push(PgJson(value.as_raw()));
                }
                Write::Delete { key } => {
                    plan.delete_collections.push(key.collection.as_str());
                    plan.delete_ids.push(&key.id);
                }
            }
        }

        for event in &changes.events {
            plan.event_types.push(&event.event_type);
            plan.event_created_by.push(&event.created_by);
            plan.event_created_at.push(event.created_at);
            plan.event_projects.push(event.project.as_deref());
            plan.event_features.push(event.feature_name.as_deref());
            plan.event_environments.push(event.environment.as_deref());
            plan.event_data
                .push(event.data.as_ref().map(|d| PgJson(d.as_raw())));
            plan.event_pre_data
                .push(event.pre_data.as_ref().map(|d| PgJson(d.as_raw())));
            plan.event_created_by_user_id.push(event.created_by_user_id);
            plan.event_tags
                .push(event.tags.as_ref().map(|d| PgJson(d.as_raw())));
        }
        plan
    }

    /// Whether the transaction takes the gate exclusive: for a collection precondition (the
    /// one without an id).
    fn exclusive_gate(&self) -> bool {
        self.check_ids.contains(&None)
    }

    /// The locks of this change set alone, for [`params`](Self::params).
    pub(super) fn own_locks(&self) -> KeyLocks<'_> {
        KeyLocks(&self.lock_keys, &self.lock_exclusive)
    }

    /// The parameters of the commit statement ([`Statements::commit`]), in its order, for a
    /// change set whose call takes `locks` (its own, its batch's, or none when an earlier
    /// call of its batch took them) and carries the notification `notify` (channel and
    /// instance) or none.
    pub(super) fn params<'p>(
        &'p self,
        statements: &'p Statements,
        locks: Option<KeyLocks<'p>>,
        exclusive_gate: &'p bool,
        notify: &'p [Option<&'p str>; 2],
    ) -> Vec<&'p (dyn ToSql + Sync)> {
        const NO_KEYS: &[i64] = &[];
        const NO_FLAGS: &[bool] = &[];
        let mut params: Vec<&'p (dyn ToSql + Sync)> =
            vec![&statements.schema, &GATE_CLASS, exclusive_gate];
        match locks {
            Some(KeyLocks(ids, exclusive)) => {
                params.extend([ids as &(dyn ToSql + Sync), exclusive]);
            }
            None => params.extend([&NO_KEYS as &(dyn ToSql + Sync), &NO_FLAGS]),
        }
        params.extend([
            &self.check_collections as &(dyn ToSql + Sync),
            &self.check_ids,
            &self.check_revisions,
            &self.put_collections,
            &self.put_ids,
            &self.put_values,
            &self.delete_collections,
            &self.delete_ids,
            &self.touched,
            &self.event_types,
            &self.event_created_by,
            &self.event_created_at,
            &self.event_projects,
            &self.event_features,
            &self.event_environments,
            &self.event_data,
            &self.event_pre_data,
            &notify[0],
            &notify[1],
            &self.event_created_by_user_id,
            &self.event_tags,
        ]);
        params
    }
}

/// Key locks as the commit statement takes them: lock ids in the order they are taken, and
/// whether each is exclusive.
#[derive(Clone, Copy)]
pub(super) struct KeyLocks<'a>(&'a Vec<i64>, &'a Vec<bool>);

/// What a transaction over some plans locks before its statements run: the keys of every
/// record they read or write, then the gate (see `batch.rs`, "Commits in parallel").
pub(super) struct Locks {
    /// The keys' lock ids, in the order they are taken, each once.
    ids: Vec<i64>,
    /// Whether each is exclusive (a key written) or shared (keys only expected).
    exclusive: Vec<bool>,
    /// Whether the gate is taken exclusive (a collection precondition) or shared.
    exclusive_gate: bool,
}

impl Locks {
    /// The locks of a transaction running `plans`.
    pub(super) fn of(plans: &[Plan<'_>]) -> Self {
        let mut all: Vec<KeyLock> = plans
            .iter()
            .flat_map(|plan| {
                plan.lock_keys
                    .iter()
                    .copied()
                    .zip(plan.lock_exclusive.iter().copied())
            })
            .collect();
        let (ids, exclusive) = lock_ids::ordered(&mut all);
        Locks {
            ids,
            exclusive,
            exclusive_gate: plans.iter().any(Plan::exclusive_gate),
        }
    }

    /// Whether the gate is taken exclusive.
    pub(super) fn exclusive_gate(&self) -> bool {
        self.exclusive_gate
    }

    /// The key locks, for the [`params`](Plan::params) of the batch's first call.
    pub(super) fn keys(&self) -> KeyLocks<'_> {
        KeyLocks(&self.ids, &self.exclusive)
    }
}

/// Run the change sets in one transaction on `client`, all sent at once (tokio-postgres sends
/// a connection's requests in the order they are first polled, and the server runs them in
/// that order): `BEGIN`, `statement` once per set of `params`, each change set seeing the
/// ones before it, then `COMMIT`. One round trip. The first call takes the key locks of the
/// whole batch ([`Locks::keys`]) and the gate, before its own checks; the others take the gate
/// again in the batch's mode, which costs nothing.
///
/// A statement that fails aborts the transaction, and the `COMMIT` then rolls it back:
/// nothing of it is committed, and the connection is left with no transaction open.
pub(super) async fn apply<'p>(
    client: &deadpool_postgres::Client,
    statements: &Statements,
    statement: &tokio_postgres::Statement,
    params: &'p [Vec<&'p (dyn ToSql + Sync)>],
    carry: Option<&Carry<'_>>,
) -> Applied {
    let notify = match carry {
        Some(_) => match client.prepare_cached(&statements.notify_latest).await {
            Ok(notify) => Some(notify),
            Err(e) => return Applied::NotSent(e),
        },
        None => None,
    };
    let notify_params: [&(dyn ToSql + Sync); 2] =
        [&carry.map(|c| c.channel), &carry.map(|c| c.instance)];
    let begin = client.batch_execute("BEGIN");
    let applied = in_order(params.iter().map(|p| client.query_one(statement, p)));
    // The notification carried, if any: its outcome does not matter (see `notify.rs`).
    let notified = async {
        if let Some(notify) = &notify {
            let _ = client.query_one(notify, &notify_params).await;
        }
    };
    // `join` and `join3` poll their futures in argument order.
    let (begun, (applied, (), committed)) = join(
        begin,
        join3(applied, notified, client.batch_execute("COMMIT")),
    )
    .await;
    Applied::Sent {
        opened: begun.map_err(|e| ("begin", e)),
        applied,
        committed,
    }
}

/// What became of the transaction [`apply`] sent.
pub(super) enum Applied {
    /// Preparing a statement failed: nothing of the transaction was sent.
    NotSent(tokio_postgres::Error),
    /// Everything was sent, `COMMIT` included.
    Sent {
        /// `BEGIN`; on failure, what failed.
        opened: Result<(), (&'static str, tokio_postgres::Error)>,
        /// Each change set's statement, in order.
        applied: Vec<Result<tokio_postgres::Row, tokio_postgres::Error>>,
        /// `COMMIT`: it succeeds on an aborted transaction too, which it rolls back.
        committed: Result<(), tokio_postgres::Error>,
    },
}

/// Run `futures` to completion, polling them in their order: so tokio-postgres sends their
/// requests in that order (`join_all` promises no order past 30 futures).
async fn in_order<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut slots: Vec<Pin<Box<MaybeDone<F>>>> = futures
        .into_iter()
        .map(|future| Box::pin(maybe_done(future)))
        .collect();
    poll_fn(|cx| {
        let mut done = true;
        for slot in &mut slots {
            done &= slot.as_mut().poll(cx).is_ready();
        }
        if done { Poll::Ready(()) } else { Poll::Pending }
    })
    .await;
    slots
        .iter_mut()
        .filter_map(|slot| slot.as_mut().take_output())
        .collect()
}

/// Why one attempt at a commit failed.
pub(super) enum Failure {
    /// The connection was found closed before anything that could commit was sent, so
    /// another connection may try again.
    StaleConnection(StoreError),
    /// The connection died with the commit under way: whether it committed is unknown. The
    /// error says so to the caller, and the connection must not go back to the pool.
    LostConnection(StoreError),
    /// Anything else, reported to the caller as is.
    Final(StoreError),
}

impl Failure {
    /// The failure for `error` while doing `what`.
    fn of(what: &str, error: tokio_postgres::Error) -> Self {
        if connection_lost(&error) {
            Failure::LostConnection(backend(what, error))
        } else {
            Failure::Final(backend(what, error))
        }
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Failure::Final(error)
    }
}

/// The commit statement, prepared on `client`. Nothing that could commit is sent on the way,
/// so a connection found closed (before anything is sent) or lost (while preparing) is
/// [`Failure::StaleConnection`]: another connection may take the commit.
pub(super) async fn prepare(
    client: &Client,
    statements: &Statements,
) -> Result<tokio_postgres::Statement, Failure> {
    if client.is_closed() {
        return Err(Failure::StaleConnection(plain(
            "PostgreSQL: commit: the connection is closed".into(),
        )));
    }
    client
        .prepare_cached(&statements.commit)
        .await
        .map_err(|e| {
            if connection_lost(&e) {
                Failure::StaleConnection(backend("commit: preparing", e))
            } else {
                Failure::Final(backend("commit: preparing", e))
            }
        })
}

/// Run `plan` alone in a transaction of its own on `client`: `BEGIN`, its call and `COMMIT`,
/// sent together.
pub(super) async fn run(
    client: &mut Client,
    statements: &Statements,
    plan: &Plan<'_>,
    known: &KnownRecords,
    carry: Option<&Carry<'_>>,
) -> Result<Revision, Failure> {
    let commit = prepare(client, statements).await?;
    let exclusive_gate = plan.exclusive_gate();
    let notify = [carry.map(|c| c.channel), carry.map(|c| c.instance)];
    let params = plan.params(statements, Some(plan.own_locks()), &exclusive_gate, &notify);
    // `BEGIN`, the call and `COMMIT` go out together. Not the call alone in a transaction of
    // its own: the server answers a statement before it commits the transaction that the
    // statement was alone in, so a commit that then fails (the session ended, the WAL not
    // written) would already look done to us. `COMMIT` answers once the commit is durable.
    let begin = client.batch_execute("BEGIN");
    let applied = client.query_one(&commit, &params);
    let committed = client.batch_execute("COMMIT");
    // `join` polls its futures in argument order, so the requests go out in that order.
    let ((begun, applied), committed) = join(join(begin, applied), committed).await;
    let unknown = |e| {
        Failure::of(
            "commit: the connection failed, so whether the change set was applied is unknown",
            e,
        )
    };
    match committed {
        // The server ended the session instead of running `BEGIN` or the call: `COMMIT`,
        // sent after them, never ran, so nothing was committed, and another connection may
        // send it all again (a pooled connection whose end we had not seen yet, or a
        // session ended while the call waited for a lock).
        Err(_) if begun.as_ref().is_err_and(session_ended_instead) => {
            return Err(Failure::StaleConnection(match begun {
                Err(e) => backend("commit: BEGIN", e),
                Ok(()) => plain("PostgreSQL: commit: the session ended".into()),
            }));
        }
        Err(_) if applied.as_ref().is_err_and(session_ended_instead) => {
            return Err(Failure::StaleConnection(match applied {
                Err(e) => backend("commit: writing the change set", e),
                Ok(_) => plain("PostgreSQL: commit: the session ended".into()),
            }));
        }
        Err(e) if connection_lost(&e) => return Err(unknown(e)),
        // A failed `COMMIT` rolled the transaction back.
        Err(e) => return Err(Failure::Final(backend("commit: COMMIT", e))),
        // On an aborted transaction, `COMMIT` rolls it back and succeeds: the failure is
        // the statement's.
        Ok(()) => {}
    }
    begun.map_err(|e| Failure::Final(backend("commit: BEGIN", e)))?;
    let row = applied.map_err(|e| Failure::Final(backend("commit: writing the change set", e)))?;
    outcome(plan, &row, known)?.map_err(Failure::Final)
}

/// What the commit statement answered for `plan`: its revision, or the conflict that kept it
/// out (nothing written).
pub(super) fn outcome(
    plan: &Plan<'_>,
    row: &tokio_postgres::Row,
    known: &KnownRecords,
) -> Result<Result<Revision, StoreError>, Failure> {
    let read = |e| Failure::of("commit: reading the outcome", e);
    let failing: Option<i64> = row.try_get(0).map_err(read)?;
    let revision: Option<i64> = row.try_get(1).map_err(read)?;
    match (failing, revision) {
        (Some(ord), _) => {
            let current: Option<PgJson<Vec<CurrentRecord>>> = row.try_get(2).map_err(read)?;
            learn_current(
                plan.preconditions,
                current.map(|c| c.0).unwrap_or_default(),
                known,
            );
            Ok(Err(conflict(plan.preconditions, ord)))
        }
        (None, Some(revision)) => Ok(Ok(Revision(u64::try_from(revision).unwrap_or_default()))),
        (None, None) => Err(Failure::Final(plain(
            "PostgreSQL: commit: a change set neither failed nor took a revision".into(),
        ))),
    }
}

/// A record as a refused commit statement answers it: collection, id, value, revision.
type CurrentRecord = (String, String, Box<RawValue>, i64);

/// What a refused change set expected, as it is now: each record the statement found
/// replaces what the instance knew of it, and one it did not find is forgotten. The caller
/// then decides again on the records as they are, without reading them.
fn learn_current(
    preconditions: &[Precondition],
    current: Vec<CurrentRecord>,
    known: &KnownRecords,
) {
    for precondition in preconditions {
        if let Precondition::Record { key, .. } = precondition {
            known.forget_key(key);
        }
    }
    for (collection, id, value, revision) in current {
        let Some(collection) = Collection::from_name(&collection) else {
            continue;
        };
        let record = Versioned {
            value: Json::from_raw(value),
            revision: Revision(u64::try_from(revision).unwrap_or_default()),
        };
        known.learn(&Key::new(collection, id), &record);
    }
}

/// The conflict for the precondition at 1-based position `ord`, worded as in every store.
fn conflict(preconditions: &[Precondition], ord: i64) -> StoreError {
    let index = usize::try_from(ord - 1).unwrap_or(usize::MAX);
    match preconditions.get(index) {
        Some(Precondition::Record { key, .. }) => StoreError::Conflict(key.to_string()),
        Some(Precondition::CollectionUnchanged { collection, .. }) => {
            StoreError::Conflict(format!("collection {collection}"))
        }
        None => StoreError::Conflict("a precondition".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{Collection, Key};

    #[test]
    fn only_the_last_write_to_a_key_is_planned() {
        let a = Key::new(Collection::Features, "a");
        let b = Key::new(Collection::Projects, "b");
        let mut changes = ChangeSet::new();
        changes
            .put(a.clone(), json!(1))
            .delete(a.clone())
            .delete(b.clone())
            .put(b.clone(), json!(2))
            .put(a.clone(), json!(3))
            .delete(Key::new(Collection::Segments, "s"));
        let plan = Plan::new("s", &changes);
        assert_eq!(plan.put_ids, vec!["b", "a"]);
        let values: Vec<&str> = plan.put_values.iter().map(|v| v.0.get()).collect();
        assert_eq!(values, vec!["2", "3"]);
        assert_eq!(plan.delete_collections, vec!["segments"]);
        assert_eq!(plan.touched, vec!["features", "projects"]);
    }

    #[test]
    fn conflicts_name_the_failing_precondition() {
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(Key::new(Collection::Features, "a"), Revision(3))
            .expect_collection(Collection::Projects, Revision(2));
        let plan = Plan::new("s", &changes);
        assert_eq!(plan.check_ids, vec![Some("a"), None]);
        assert_eq!(
            conflict(plan.preconditions, 1).to_string(),
            "conflict: features/a changed since it was read"
        );
        assert_eq!(
            conflict(plan.preconditions, 2).to_string(),
            "conflict: collection projects changed since it was read"
        );
    }
}
