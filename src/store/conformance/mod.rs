//! The store scenario suite (feature `conformance`): every [`Store`] in this crate runs it,
//! and a third-party store can too.
//!
//! Each scenario takes an **empty** store and panics (it is test code) when the store breaks
//! the contract. [`run_all`] runs every scenario, each on a fresh store from the factory, and
//! once more through an `Arc<dyn Store>`.
//!
//! ```ignore
//! toggle_admin::store::conformance::run_all(|| async { MyStore::new() }).await;
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::sync::Arc;

use tokio::runtime::RuntimeFlavor;

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

use super::{ChangeSet, Collection, Key, NewEvent, Revision, Store};

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
    }
}

fn feature(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

async fn put(store: &dyn Store, key: Key, value: Value) -> Revision {
    let mut changes = ChangeSet::new();
    changes.put(key, value);
    store.commit(changes).await.expect("commit")
}

/// Run every scenario, each on a fresh store from `new_store`, then every scenario again
/// through an `Arc<dyn Store>`. Each scenario runs in its own task; when one fails, the panic
/// names it (`conformance scenario `…` failed`).
///
/// Needs a multi-threaded tokio runtime (`#[tokio::test(flavor = "multi_thread")]`): the
/// concurrent scenarios spawn their writers as tasks, so that they really interleave.
pub async fn run_all<F, Fut, S>(mut new_store: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = S>,
    S: Store,
{
    assert!(
        tokio::runtime::Handle::current().runtime_flavor() != RuntimeFlavor::CurrentThread,
        "conformance::run_all needs a multi-threaded runtime: #[tokio::test(flavor = \"multi_thread\")]"
    );
    for through_arc in [false, true] {
        macro_rules! scenario {
            ($name:ident) => {{
                let store = new_store().await;
                let task = tokio::spawn(async move {
                    if through_arc {
                        let shared: Arc<dyn Store> = Arc::new(store);
                        $name(&shared).await;
                    } else {
                        $name(&store).await;
                    }
                });
                report(stringify!($name), through_arc, task.await);
            }};
            ($name:ident, shared) => {{
                let store: Arc<dyn Store> = Arc::new(new_store().await);
                let task = tokio::spawn(async move { $name(&store).await });
                report(stringify!($name), through_arc, task.await);
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
}

/// Re-raise a scenario's panic with the scenario's name in front.
fn report(name: &str, through_arc: bool, outcome: Result<(), tokio::task::JoinError>) {
    let Err(error) = outcome else { return };
    let how = if through_arc {
        " (through an Arc<dyn Store>)"
    } else {
        ""
    };
    let message = if error.is_panic() {
        let panic = error.into_panic();
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_else(|| "a panic without a message".to_owned())
    } else {
        error.to_string()
    };
    panic!("conformance scenario `{name}` failed{how}: {message}");
}

/// Spawn every future as a task (on a multi-threaded runtime they run in parallel) and wait
/// for all; a panic in one is re-raised here.
async fn spawn_all<F>(futures: impl IntoIterator<Item = F>)
where
    F: Future<Output = ()> + Send + 'static,
{
    let tasks: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    for task in tasks {
        if let Err(error) = task.await {
            match error.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(error) => panic!("a task of the scenario failed: {error}"),
            }
        }
    }
}
