//! [`ToggleAdmin`]: the one flow every operation takes.
//!
//! authenticate → authorise → read what the operation needs from the store → pure domain
//! function → one [`Store::commit`] whose preconditions are the revisions read. On
//! [`StoreError::Conflict`](crate::store::StoreError::Conflict) the operation re-reads and decides again (bounded), so concurrent
//! writers never lose an update.
//!
//! The operations live in one file per area (`variants`, `projects`, `keys`, …); this file
//! holds only the shared machinery.

/// Run the async block `body` (one read-decide-commit attempt) until it does not fail with a
/// store conflict, at most [`MAX_ATTEMPTS`] times, then give up with [`Error::Contention`].
///
/// A macro rather than a function taking an async closure, so that the resulting future stays
/// `Send` (async closures' futures cannot promise that yet).
macro_rules! retrying {
    ($what:expr, $body:expr) => {{
        let mut attempt = 0usize;
        loop {
            attempt += 1;
            let result: $crate::error::Result<_> = $body.await;
            match result {
                Err($crate::error::Error::Store($crate::store::StoreError::Conflict(changed)))
                    if attempt < $crate::admin::MAX_ATTEMPTS =>
                {
                    tracing::debug!(%changed, "{}: conflict, reading again", $what);
                }
                Err($crate::error::Error::Store($crate::store::StoreError::Conflict(_))) => {
                    break Err($crate::admin::contention($what));
                }
                other => break other,
            }
        }
    }};
}

mod access;
mod applications;
mod catalog;
mod client;
mod client_metrics;
mod client_scope;
mod context;
mod delta;
mod dependencies;
mod edge;
mod export;
mod feature_environments;
mod feature_list;
mod features;
#[cfg(feature = "frontend")]
mod frontend;
mod import;
mod keys;
mod projects;
mod reader;
pub(crate) mod records;
mod segments;
mod stored_text;
mod streaming;
mod tags;
mod users;
mod variant_writers;
mod variants;
mod views;

use std::sync::Arc;

use chrono::Utc;

use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{Grant, KeyAccess, Permission};
use crate::store::{ChangeSet, Event, EventPage, EventQuery, Json, Key, NewEvent, Revision, Store};
use records::api_key_key;

/// Moved to [`crate::model`]; this path stays for one release and will then be removed.
pub use crate::model::{
    ArchivedFeatures, ClientFeaturesDocument, ClientFeaturesQuery, FeatureEnvironmentMetrics,
    FeatureUsage, NewFeature, NewGroup, NewProject, NewRole, NewUser,
};
pub use client_metrics::DEFAULT_METRICS_FLUSH_INTERVAL;
pub use client_scope::DEFAULT_CLIENT_ENVIRONMENT;
pub use delta::{DEFAULT_HISTORY_AGE, DEFAULT_HISTORY_EVENTS, DeltaAnswer, MAX_SCOPES, PushConfig};
#[cfg(feature = "frontend")]
pub use frontend::{MAX_CONTEXT_PROPERTIES, MAX_CONTEXT_VALUE};
pub use keys::token_access;
pub use streaming::ClientStream;
#[cfg(feature = "http")]
pub(crate) use variant_writers::VariantsChange;

/// How often an operation re-reads and decides again after a [`StoreError::Conflict`] before
/// it gives up with [`Error::Contention`]. Each retry means another writer committed, so the
/// system as a whole always makes progress; the bound only keeps one caller from waiting
/// forever under extreme contention.
pub(crate) const MAX_ATTEMPTS: usize = 200;

/// The administration core: the four operations of the specification and the supporting
/// surface around them, over any [`Store`].
///
/// Cheap to clone (the store is shared), so one instance can serve many tasks.
#[derive(Debug, Clone)]
pub struct ToggleAdmin {
    store: Arc<dyn Store>,
    /// Orders the decisions of writers on the same record (see `views.rs`).
    locks: Arc<views::DecisionLocks>,
    /// Concurrent variant changes of one feature environment, combined (see
    /// `variant_writers.rs`).
    writers: Arc<variant_writers::VariantWriters>,
    /// The client API's caches and buffers (see `client.rs`).
    client: Arc<client::ClientState>,
}

/// One permission check: a permission in an optional project and environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Check<'a> {
    pub permission: Permission,
    pub project: Option<&'a str>,
    pub environment: Option<&'a str>,
}

impl<'a> Check<'a> {
    pub(crate) fn root(permission: Permission) -> Self {
        Self {
            permission,
            project: None,
            environment: None,
        }
    }

    pub(crate) fn project(permission: Permission, project: &'a str) -> Self {
        Self {
            permission,
            project: Some(project),
            environment: None,
        }
    }

    pub(crate) fn environment(
        permission: Permission,
        project: &'a str,
        environment: &'a str,
    ) -> Self {
        Self {
            permission,
            project: Some(project),
            environment: Some(environment),
        }
    }
}

impl ToggleAdmin {
    /// An admin core over `store`.
    pub fn new(store: impl Store) -> Self {
        Self::from_arc(Arc::new(store))
    }

    /// An admin core over a store that is already shared.
    pub fn from_arc(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            locks: Arc::new(views::DecisionLocks::new()),
            writers: Arc::new(variant_writers::VariantWriters::default()),
            client: Arc::new(client::ClientState::default()),
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Up to `limit` events of the audit log with id greater than `after`, oldest first.
    /// Any valid key may read the log.
    pub async fn events(&self, caller: &Caller, after: u64, limit: usize) -> Result<Vec<Event>> {
        self.require(caller, &[]).await?;
        Ok(self.store.events(after, limit).await?)
    }

    /// A page of the audit log, newest first, filtered by type, project and feature, with
    /// how many events match in all (see [`EventQuery`]). Any valid key may read the log.
    pub async fn query_events(&self, caller: &Caller, query: &EventQuery) -> Result<EventPage> {
        self.require(caller, &[]).await?;
        Ok(self.store.query_events(query).await?)
    }

    /// Check that `caller`'s key still exists, has not expired, and holds every permission
    /// in `checks`.
    ///
    /// This is the one permission mechanism of the facade. A key that was revoked since it
    /// was authenticated fails with [`Error::AuthenticationRequired`], as does a key whose
    /// expiry has passed; missing permissions fail with one [`Error::NoAccess`] that names
    /// all of them.
    ///
    /// The grants are read afresh (for a key acting as a user: its root role's, and its
    /// roles' in the projects the checks name). The answer is an [`Authorised`]: the
    /// records the decision was based on, at the revisions read. An operation that writes
    /// commits through [`commit_as`](Self::commit_as), which makes those revisions
    /// preconditions of its commit: if the key is revoked, or the user, its groups, the
    /// custom roles or the project access read here change before the commit, the commit
    /// conflicts, the operation re-reads (calling `require` again, inside its retry loop) and
    /// the new decision stands. So no write authorised by a key commits after that key's
    /// revocation has returned.
    ///
    /// An expiry is a point in time, not a record, so it cannot be a precondition: it is
    /// checked at every decision (each attempt of an operation decides anew), and a write
    /// decided an instant before the key expires may commit an instant after.
    pub(crate) async fn require(
        &self,
        caller: &Caller,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        let key = api_key_key(&caller.secret_hash);
        // The record is read at every call, so a revoked or changed key takes effect at once.
        let Some(record) = self.store.get(&key).await? else {
            return Err(Error::AuthenticationRequired {
                message: "The API key is unknown or was revoked.".to_owned(),
            });
        };
        self.decide_on_record(key, &record, caller, checks).await
    }

    /// The permission decision on the key's `record` at `key`, as read for `caller`. Only its
    /// decoding is skipped while it is still at the revision the caller was authenticated at
    /// (a record's revision changes with every write to it).
    async fn decide_on_record(
        &self,
        key: Key,
        record: &crate::store::Versioned,
        caller: &Caller,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        let decoded: crate::model::ApiKeyInfo;
        let info = if record.revision == caller.revision {
            &caller.info
        } else {
            decoded = records::decode(&key, &record.value)?;
            &decoded
        };
        self.decide(key, record.revision, info, checks).await
    }

    /// [`require`](Self::require) on the key's record as `caller`'s authentication read it,
    /// without reading it again: for an adapter that authenticated `caller` in this same
    /// request (the HTTP router's extractor), so that the decision costs no second read of
    /// the key. The guarantee of `require` holds: the record's revision as authenticated is
    /// in the decision's basis, hence a precondition of the commit, so a revocation (or any
    /// change of the key) between that read and the commit conflicts, and the retry decides
    /// again on a fresh read (and refuses).
    pub(crate) async fn require_as_authenticated(
        &self,
        caller: &Caller,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        let key = api_key_key(&caller.secret_hash);
        self.decide(key, caller.revision, &caller.info, checks)
            .await
    }

    /// The permission decision on the key `info`, stored at `key` at `revision`.
    async fn decide(
        &self,
        key: Key,
        revision: Revision,
        info: &crate::model::ApiKeyInfo,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        if info.is_expired_at(Utc::now()) {
            return Err(keys::expired());
        }
        if info.access.is_client() {
            return Err(wrong_key_type());
        }
        let mut basis = vec![(key, revision)];
        let grants = self.grants_of(&info.access, checks, &mut basis).await?;
        let mut missing: Vec<&Check<'_>> = Vec::new();
        for check in checks {
            let held = grants
                .iter()
                .any(|g| g.covers(check.permission, check.project, check.environment));
            if !held && !missing.iter().any(|m| m.permission == check.permission) {
                missing.push(check);
            }
        }
        if missing.is_empty() {
            return Ok(Authorised { basis });
        }
        Err(no_access(&missing))
    }

    /// Who `caller` acts as, as Unleash shows it on a feature (`createdBy`,
    /// `collaborators`): the user of a key acting as a user, else Unleash's admin token user.
    pub(crate) async fn acting_user(&self, caller: &Caller) -> Result<crate::model::FeatureUser> {
        if let KeyAccess::User { user_id } = &caller.info.access {
            let key = users::user_key(*user_id);
            let user: Option<crate::model::User> =
                records::decode_opt(&key, self.store.get(&key).await?.as_ref())?;
            if let Some(user) = user {
                let seed = user
                    .email
                    .clone()
                    .or_else(|| user.username.clone())
                    .or_else(|| user.name.clone())
                    .unwrap_or_default();
                let name = user
                    .name
                    .or(user.username)
                    .or(user.email)
                    .unwrap_or_default();
                return Ok(crate::model::FeatureUser::new(user.id, &name, &seed));
            }
        }
        Ok(crate::model::FeatureUser::admin_token_user())
    }

    /// The authorisation for one attempt of an operation's retry loop: the decision `first`
    /// (made before the loop, so that a missing permission is refused before the input is
    /// checked) on the first attempt, a fresh [`require`](Self::require) on every later one
    /// (the previous attempt conflicted, perhaps because the key or its user's access
    /// changed).
    pub(crate) async fn authorise_attempt(
        &self,
        first: &mut Option<Authorised>,
        caller: &Caller,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        match first.take() {
            Some(authorised) => Ok(authorised),
            None => self.require(caller, checks).await,
        }
    }

    /// [`authorise_attempt`](Self::authorise_attempt) for a change decided on a decision
    /// view (see [`Store::decision_view`](crate::Store::decision_view)): after a conflict the
    /// permission is decided on the key's record as a decision view shows it, which is a
    /// precondition of the commit like the other records read there; a refusal is decided
    /// again by [`require`](Self::require) on the store's current record.
    pub(crate) async fn authorise_attempt_deciding(
        &self,
        first: &mut Option<Authorised>,
        caller: &Caller,
        checks: &[Check<'_>],
    ) -> Result<Authorised> {
        if let Some(authorised) = first.take() {
            return Ok(authorised);
        }
        let key = api_key_key(&caller.secret_hash);
        if let Ok(view) = self.store.decision_view().await
            && let Ok(Some(record)) = view.get(&key).await
            && let Ok(authorised) = self.decide_on_record(key, &record, caller, checks).await
        {
            return Ok(authorised);
        }
        self.require(caller, checks).await
    }

    /// Commit `changes`, authorised by `authorised`: the records the permission decision
    /// was based on become preconditions of the commit (see [`require`](Self::require)).
    /// A conflict is a [`StoreError::Conflict`] like any other, so the caller's retry loop
    /// reads and decides again, permission included.
    pub(crate) async fn commit_as(
        &self,
        authorised: &Authorised,
        mut changes: ChangeSet,
    ) -> Result<Revision> {
        for (key, revision) in &authorised.basis {
            changes.expect_revision(key.clone(), *revision);
        }
        stored_text::refuse_nul(&changes)?;
        let revision = self.store.commit(changes).await?;
        // Streams over this admin learn of the commit at once (see `streaming.rs`).
        self.client.push.signal(revision);
        Ok(revision)
    }

    /// [`commit_as`](Self::commit_as), but only accepted: the caller awaits
    /// [`Accepted::durable`](crate::store::Accepted::durable) (see [`Store::submit`]).
    pub(crate) async fn submit_as(
        &self,
        authorised: &Authorised,
        mut changes: ChangeSet,
    ) -> Result<crate::store::Accepted> {
        for (key, revision) in &authorised.basis {
            changes.expect_revision(key.clone(), *revision);
        }
        stored_text::refuse_nul(&changes)?;
        Ok(self.store.submit(changes).await?)
    }

    /// The grants a key holds now, as far as `checks` need them: a key acting as a user
    /// gets its user's root role and the roles it holds in the projects the checks name,
    /// read afresh, so that access changes take effect at the next call.
    /// The records read for it are added to `basis` with their revisions.
    async fn grants_of(
        &self,
        access: &KeyAccess,
        checks: &[Check<'_>],
        basis: &mut Vec<(Key, Revision)>,
    ) -> Result<Vec<Grant>> {
        Ok(match access {
            KeyAccess::Admin => vec![Grant::everywhere(Permission::Admin)],
            KeyAccess::Grants { grants } => grants.clone(),
            KeyAccess::User { user_id } => self.user_grants(*user_id, checks, basis).await?,
            KeyAccess::Client { .. } => Vec::new(),
        })
    }
}

/// A permission decision that allowed an operation: the records it was based on, each at the
/// revision read (the key's record first). Writes commit through
/// [`ToggleAdmin::commit_as`], which makes these revisions preconditions.
#[derive(Debug, Clone)]
pub(crate) struct Authorised {
    /// The records the decision read, with their revisions ([`Revision::ABSENT`] for one
    /// that did not exist, e.g. a project without access configuration).
    basis: Vec<(Key, Revision)>,
}

impl Authorised {
    /// One decision based on the records of both (for an operation that checks twice).
    pub(crate) fn and(mut self, other: Authorised) -> Authorised {
        self.basis.extend(other.basis);
        self
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

/// The 403 of a client key on an admin operation, with Unleash's message.
pub(crate) fn wrong_key_type() -> Error {
    Error::NoAccess {
        message: "invalid token: expected a different token type for this endpoint".to_owned(),
        permissions: Vec::new(),
    }
}

/// The 403 for the checks that failed, naming every missing permission.
fn no_access(missing: &[&Check<'_>]) -> Error {
    let permissions: Vec<String> = missing.iter().map(|c| c.permission.to_string()).collect();
    let scope = |c: &Check<'_>| match (c.project, c.environment) {
        (Some(p), Some(e)) => format!(" in project \"{p}\", environment \"{e}\""),
        (Some(p), None) => format!(" in project \"{p}\""),
        _ => String::new(),
    };
    let message = match missing {
        [one] => format!(
            "You don't have the required permissions to perform this operation. To perform this action, you need the \"{}\" permission{}.",
            one.permission,
            scope(one)
        ),
        many => format!(
            "You don't have the required permissions to perform this operation. To perform this action, you need all of these permissions: {}.",
            many.iter()
                .map(|c| format!("\"{}\"{}", c.permission, scope(c)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Error::NoAccess {
        message,
        permissions,
    }
}

/// Add to `changes` the creation of `value` at `key`, which must still be free, with an
/// `event_type` event by `caller` whose data is `value`.
pub(crate) fn create_record(
    changes: &mut ChangeSet,
    caller: &Caller,
    key: Key,
    value: Json,
    event_type: &str,
) {
    changes
        .expect_revision(key.clone(), Revision::ABSENT)
        .put(key, value.clone())
        .event(event(
            caller,
            event_type,
            None,
            None,
            None,
            None,
            Some(value),
        ));
}

/// An event by `caller`, now.
pub(crate) fn event(
    caller: &Caller,
    event_type: &str,
    project: Option<&str>,
    feature: Option<&str>,
    environment: Option<&str>,
    pre_data: Option<Json>,
    data: Option<Json>,
) -> NewEvent {
    NewEvent {
        event_type: event_type.to_owned(),
        created_by: caller.info.name.clone(),
        created_at: Utc::now(),
        project: project.map(str::to_owned),
        feature_name: feature.map(str::to_owned),
        environment: environment.map(str::to_owned),
        data,
        pre_data,
    }
}
