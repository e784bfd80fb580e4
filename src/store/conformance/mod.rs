//! The store scenario suite (feature `conformance`): every [`Store`] in this crate runs it,
//! and a third-party store can too.
//!
//! Each scenario takes an **empty** store and returns `Err(`[`ScenarioFailure`]`)` when the
//! store breaks the contract: the failure names the scenario and says what was expected and
//! what was found (or which store call failed, with its error). The suite never panics.
//! [`run_all`] runs every scenario, each on a fresh store from the factory and in its own
//! task, then once more through an `Arc<dyn Store>`, and returns the first failure; a panic of
//! the store under test is caught there and reported as its scenario's failure.
//!
//! ```ignore
//! #[tokio::test(flavor = "multi_thread")]
//! async fn my_store_conforms() -> Result<(), ScenarioFailure> {
//!     toggle_admin::store::conformance::run_all(|| async { MyStore::new() }).await
//! }
//! ```
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::todo,
    clippy::unimplemented,
    clippy::unreachable
)]

use std::any::Any;
use std::fmt::{self, Debug, Display};
use std::future::Future;
use std::sync::Arc;

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::{JoinError, JoinSet};

use chrono::Utc;
use serde_json::{Value, json};

mod access;
mod commits;
mod concurrency;
mod events;
mod reads;
mod views;

pub use access::access_records_round_trip;
pub use commits::{
    absent_precondition, all_or_nothing, collection_precondition, conflict_writes_nothing,
    delete_and_recreate, empty_store, revisions_grow_by_one, submit_accepts_then_makes_durable,
    visibility_after_commit,
};
pub use concurrency::{
    concurrent_increments_lose_nothing, conditional_delete_happens_once,
    sequence_hands_out_each_id_once,
};
pub use events::{
    event_queries_filter_newest_first, event_queries_page_stably, event_query_limits,
};
pub use reads::{empty_change_set, events_in_commit_order, get_many_in_order, listing_by_prefix};
pub use views::{views_read_one_revision, views_stay_consistent_under_writes};

use super::{ChangeSet, Collection, Key, NewEvent, Revision, Store, StoreError, Versioned};

/// A scenario the store under test failed: which scenario, and what was expected and what
/// was found (or which store call failed, and how, or that the store panicked).
///
/// Its [`Display`] reads ``conformance scenario `name` failed: what`` (with
/// `(through an Arc<dyn Store>)` after `failed` for [`run_all`]'s second round).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioFailure {
    scenario: &'static str,
    through_arc: bool,
    what: String,
}

impl ScenarioFailure {
    /// The scenario's name: its function's name (`get_many_in_order`), or `run_all` when
    /// [`run_all`] could not run the scenarios at all.
    pub fn scenario(&self) -> &'static str {
        self.scenario
    }

    /// Whether the scenario failed in [`run_all`]'s second round, through an
    /// `Arc<dyn Store>`.
    pub fn through_arc(&self) -> bool {
        self.through_arc
    }

    /// What failed: the values expected and found, the store call that returned an error
    /// (with the error), or the store's panic message.
    pub fn what(&self) -> &str {
        &self.what
    }
}

impl Display for ScenarioFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = if self.through_arc {
            " (through an Arc<dyn Store>)"
        } else {
            ""
        };
        write!(
            f,
            "conformance scenario `{}` failed{how}: {}",
            self.scenario, self.what
        )
    }
}

impl std::error::Error for ScenarioFailure {}

/// Why a check of a scenario failed; [`scenario`] adds the scenario's name.
#[derive(Debug)]
struct Failed(String);

/// The outcome of one step or check of a scenario.
type Check<T = ()> = Result<T, Failed>;

/// Run a scenario's body, naming the scenario in its failure.
async fn scenario(
    name: &'static str,
    body: impl Future<Output = Check>,
) -> Result<(), ScenarioFailure> {
    body.await.map_err(|Failed(what)| ScenarioFailure {
        scenario: name,
        through_arc: false,
        what,
    })
}

/// A store call's (or a conversion's) error as a failed step.
trait Step<T> {
    /// `Ok` as is; an error as ``{what} failed: {error}``.
    fn step(self, what: impl Display) -> Check<T>;
}

impl<T, E: Display> Step<T> for Result<T, E> {
    fn step(self, what: impl Display) -> Check<T> {
        self.map_err(|error| Failed(format!("{what} failed: {error}")))
    }
}

/// Something that must be there.
trait Present<T> {
    /// `Some` unwrapped; `None` as ``{what} is missing (found None)``.
    fn present(self, what: impl Display) -> Check<T>;
}

impl<T> Present<T> for Option<T> {
    fn present(self, what: impl Display) -> Check<T> {
        self.ok_or_else(|| Failed(format!("{what} is missing (found None)")))
    }
}

/// `found == expected`, or a failure showing both.
fn ensure_eq<F, E>(found: F, expected: E, what: impl Display) -> Check
where
    F: PartialEq<E> + Debug,
    E: Debug,
{
    if found == expected {
        Ok(())
    } else {
        Err(Failed(format!(
            "{what}: found {found:?}, expected {expected:?}"
        )))
    }
}

/// `condition`, or a failure saying `what` (which shows the values involved).
fn ensure(condition: bool, what: impl Display) -> Check {
    if condition {
        Ok(())
    } else {
        Err(Failed(what.to_string()))
    }
}

/// Nothing there, or a failure showing what was.
fn ensure_none<T: Debug>(found: Option<T>, what: impl Display) -> Check {
    match found {
        None => Ok(()),
        Some(found) => Err(Failed(format!("{what}: found {found:?}, expected None"))),
    }
}

/// An empty list, or a failure showing what it held.
fn ensure_empty<T: Debug>(found: &[T], what: impl Display) -> Check {
    if found.is_empty() {
        Ok(())
    } else {
        Err(Failed(format!(
            "{what}: found {} ({found:?}), expected none",
            found.len()
        )))
    }
}

/// A `Conflict`, or a failure showing what the store answered instead.
fn ensure_conflict<T: Debug>(result: Result<T, StoreError>, what: impl Display) -> Check {
    match result {
        Err(error) if error.is_conflict() => Ok(()),
        Err(error) => Err(Failed(format!(
            "{what}: expected a Conflict, found {error:?}"
        ))),
        Ok(found) => Err(Failed(format!(
            "{what}: expected a Conflict, found Ok({found:?})"
        ))),
    }
}

/// A record's value as a number.
fn number(record: &Versioned, what: impl Display) -> Check<u64> {
    let value = record
        .value
        .to_value()
        .step(format_args!("reading {what}"))?;
    value.as_u64().present(format_args!(
        "{what} as a number (the record holds {value})"
    ))
}

fn event(kind: &str, n: u64) -> NewEvent {
    NewEvent {
        event_type: kind.to_owned(),
        created_by: "conformance".to_owned(),
        created_at: Utc::now(),
        project: Some("default".to_owned()),
        feature_name: Some(format!("f{n}")),
        environment: None,
        data: Some(json!({ "n": n }).into()),
        pre_data: None,
        created_by_user_id: None,
        tags: None,
    }
}

fn feature(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

async fn put(store: &dyn Store, key: Key, value: Value) -> Check<Revision> {
    let mut changes = ChangeSet::new();
    changes.put(key.clone(), value);
    store
        .commit(changes)
        .await
        .step(format_args!("commit of a put of {key}"))
}

/// Run every scenario, each on a fresh store from `new_store` and in its own task, then
/// every scenario again through an `Arc<dyn Store>`, stopping at the first failure.
///
/// The failure names its scenario (``conformance scenario `…` failed: …``). A panic of the
/// store under test (of its task) is caught and reported as its scenario's failure, with the
/// panic's message.
///
/// Needs a multi-threaded tokio runtime (`#[tokio::test(flavor = "multi_thread")]`): the
/// concurrent scenarios spawn their writers as tasks, so that they really interleave. Without
/// one it fails (scenario `run_all`) before running any scenario.
pub async fn run_all<F, Fut, S>(mut new_store: F) -> Result<(), ScenarioFailure>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: Store,
{
    let refused = |what: String| ScenarioFailure {
        scenario: "run_all",
        through_arc: false,
        what,
    };
    let handle = Handle::try_current().map_err(|error| {
        refused(format!(
            "conformance::run_all needs a multi-threaded tokio runtime: {error}"
        ))
    })?;
    if handle.runtime_flavor() == RuntimeFlavor::CurrentThread {
        return Err(refused(
            "conformance::run_all needs a multi-threaded runtime: \
             #[tokio::test(flavor = \"multi_thread\")]"
                .to_owned(),
        ));
    }
    for through_arc in [false, true] {
        macro_rules! scenario {
            ($name:ident) => {{
                let store = new_store().await;
                let task = handle.spawn(async move {
                    if through_arc {
                        let shared: Arc<dyn Store> = Arc::new(store);
                        $name(&shared).await
                    } else {
                        $name(&store).await
                    }
                });
                outcome(stringify!($name), through_arc, task.await)?;
            }};
            ($name:ident, shared) => {{
                let store: Arc<dyn Store> = Arc::new(new_store().await);
                let task = handle.spawn(async move { $name(&store).await });
                outcome(stringify!($name), through_arc, task.await)?;
            }};
        }
        scenario!(empty_store);
        scenario!(visibility_after_commit);
        scenario!(revisions_grow_by_one);
        scenario!(all_or_nothing);
        scenario!(conflict_writes_nothing);
        scenario!(absent_precondition);
        scenario!(collection_precondition);
        scenario!(delete_and_recreate);
        scenario!(events_in_commit_order);
        scenario!(listing_by_prefix);
        scenario!(get_many_in_order);
        scenario!(empty_change_set);
        scenario!(concurrent_increments_lose_nothing, shared);
        scenario!(access_records_round_trip);
        scenario!(sequence_hands_out_each_id_once, shared);
        scenario!(conditional_delete_happens_once, shared);
        scenario!(views_read_one_revision);
        scenario!(views_stay_consistent_under_writes, shared);
        scenario!(submit_accepts_then_makes_durable);
        scenario!(event_queries_filter_newest_first);
        scenario!(event_queries_page_stably);
        scenario!(event_query_limits);
    }
    Ok(())
}

/// A scenario task's outcome as `run_all`'s: its failure, or its panic (the store's: the
/// scenarios themselves do not panic) as a failure naming it.
fn outcome(
    name: &'static str,
    through_arc: bool,
    joined: Result<Result<(), ScenarioFailure>, JoinError>,
) -> Result<(), ScenarioFailure> {
    match joined {
        Ok(Ok(())) => Ok(()),
        Ok(Err(failure)) => Err(ScenarioFailure {
            through_arc,
            ..failure
        }),
        Err(error) => Err(ScenarioFailure {
            scenario: name,
            through_arc,
            what: task_failure(error),
        }),
    }
}

/// Why a task ended without an outcome: the store under test panicked (with the message),
/// or the task was cancelled.
fn task_failure(error: JoinError) -> String {
    match error.try_into_panic() {
        Ok(panic) => format!("the store under test panicked: {}", panic_message(&*panic)),
        Err(error) => format!("its task ended without an outcome: {error}"),
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else if let Some(message) = panic.downcast_ref::<&str>() {
        (*message).to_owned()
    } else {
        "a panic without a message".to_owned()
    }
}

/// Spawn every future as a task (on a multi-threaded runtime they run in parallel) and wait
/// for all. The first failure (or panic of the store, in a task) is returned, and the tasks
/// still running are aborted.
async fn spawn_all<F>(futures: impl IntoIterator<Item = F>) -> Check
where
    F: Future<Output = Check> + Send + 'static,
{
    let handle = Handle::try_current().map_err(|error| {
        Failed(format!(
            "the scenario's tasks need a tokio runtime: {error}"
        ))
    })?;
    let mut tasks = JoinSet::new();
    for future in futures {
        tasks.spawn_on(future, &handle);
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(Ok(())) => {}
            // Dropping `tasks` aborts the others.
            Ok(Err(failed)) => return Err(failed),
            Err(error) => {
                return Err(Failed(format!(
                    "a task of the scenario failed: {}",
                    task_failure(error)
                )));
            }
        }
    }
    Ok(())
}
