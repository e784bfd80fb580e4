//! The flow: read → decide → commit, the one road of every write.
//!
//! An operation is admitted by a [`Permit`] (`permit.rs`), then runs
//! [`ToggleAdmin::change`] with a closure that reads through a [`Tx`], decides (a pure
//! domain function: validate, patch, normalise, plan) and writes through the same `Tx`, with
//! its events. The flow then commits:
//!
//! * every record read through the `Tx` becomes a precondition at the revision read, and
//!   every collection listed one at the collection's revision, by construction: an author
//!   cannot forget one, so no update is ever lost;
//! * the records the permit rested on are preconditions too, so a key revoked (or a user's
//!   access changed, or the user renamed: the permit names the events' author from the
//!   same read, `author.rs`) before the commit makes it conflict;
//! * on a conflict the flow decides the permit again, and runs the closure again on fresh
//!   reads, at most [`MAX_ATTEMPTS`] times (each conflict means another writer committed, so
//!   the system makes progress), then gives up with [`Error::Contention`];
//! * a change set that writes nothing is not committed (an operation that finds nothing to
//!   do writes no event);
//! * while the service is in maintenance mode (`maintenance.rs`) every write that would
//!   change something is refused with [`Error::Maintenance`], and every commit expects the
//!   switch's record at the revision the write saw, so a write racing the switch's commit
//!   (on any instance) conflicts and is refused on its retry. The exemptions are explicit:
//!   [`ToggleAdmin::change_in_maintenance`] (the switch itself, SDK registrations) and
//!   [`InMaintenance::Allowed`] for the writes no key admits (buffered SDK metrics);
//! * text with NUL is refused before it reaches any store (PostgreSQL cannot hold it, and
//!   the stores must agree);
//! * every commit is announced to the read side (client documents, deltas, streams) the same
//!   way, at once.
//!
//! The variants path decides batches of concurrent writers on a decision view and submits
//! them ([`ToggleAdmin::submit_permitted`]); it commits through here too, and its commits are
//! announced the same way.

use std::future::Future;
use std::pin::Pin;

use chrono::Utc;

use super::ToggleAdmin;
use super::author::Author;
use super::permit::{Need, Permit};
use super::reader::{Reader, Tracked};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::store::{
    Accepted, ChangeSet, Collection, Json, Key, Listing, NewEvent, Revision, Store, StoreError,
    Versioned,
};

/// How often an operation re-reads and decides again after a
/// [`StoreError::Conflict`] before it gives up with [`Error::Contention`]. Each retry means
/// another writer committed, so the system as a whole always makes progress; the bound only
/// keeps one caller from waiting forever under extreme contention.
pub(crate) const MAX_ATTEMPTS: usize = 200;

/// Whether a write may go on while the service is in maintenance mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InMaintenance {
    /// Refused with [`Error::Maintenance`]: every change people make.
    Refused,
    /// Allowed: turning maintenance off, and what SDKs report (registrations, metrics).
    Allowed,
}

/// The future of one attempt's decision.
pub(crate) type Decision<'t, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 't>>;

/// One attempt of a write: what it read and what it writes.
#[derive(Debug)]
pub(crate) struct Tx<'s> {
    admin: &'s ToggleAdmin,
    tracked: Tracked<'s>,
    changes: ChangeSet,
    /// Who the events are by: the permit's author (decided on the permit's reads, which
    /// are preconditions of the commit).
    author: Author,
}

impl<'s> Tx<'s> {
    fn new(admin: &'s ToggleAdmin, author: Author) -> Self {
        Self {
            admin,
            tracked: Tracked::new(admin.store.as_ref()),
            changes: ChangeSet::new(),
            author,
        }
    }

    /// Who the change is by, as its events name them (`createdBy`).
    pub(crate) fn actor(&self) -> &str {
        &self.author.name
    }

    /// Who the change is by: for the events of a change set built elsewhere ([`event`]),
    /// and the user a feature it creates shows.
    pub(crate) fn author(&self) -> &Author {
        &self.author
    }

    /// A reader whose every read becomes a precondition of this transaction's commit.
    pub(crate) fn reader(&self) -> Reader<'_> {
        Reader::Tracked(&self.tracked)
    }

    /// The record at `key` (a precondition: it must still be at this revision, or absent).
    pub(crate) async fn get(&self, key: &Key) -> Result<Option<Versioned>> {
        let records = self.tracked.get_many(std::slice::from_ref(key)).await?;
        Ok(records.into_iter().next().flatten())
    }

    /// The records at `keys`, in one read (each a precondition).
    pub(crate) async fn read<const N: usize>(
        &self,
        keys: &[Key; N],
    ) -> Result<[Option<Versioned>; N]> {
        self.reader().read(keys).await
    }

    /// The records of `collection` whose id starts with `prefix` (the collection's revision
    /// a precondition: nothing in it may change before the commit).
    pub(crate) async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing> {
        self.reader().list(collection, prefix).await
    }

    /// Decide, on what this transaction read, that `caller` holds every one of `needs`: for
    /// an operation whose needs depend on the records it reads (project access: who gains
    /// or loses which role). The records the decision rests on become preconditions.
    pub(crate) async fn require(&self, caller: &Caller, needs: &[Need<'_>]) -> Result<()> {
        let basis = self.admin.require(caller, needs).await?;
        self.tracked.saw(basis);
        Ok(())
    }

    /// Require that the record at `key` is at `revision` (or absent, for
    /// [`Revision::ABSENT`]) without reading it: for a record created under a name nobody
    /// can know yet, or a revision read elsewhere (a client key's record).
    pub(crate) fn expect_revision(&mut self, key: Key, revision: Revision) -> &mut Self {
        self.changes.expect_revision(key, revision);
        self
    }

    /// Create or replace the record at `key`.
    pub(crate) fn put(&mut self, key: Key, value: impl Into<Json>) -> &mut Self {
        self.changes.put(key, value);
        self
    }

    /// Replace `current`, the record read at `key`, by `updated`, with an `event_type` event
    /// carrying both (Unleash's `preData` and `data`) in `project`; or write nothing when
    /// they are equal, so that an edit that changes nothing leaves no event and moves no
    /// revision. Whether it wrote.
    pub(crate) fn replace<T: serde::Serialize + PartialEq>(
        &mut self,
        key: &Key,
        current: &T,
        updated: &T,
        event_type: &str,
        project: Option<&str>,
    ) -> Result<bool> {
        if updated == current {
            return Ok(false);
        }
        let before = super::records::encode(key, current)?;
        let value = super::records::encode(key, updated)?;
        self.put(key.clone(), value.clone()).record(
            event_type,
            project,
            None,
            None,
            Some(before),
            Some(value),
        );
        Ok(true)
    }

    /// Delete the record at `key`.
    pub(crate) fn delete(&mut self, key: Key) -> &mut Self {
        self.changes.delete(key);
        self
    }

    /// Record `event` with the writes.
    pub(crate) fn event(&mut self, event: NewEvent) -> &mut Self {
        self.changes.event(event);
        self
    }

    /// Record an `event_type` event by this transaction's caller, now.
    pub(crate) fn record(
        &mut self,
        event_type: &str,
        project: Option<&str>,
        feature: Option<&str>,
        environment: Option<&str>,
        pre_data: Option<Json>,
        data: Option<Json>,
    ) -> &mut Self {
        let event = event(
            &self.author,
            event_type,
            project,
            feature,
            environment,
            pre_data,
            data,
        );
        self.event(event)
    }

    /// Record an `event_type` event by this transaction's caller, now, carrying `tags` (a
    /// JSON array): a deleted feature's tags, as Unleash records them.
    pub(crate) fn record_tagged(
        &mut self,
        event_type: &str,
        project: Option<&str>,
        feature: Option<&str>,
        pre_data: Option<Json>,
        data: Option<Json>,
        tags: Json,
    ) -> &mut Self {
        self.record(event_type, project, feature, None, pre_data, data);
        if let Some(event) = self.changes.events.last_mut() {
            event.tags = Some(tags);
        }
        self
    }

    /// Create `value` at `key`, which must still be free, with an `event_type` event whose
    /// data is `value`.
    pub(crate) fn create(&mut self, key: Key, value: Json, event_type: &str) -> &mut Self {
        self.expect_revision(key.clone(), Revision::ABSENT)
            .put(key, value.clone())
            .record(event_type, None, None, None, None, Some(value))
    }

    /// Add the writes, events and preconditions of `changes` (built by a domain function
    /// that assembles many writes at once: an import).
    pub(crate) fn write_all(&mut self, changes: ChangeSet) -> &mut Self {
        let ChangeSet {
            preconditions,
            writes,
            events,
        } = changes;
        self.changes.preconditions.extend(preconditions);
        self.changes.writes.extend(writes);
        self.changes.events.extend(events);
        self
    }

    /// True when nothing is written and no event recorded yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The change set to commit: the writes and events, with every read as a precondition.
    fn into_changes(self, basis: &[(Key, Revision)]) -> ChangeSet {
        let Tx {
            tracked, changes, ..
        } = self;
        let seen = tracked.into_seen();
        let mut out = ChangeSet::new();
        let mut records: Vec<(Key, Revision)> = basis.to_vec();
        records.extend(seen.records);
        let mut collections = seen.collections;
        // The same read twice at the same revision is one precondition; at two revisions,
        // two (which cannot both hold: the commit conflicts and the flow reads again).
        records
            .sort_by(|a, b| (&a.0.collection, &a.0.id, a.1).cmp(&(&b.0.collection, &b.0.id, b.1)));
        records.dedup();
        collections.sort();
        collections.dedup();
        for (key, revision) in records {
            out.expect_revision(key, revision);
        }
        for (collection, revision) in collections {
            out.expect_collection(collection, revision);
        }
        out.preconditions.extend(changes.preconditions);
        out.writes = changes.writes;
        out.events = changes.events;
        out
    }
}

impl ToggleAdmin {
    /// Run one write: `decide` reads through the [`Tx`] it is given, decides and writes
    /// through it; the flow commits what it wrote with everything it read (and what
    /// `permit` rested on) as preconditions, and on a conflict decides the permit again and
    /// runs `decide` again (see the [module docs](self)). `what` names the operation in logs
    /// and in the [`Error::Contention`] of one that gave up.
    pub(crate) async fn change<'env, T, F>(
        &'env self,
        what: &'static str,
        permit: Permit,
        decide: F,
    ) -> Result<T>
    where
        T: Send,
        F: for<'t> FnMut(&'t mut Tx<'env>) -> Decision<'t, T> + Send,
    {
        self.run_change(what, Ok(permit), InMaintenance::Refused, decide)
            .await
    }

    /// [`change`](Self::change) that maintenance mode lets through: turning maintenance
    /// mode itself on or off, and what SDKs report about themselves (registrations).
    pub(crate) async fn change_in_maintenance<'env, T, F>(
        &'env self,
        what: &'static str,
        permit: Permit,
        decide: F,
    ) -> Result<T>
    where
        T: Send,
        F: for<'t> FnMut(&'t mut Tx<'env>) -> Decision<'t, T> + Send,
    {
        self.run_change(what, Ok(permit), InMaintenance::Allowed, decide)
            .await
    }

    /// [`change`](Self::change) that no key admits, its events by `actor`: the first key's
    /// creation on an empty store (whose own precondition, that no key exists, is all the
    /// authority it has), and the write of buffered client metrics (admitted when each
    /// report was recorded). `in_maintenance` says whether maintenance mode refuses it.
    pub(crate) async fn change_unkeyed<'env, T, F>(
        &'env self,
        what: &'static str,
        actor: &'static str,
        in_maintenance: InMaintenance,
        decide: F,
    ) -> Result<T>
    where
        T: Send,
        F: for<'t> FnMut(&'t mut Tx<'env>) -> Decision<'t, T> + Send,
    {
        self.run_change(what, Err(actor), in_maintenance, decide)
            .await
    }

    async fn run_change<'env, T, F>(
        &'env self,
        what: &'static str,
        mut permit: std::result::Result<Permit, &'static str>,
        in_maintenance: InMaintenance,
        mut decide: F,
    ) -> Result<T>
    where
        T: Send,
        F: for<'t> FnMut(&'t mut Tx<'env>) -> Decision<'t, T> + Send,
    {
        let mut attempt = 0usize;
        loop {
            attempt += 1;
            let author = match &permit {
                Ok(permit) => permit.author().clone(),
                Err(actor) => Author::system(actor),
            };
            let mut tx = Tx::new(self, author);
            let outcome = match decide(&mut tx).await {
                Ok(value) if tx.is_empty() => return Ok(value),
                Ok(value) => {
                    // A write that changes nothing is no write: it passes in maintenance
                    // (a server restarted with a start-up file it already imported).
                    if in_maintenance == InMaintenance::Refused {
                        let (key, revision) = self.maintenance_precondition().await?;
                        tx.expect_revision(key, revision);
                    }
                    let basis = permit.as_ref().map_or(&[][..], Permit::basis);
                    self.commit_changes(tx.into_changes(basis))
                        .await
                        .map(|_| value)
                }
                Err(error) => Err(error),
            };
            match outcome {
                Err(Error::Store(StoreError::Conflict(changed))) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!(%changed, "{what}: conflict, reading again");
                    // The switch may be what changed.
                    self.forget_maintenance();
                    if let Ok(previous) = &permit {
                        permit = Ok(self.permit_again(previous).await?);
                    }
                }
                Err(Error::Store(StoreError::Conflict(_))) => return Err(contention(what)),
                other => return other,
            }
        }
    }

    /// Commit `changes` and announce the commit to the read side.
    async fn commit_changes(&self, changes: ChangeSet) -> Result<Revision> {
        super::stored_text::refuse_nul(&changes)?;
        let unread = !changes.writes.is_empty()
            && changes
                .writes
                .iter()
                .all(|w| w.key().collection == Collection::Applications);
        let revision = self.store.commit(changes).await?;
        if unread {
            self.client.unread_commit(revision);
        }
        self.committed(revision);
        Ok(revision)
    }

    /// Submit `changes` (decided on a decision view by the variants path) with the bases of
    /// `permits` (one per writer combined) as preconditions; the caller awaits [`Accepted::durable`], then
    /// [`committed`](Self::committed).
    ///
    /// Maintenance mode refuses it as it refuses [`change`](Self::change), and the commit
    /// expects the switch's record as seen.
    pub(crate) async fn submit_permitted(
        &self,
        permits: &[&Permit],
        mut changes: ChangeSet,
    ) -> Result<Accepted> {
        for (key, revision) in permits.iter().flat_map(|p| p.basis()) {
            changes.expect_revision(key.clone(), *revision);
        }
        let (key, revision) = self.maintenance_precondition().await?;
        changes.expect_revision(key, revision);
        super::stored_text::refuse_nul(&changes)?;
        let submitted = self.store.submit(changes).await;
        if matches!(submitted, Err(StoreError::Conflict(_))) {
            self.forget_maintenance();
        }
        Ok(submitted?)
    }

    /// Announce the commit of `revision` to the read side: streams, deltas and client
    /// documents hear of every commit this way, at once (see `streaming.rs`).
    pub(crate) fn committed(&self, revision: Revision) {
        self.client.push.signal(revision);
    }
}

/// The error of an operation that gave up retrying.
pub(crate) fn contention(what: &str) -> Error {
    Error::Contention {
        message: format!(
            "{what}: gave up after {MAX_ATTEMPTS} attempts because other writers kept changing the same data; nothing was written"
        ),
    }
}

/// An event by `author` (a [`Permit`]'s, or a [`Tx`]'s), now: what [`Tx::record`] records,
/// and what the paths that build change sets of their own record (the variants writers, the
/// import), so that every path names authors alike.
pub(crate) fn event(
    author: &Author,
    event_type: &str,
    project: Option<&str>,
    feature: Option<&str>,
    environment: Option<&str>,
    pre_data: Option<Json>,
    data: Option<Json>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.to_owned(),
        created_by: author.name.clone(),
        created_at: Utc::now(),
        project: project.map(str::to_owned),
        feature_name: feature.map(str::to_owned),
        environment: environment.map(str::to_owned),
        data,
        pre_data,
        created_by_user_id: Some(author.id),
        tags: None,
    }
}
