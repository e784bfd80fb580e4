//! Scenarios of [`Store::query_events`]: filters, newest first, paging, limits. Each checks
//! the store's answer against the same query answered from the whole log
//! ([`Store::events`]), so a store's index can never disagree with its log.

use chrono::Utc;
use serde_json::json;

use super::{
    Check, Present, ScenarioFailure, Step, ensure, ensure_empty, ensure_eq, feature, scenario,
};
use crate::store::{ChangeSet, Event, EventQuery, NewEvent, Store};

/// Every combination of filters the scenarios try, over the names [`fill`] uses.
fn queries(limit: usize) -> Vec<EventQuery> {
    let mut queries = Vec::new();
    for event_type in [None, Some("feature-created"), Some("feature-updated")] {
        for project in [None, Some("p0"), Some("p1"), Some("nowhere")] {
            for feature in [None, Some("f3"), Some("f0")] {
                let mut query = EventQuery::newest(limit);
                query.event_type = event_type.map(str::to_owned);
                query.project = project.map(str::to_owned);
                query.feature = feature.map(str::to_owned);
                queries.push(query);
            }
        }
    }
    queries
}

fn new_event(n: u64) -> NewEvent {
    // Every fifth event names no project and no feature: filters must not match those.
    let bare = n % 5 == 4;
    NewEvent {
        event_type: if n.is_multiple_of(3) {
            "feature-created"
        } else {
            "feature-updated"
        }
        .to_owned(),
        created_by: "conformance".to_owned(),
        created_at: Utc::now(),
        project: (!bare).then(|| format!("p{}", n % 2)),
        feature_name: (!bare).then(|| format!("f{}", n % 7)),
        environment: None,
        data: Some(json!({ "n": n, "padding": "x".repeat((n % 50) as usize) }).into()),
        pre_data: None,
        // Authors by id and tags, on some events: a store keeps them as given.
        created_by_user_id: match n % 3 {
            0 => None,
            1 => Some(-42),
            _ => i64::try_from(n).ok(),
        },
        tags: n
            .is_multiple_of(4)
            .then(|| json!([{ "type": "simple", "value": format!("t{n}") }]).into()),
    }
}

/// Commit `commits` change sets of `per_commit` events each (and one write), then one
/// commit with no events.
async fn fill(store: &dyn Store, commits: u64, per_commit: u64) -> Check {
    let mut n = 0;
    for c in 0..commits {
        let mut changes = ChangeSet::new();
        changes.put(feature(&format!("g{c}")), json!(c));
        for _ in 0..per_commit {
            changes.event(new_event(n));
            n += 1;
        }
        store
            .commit(changes)
            .await
            .step(format_args!("commit number {c} of {per_commit} events"))?;
    }
    let mut changes = ChangeSet::new();
    changes.put(feature("quiet"), json!(0));
    store.commit(changes).await.step("commit without events")?;
    Ok(())
}

/// The whole log, oldest first.
async fn whole_log(store: &dyn Store) -> Check<Vec<Event>> {
    let log = store
        .events(0, usize::MAX)
        .await
        .step("events (the whole log)")?;
    for (i, event) in log.iter().enumerate() {
        ensure_eq(
            event.id,
            i as u64 + 1,
            format_args!(
                "the id of the log's event number {i} (commits one at a time, none failing: no gaps)"
            ),
        )?;
    }
    Ok(log)
}

/// What `query` must answer, from the whole log: the page and the total.
fn expected(log: &[Event], query: &EventQuery) -> (Vec<u64>, u64) {
    let matching: Vec<&Event> = log
        .iter()
        .rev()
        .filter(|e| query.matches(&e.event))
        .collect();
    let before = query.before.unwrap_or(u64::MAX);
    let page = matching
        .iter()
        .filter(|e| e.id < before)
        .skip(usize::try_from(query.offset).unwrap_or(usize::MAX))
        .take(query.limit)
        .map(|e| e.id)
        .collect();
    (page, matching.len() as u64)
}

async fn check(store: &dyn Store, log: &[Event], query: &EventQuery) -> Check {
    let page = store
        .query_events(query)
        .await
        .step(format_args!("query_events of {query:?}"))?;
    let ids: Vec<u64> = page.events.iter().map(|e| e.id).collect();
    let (want, total) = expected(log, query);
    ensure_eq(ids, want, format_args!("the page of {query:?}"))?;
    ensure_eq(page.total, total, format_args!("the total of {query:?}"))?;
    for event in &page.events {
        let logged = usize::try_from(event.id)
            .ok()
            .and_then(|id| id.checked_sub(1))
            .and_then(|i| log.get(i))
            .present(format_args!("event {} (as queried) in the log", event.id))?;
        ensure_eq(
            event,
            logged,
            format_args!("event {} as queried and as logged", event.id),
        )?;
    }
    Ok(())
}

/// Every combination of the type, project and feature filters answers the newest matches
/// first, exactly, with the number of matches in all; events without a project or feature
/// match no filter on it.
pub async fn event_queries_filter_newest_first(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("event_queries_filter_newest_first", async {
        fill(store, 30, 3).await?;
        let log = whole_log(store).await?;
        ensure_eq(
            log.len(),
            90,
            "the length of the log after 30 commits of 3 events",
        )?;
        for (n, logged) in (0u64..).zip(&log) {
            let made = new_event(n);
            ensure_eq(
                &logged.event.created_by_user_id,
                &made.created_by_user_id,
                format_args!("the author id of event {} as logged", logged.id),
            )?;
            let tags = |e: &NewEvent| e.tags.as_ref().and_then(|t| t.to_value().ok());
            ensure_eq(
                tags(&logged.event),
                tags(&made),
                format_args!("the tags of event {} as logged", logged.id),
            )?;
        }
        for query in queries(7) {
            check(store, &log, &query).await?;
        }
        let newest = store
            .query_events(&EventQuery::newest(3))
            .await
            .step("query_events of the newest 3")?;
        ensure_eq(
            newest.events.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![90, 89, 88],
            "the ids of the newest 3 events",
        )?;
        ensure_eq(newest.total, 90, "the total of a query without filters")
    })
    .await
}

/// Paging with `before` (the last id seen) visits every match once, newest first, and
/// stays put while new events are committed; `offset` pages agree with it.
pub async fn event_queries_page_stably(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("event_queries_page_stably", page_stably(store)).await
}

async fn page_stably(store: &dyn Store) -> Check {
    // A large commit among small ones: pages cross commit boundaries and big records.
    fill(store, 20, 2).await?;
    let mut big = ChangeSet::new();
    for n in 0..300 {
        big.event(new_event(1000 + n));
    }
    store.commit(big).await.step("commit of 300 events")?;
    fill(store, 20, 2).await?;
    for filter in [
        EventQuery::newest(9),
        EventQuery::newest(9).project("p1"),
        EventQuery::newest(9)
            .feature("f3")
            .event_type("feature-created"),
    ] {
        let log = whole_log(store).await?;
        let (all, total) = expected(
            &log,
            &EventQuery {
                limit: usize::MAX,
                ..filter.clone()
            },
        );
        let mut seen = Vec::new();
        let mut cursor = filter.clone();
        loop {
            let page = store
                .query_events(&cursor)
                .await
                .step(format_args!("query_events of {cursor:?}"))?;
            // The total counts the events committed meanwhile too.
            ensure(
                page.total >= total,
                format_args!(
                    "the total of {cursor:?}: found {}, expected at least {total}",
                    page.total
                ),
            )?;
            let Some(last) = page.events.last() else {
                break;
            };
            cursor.before = Some(last.id);
            seen.extend(page.events.iter().map(|e| e.id));
            // Commits between pages do not move the pages after the cursor.
            let mut changes = ChangeSet::new();
            changes.event(new_event(7));
            store
                .commit(changes)
                .await
                .step("commit of an event between two pages")?;
        }
        ensure_eq(seen, all, format_args!("paging {filter:?} with before"))?;
        // Offsets, against the log as it is now.
        let log = whole_log(store).await?;
        for offset in [0, 1, 8, 9, 10, 299, 300, 5000] {
            check(store, &log, &filter.clone().offset(offset)).await?;
        }
        let before = log.len() as u64 / 2;
        check(store, &log, &filter.clone().before(before).offset(3)).await?;
    }
    Ok(())
}

/// Edge cases: a limit of 0 answers only the total; a huge limit everything; a cursor at
/// or below the first id nothing; a cursor past the end everything; an empty log nothing.
pub async fn event_query_limits(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("event_query_limits", limits(store)).await
}

async fn limits(store: &dyn Store) -> Check {
    let empty = store
        .query_events(&EventQuery::newest(usize::MAX))
        .await
        .step("query_events of an empty log")?;
    ensure_empty(&empty.events, "the events of an empty log")?;
    ensure_eq(empty.total, 0, "the total of an empty log")?;
    fill(store, 10, 4).await?;
    let log = whole_log(store).await?;
    let zero = store
        .query_events(&EventQuery::newest(0))
        .await
        .step("query_events with limit 0")?;
    ensure_empty(&zero.events, "the events of a query with limit 0")?;
    ensure_eq(
        zero.total,
        40,
        "the total of a query with limit 0 after 40 events",
    )?;
    let zero = store
        .query_events(&EventQuery::newest(0).project("p0"))
        .await
        .step("query_events with limit 0 of project p0")?;
    ensure_empty(
        &zero.events,
        "the events of a query with limit 0 of project p0",
    )?;
    ensure_eq(
        zero.total,
        expected(&log, &EventQuery::newest(0).project("p0")).1,
        "the total of a query with limit 0 of project p0",
    )?;
    for query in [
        EventQuery::newest(usize::MAX),
        EventQuery::newest(usize::MAX).event_type("feature-updated"),
        EventQuery::newest(5).before(0),
        EventQuery::newest(5).before(1),
        EventQuery::newest(5).before(2),
        EventQuery::newest(5).before(u64::MAX),
        EventQuery::newest(5).offset(u64::MAX),
        EventQuery::newest(5).before(41),
        EventQuery::newest(5).project("nowhere"),
        EventQuery::newest(5)
            .event_type("feature-created")
            .before(30)
            .offset(2),
    ] {
        check(store, &log, &query).await?;
    }
    Ok(())
}
