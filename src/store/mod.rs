//! The Store contract: records with revisions, and one atomic, conditional `commit`.
//!
//! Stores know records, not variants or imports. A record is a JSON document ([`Json`]: valid
//! JSON text, shared) filed under a [`Key`] (a [`Collection`] and an id within it). Every commit gets the next [`Revision`] of
//! the store; each record remembers the revision that last wrote it, and each collection the
//! revision that last wrote anything in it.
//!
//! The facade reads what an operation needs, decides in pure code what to write, and hands
//! the store one [`ChangeSet`]: the revisions it read ([`Precondition`]s), the writes, and the
//! events describing them. The store applies all of it or none of it.

mod change_set;
mod event_log;
mod events;
mod file;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod state;
mod view;
mod wire;

#[cfg(feature = "conformance")]
#[cfg_attr(docsrs, doc(cfg(feature = "conformance")))]
pub mod conformance;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use crate::model::Json;
pub use change_set::{ChangeSet, Event, NewEvent, Precondition, Write};
pub use events::{EventCounts, EventPage, EventQuery};
pub use file::{FileStore, FileStoreBuilder, FileStoreStats, Recovery, TruncatedTail};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{PostgresConfig, PostgresStore};
pub use state::{Records, StoreState};
pub use view::{Accepted, ReadView, RecordsView};

/// A commit's position in a store's history. Revisions start at 1 and grow with every commit;
/// [`Revision::ABSENT`] (0) stands for "no record" in reads and preconditions.
///
/// In this crate's MemoryStore and FileStore they grow by one per commit. A store whose
/// commits run in parallel (the PostgresStore) may skip a number: one taken by a commit that
/// then failed (see the [`Store`] contract).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Revision(pub u64);

impl Revision {
    /// The revision of a record that does not exist (and of a store nothing was committed to).
    pub const ABSENT: Revision = Revision(0);

    /// The revision after this one.
    pub fn next(self) -> Revision {
        Revision(self.0 + 1)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// The kinds of record a store holds. Stores treat them alike; the name is what a backend
/// writes down ([`Collection::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Collection {
    /// Projects, by id.
    Projects,
    /// Environments, by name.
    Environments,
    /// Features, by name (names are unique across projects).
    Features,
    /// A feature's configuration in one environment, by `feature\u{1f}environment`.
    FeatureEnvironments,
    /// API keys, by the hash of their secret.
    ApiKeys,
    /// Users, by id.
    Users,
    /// Groups, by id.
    Groups,
    /// Roles (built-in and custom), by id.
    Roles,
    /// A project's role assignment, by project id.
    ProjectAccess,
    /// Registered client applications, by name.
    Applications,
    /// Strategy definitions, by name.
    StrategyDefinitions,
    /// Segments, by id.
    Segments,
    /// Context fields, by name.
    ContextFields,
    /// Tag types, by name.
    TagTypes,
    /// A feature's tags, by feature name.
    FeatureTags,
    /// A feature's parent dependencies, by feature name.
    FeatureDependencies,
    /// Counters that hand out numeric ids (users, groups, roles, segments), by what they count.
    Sequences,
    /// Settings of the whole service (maintenance mode), by name.
    Settings,
}

impl Collection {
    /// Every collection, in a fixed order.
    pub const ALL: [Collection; 18] = [
        Collection::Projects,
        Collection::Environments,
        Collection::Features,
        Collection::FeatureEnvironments,
        Collection::ApiKeys,
        Collection::Users,
        Collection::Groups,
        Collection::Roles,
        Collection::ProjectAccess,
        Collection::Applications,
        Collection::StrategyDefinitions,
        Collection::Segments,
        Collection::ContextFields,
        Collection::TagTypes,
        Collection::FeatureTags,
        Collection::FeatureDependencies,
        Collection::Sequences,
        Collection::Settings,
    ];

    /// The collection's stable name, as backends write it down.
    pub fn as_str(self) -> &'static str {
        match self {
            Collection::Projects => "projects",
            Collection::Environments => "environments",
            Collection::Features => "features",
            Collection::FeatureEnvironments => "feature-environments",
            Collection::ApiKeys => "api-keys",
            Collection::Users => "users",
            Collection::Groups => "groups",
            Collection::Roles => "roles",
            Collection::ProjectAccess => "project-access",
            Collection::Applications => "applications",
            Collection::StrategyDefinitions => "strategy-definitions",
            Collection::Segments => "segments",
            Collection::ContextFields => "context-fields",
            Collection::TagTypes => "tag-types",
            Collection::FeatureTags => "feature-tags",
            Collection::FeatureDependencies => "feature-dependencies",
            Collection::Sequences => "sequences",
            Collection::Settings => "settings",
        }
    }

    /// The collection's position in [`Collection::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The collection named `name` by [`Collection::as_str`].
    pub fn from_name(name: &str) -> Option<Collection> {
        Collection::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

impl fmt::Display for Collection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a record lives: its collection and its id within it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Key {
    /// The record's collection.
    pub collection: Collection,
    /// The record's id, unique within the collection.
    pub id: String,
}

impl Key {
    /// The key of record `id` in `collection`.
    pub fn new(collection: Collection, id: impl Into<String>) -> Self {
        Self {
            collection,
            id: id.into(),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.collection, self.id)
    }
}

/// A record as read: its value and the revision that last wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versioned {
    /// The record's value. Shared, so that reads do not copy it.
    pub value: Json,
    /// The revision of the commit that last wrote this record.
    pub revision: Revision,
}

/// The records of a collection as read, with the collection's revision at the time of reading,
/// for a [`Precondition::CollectionUnchanged`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Listing {
    /// The revision of the last commit that wrote anything in the collection
    /// ([`Revision::ABSENT`] if none did).
    pub revision: Revision,
    /// The records, ordered by id (byte order).
    pub records: Vec<(String, Versioned)>,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A precondition of the change set no longer holds; nothing was written. The caller
    /// re-reads and decides again.
    #[error("conflict: {0} changed since it was read")]
    Conflict(String),
    /// Another process (or another handle in this one) holds the store's lock.
    #[error("the store at {path} is locked by another process or handle")]
    Locked {
        /// The locked directory.
        path: String,
    },
    /// An I/O operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Stored data is damaged.
    #[error("{file} is damaged at byte {offset}: {reason}")]
    Corrupt {
        /// The damaged file.
        file: String,
        /// Where the damage starts.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// Stored data is of a format this version does not read.
    #[error("{file} has format version {found}; this version reads {supported}")]
    UnsupportedFormat {
        /// The file.
        file: String,
        /// The format version found.
        found: u32,
        /// The format version this build reads.
        supported: u32,
    },
    /// A record or change set could not be (de)serialised.
    #[error("could not encode or decode {what}: {source}")]
    Encoding {
        /// What was being (de)serialised.
        what: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },
    /// The disk is full (or a disk quota is reached): the commit was not written and
    /// changed nothing, and the store takes commits again once space is freed. See
    /// [`FileStore`] for which failures a store recovers from by itself.
    #[error("{context}: the disk is full: {source}")]
    OutOfSpace {
        /// What was being done, naming the file.
        context: String,
        /// The I/O error (`ErrorKind::StorageFull` or `QuotaExceeded`).
        #[source]
        source: std::io::Error,
    },
    /// The backend (a database) cannot be reached or did not answer in time: it is down,
    /// restarting, failing over, or unreachable. Nothing was written, unless the message says
    /// the outcome of a commit is unknown (the connection was lost while it was in flight:
    /// re-read before deciding again). Retrying later is the remedy.
    #[error("{message}")]
    Unavailable {
        /// What failed, and why.
        message: String,
        /// The backend's error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// The backend (e.g. a database) failed.
    #[error("{message}")]
    Backend {
        /// What failed.
        message: String,
        /// The backend's error.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl StoreError {
    /// True for [`StoreError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, StoreError::Conflict(_))
    }

    /// True for [`StoreError::OutOfSpace`].
    pub fn is_out_of_space(&self) -> bool {
        matches!(self, StoreError::OutOfSpace { .. })
    }

    /// True for [`StoreError::Unavailable`].
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }
}

/// Storage for the admin core.
///
/// # Contract
///
/// * **Reads** return records with the [`Revision`] of the commit that last wrote them. A read
///   started after [`commit`](Store::commit) returned `Ok` sees that commit (visibility after
///   commit), in this process and, for shared backends, in every process. Reads show only
///   durable commits: nothing a caller reads can be lost by a crash.
/// * **Views**: [`view`](Store::view) is a consistent state at one revision, for operations
///   that read many records and collections (an export, a feature with its environments):
///   every read through it answers from the same revision, however many commits land
///   meanwhile. It sees every commit that returned `Ok` before it was taken and shows only
///   durable ones, and it holds *every* commit at or below its revision: no view shows a
///   revision without all those below it. Taking it waits for no writer that has yet to
///   decide, and holds no writer up afterwards; a store whose commits run in parallel may
///   make it wait for the commits already holding a revision to finish (the PostgresStore
///   does, for at most those commits' own `COMMIT`).
/// * **`commit` is atomic**: every write and every event of the [`ChangeSet`] lands, or none
///   does. It returns the commit's revision, greater than that of every commit visible
///   when it was decided, and than every earlier revision of the records it writes.
///   Successful commits one after the other on one handle take consecutive revisions; a
///   store whose commits run in parallel may skip a revision that a failed commit took
///   (a refused statement, a lost connection), and may make a commit visible before one
///   with a lower revision that is still in flight. So only views name one state by their
///   revision (see above); a single `get` may show a record at `r + 1` while a commit of
///   another record at `r` is still landing.
/// * **Preconditions**: before writing, `commit` checks every [`Precondition`] against the
///   current state, atomically with the writes. If any no longer holds it fails with
///   [`StoreError::Conflict`] and writes nothing; the caller re-reads and decides again. So
///   two read-decide-commit cycles that read the same record can never both commit: there is
///   no lost update.
/// * **Decisions against accepted commits** (optional, for stores that batch durability):
///   [`decision_view`](Store::decision_view) may also show commits that are *accepted* but not
///   yet durable, and [`submit`](Store::submit) accepts a change set and hands back an
///   [`Accepted`] to wait on for its durability. A store that offers this makes commits
///   durable in revision order, so a commit decided on what an accepted commit wrote is
///   never durable before it. What a decision view shows must never reach a client except
///   through a commit acknowledged by [`Accepted::durable`]. The default methods take the
///   plain road: `decision_view` is `view`, `submit` is `commit`.
///
///   A store whose commits run in parallel may instead hand out decision views that skip
///   the wait a view makes (see **Views**): such a view may lack a commit still in flight
///   below its revision. A decision on it is safe under [`Precondition::Record`] for every
///   record it read, which fails if the view missed a write to it; a listing's revision
///   read through a decision view must not back a [`Precondition::CollectionUnchanged`].
///   A store shared by several processes may also answer decision views from what this
///   process knows ([`ReadView::may_lag`]): their records may be older than the store's
///   (another process changed them) or newer than the view's revision, so again only record
///   preconditions make a decision on them safe, and a refusal decided on them is confirmed
///   on a [`view`](Store::view) before it is answered. The facade decides on decision views
///   only under record preconditions.
/// * **Events** are part of the change set, so the audit log can never disagree with the
///   data. They get increasing ids in change-set order within a commit, and between commits
///   in commit order, except that commits of a store whose commits run in parallel may skip
///   ids and interleave theirs. [`events`](Store::events) and
///   [`query_events`](Store::query_events) show the log as a view does: never an event
///   without every event a commit at or below it recorded, so a reader paging with
///   `after` or `before` misses nothing.
/// * **Durability** is the store's to state (see each store); a store that says it is
///   durable has made a commit durable before `commit` returns `Ok`.
/// * A change set with no writes and no events still checks its preconditions and takes a
///   revision.
///
/// * **Deletes of missing records**: a [`Write::Delete`] of a key that holds no record is
///   no error and changes nothing: neither a record's nor the collection's revision moves
///   (the commit still takes its revision). A delete of an existing record moves its
///   collection's revision to the commit's.
///
/// The required methods are few on purpose. Wrappers ([`Arc<T>`], [`Box<T>`]) forward every
/// method.
///
/// # Implementing it
///
/// The trait is async through `async_trait` (rustdoc shows the expanded
/// `Pin<Box<dyn Future …>>` signatures): put `#[toggle_admin::async_trait]` (re-exported, so
/// no `async-trait` dependency is needed) on your `impl Store for YourStore`, and write the
/// methods as `async fn`. Then run the scenario suite (feature `conformance`) against it:
///
/// ```text
/// #[toggle_admin::async_trait]
/// impl toggle_admin::Store for MyStore {
///     async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> { … }
///     // get_many, list, events, revision, view, commit (query_events has a default)
/// }
///
/// #[tokio::test(flavor = "multi_thread")]
/// async fn my_store_conforms() -> Result<(), toggle_admin::store::conformance::ScenarioFailure> {
///     // The first failure names its scenario and what was expected and found; a panic of
///     // the store is reported as its scenario's failure too.
///     toggle_admin::store::conformance::run_all(|| async { MyStore::new() }).await
/// }
/// ```
#[async_trait]
pub trait Store: fmt::Debug + Send + Sync + 'static {
    /// The record at `key`, if there is one.
    async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError>;

    /// The records at `keys`, in the same order (`None` where there is none), in one read.
    async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError>;

    /// The records of `collection` whose id starts with `prefix` (all of them for `""`),
    /// ordered by id, with the collection's revision.
    async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError>;

    /// Up to `limit` events with id greater than `after`, in id order.
    async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError>;

    /// A page of the events matching `query`, newest first, with how many match in all
    /// (see [`EventQuery`] and [`EventPage`]). Shows durable events only, as reads do.
    ///
    /// The default reads the whole log through [`events`](Store::events) and filters it:
    /// correct, and as slow as the log is long. This crate's stores answer from an index,
    /// reading only the page.
    async fn query_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        events::scan(self, query).await
    }

    /// The revision of the last commit ([`Revision::ABSENT`] for an empty store).
    async fn revision(&self) -> Result<Revision, StoreError>;

    /// A consistent view of the store's durable state at its latest revision; see the
    /// trait's contract.
    async fn view(&self) -> Result<Box<dyn ReadView>, StoreError>;

    /// A consistent view for deciding a commit under record preconditions: it may include
    /// accepted commits that are not yet durable, or lack a commit still in flight below its
    /// revision (see the trait's contract). The default is [`view`](Store::view).
    async fn decision_view(&self) -> Result<Box<dyn ReadView>, StoreError> {
        self.view().await
    }

    /// Apply `changes` atomically if its preconditions hold; see the trait's contract.
    async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError>;

    /// Accept `changes` (check the preconditions, take the next revision) and return without
    /// waiting for durability; [`Accepted::durable`] waits. Fails with
    /// [`StoreError::Conflict`] as `commit` does. The default commits and returns a
    /// commit that is durable already.
    async fn submit(&self, changes: ChangeSet) -> Result<Accepted, StoreError> {
        Ok(Accepted::durable_at(self.commit(changes).await?))
    }

    /// Notifications of commits made by other processes (other instances over one
    /// database): a receiver whose value is the latest revision the store learnt of, or
    /// `None` when the store has none to give. The client API's streams wake on it; without
    /// it they learn of such commits at their catch-up poll. The default is `None`; the
    /// PostgresStore answers from `LISTEN`.
    fn changes(&self) -> Option<tokio::sync::watch::Receiver<Revision>> {
        None
    }

    /// Whether the store knows of a condition that refuses writes now, without writing
    /// anything: `GET /ready` asks this before its probe (a commit that changes nothing,
    /// and so never needs room). The default knows of none; the FileStore answers
    /// [`StoreError::OutOfSpace`] from a batch refused for want of space until a batch is
    /// written again.
    async fn readiness(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

macro_rules! forward_store {
    ($($wrapper:ty),*) => {$(
        #[async_trait]
        #[deny(clippy::missing_trait_methods)]
        impl<T: Store + ?Sized> Store for $wrapper {
            async fn get(&self, key: &Key) -> Result<Option<Versioned>, StoreError> {
                (**self).get(key).await
            }
            async fn get_many(&self, keys: &[Key]) -> Result<Vec<Option<Versioned>>, StoreError> {
                (**self).get_many(keys).await
            }
            async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing, StoreError> {
                (**self).list(collection, prefix).await
            }
            async fn events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
                (**self).events(after, limit).await
            }
            async fn query_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
                (**self).query_events(query).await
            }
            async fn revision(&self) -> Result<Revision, StoreError> {
                (**self).revision().await
            }
            async fn view(&self) -> Result<Box<dyn ReadView>, StoreError> {
                (**self).view().await
            }
            async fn decision_view(&self) -> Result<Box<dyn ReadView>, StoreError> {
                (**self).decision_view().await
            }
            async fn commit(&self, changes: ChangeSet) -> Result<Revision, StoreError> {
                (**self).commit(changes).await
            }
            async fn submit(&self, changes: ChangeSet) -> Result<Accepted, StoreError> {
                (**self).submit(changes).await
            }
            fn changes(&self) -> Option<tokio::sync::watch::Receiver<Revision>> {
                (**self).changes()
            }
            async fn readiness(&self) -> Result<(), StoreError> {
                (**self).readiness().await
            }
        }
    )*};
}

forward_store!(Arc<T>, Box<T>);
