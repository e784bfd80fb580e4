//! Scenarios of [`Store::query_events`]: filters, newest first, paging, limits. Each checks
//! the store's answer against the same query answered from the whole log
//! ([`Store::events`]), so a store's index can never disagree with its log.

use chrono::Utc;
use serde_json::json;

use super::feature;
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
    }
}

/// Commit `commits` change sets of `per_commit` events each (and one write), then one
/// commit with no events.
async fn fill(store: &dyn Store, commits: u64, per_commit: u64) {
    let mut n = 0;
    for c in 0..commits {
        let mut changes = ChangeSet::new();
        changes.put(feature(&format!("g{c}")), json!(c));
        for _ in 0..per_commit {
            changes.event(new_event(n));
            n += 1;
        }
        store.commit(changes).await.expect("commit");
    }
    let mut changes = ChangeSet::new();
    changes.put(feature("quiet"), json!(0));
    store.commit(changes).await.expect("commit");
}

/// The whole log, oldest first.
async fn whole_log(store: &dyn Store) -> Vec<Event> {
    let log = store.events(0, usize::MAX).await.expect("events");
    for (i, event) in log.iter().enumerate() {
        assert_eq!(event.id, i as u64 + 1, "the log has no gaps");
    }
    log
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

async fn check(store: &dyn Store, log: &[Event], query: &EventQuery) {
    let page = store.query_events(query).await.expect("query_events");
    let ids: Vec<u64> = page.events.iter().map(|e| e.id).collect();
    let (want, total) = expected(log, query);
    assert_eq!(ids, want, "the page of {query:?}");
    assert_eq!(page.total, total, "the total of {query:?}");
    for event in &page.events {
        assert_eq!(
            event,
            &log[event.id as usize - 1],
            "event {} as queried and as logged",
            event.id
        );
    }
}

/// Every combination of the type, project and feature filters answers the newest matches
/// first, exactly, with the number of matches in all; events without a project or feature
/// match no filter on it.
pub async fn event_queries_filter_newest_first(store: &dyn Store) {
    fill(store, 30, 3).await;
    let log = whole_log(store).await;
    assert_eq!(log.len(), 90);
    for query in queries(7) {
        check(store, &log, &query).await;
    }
    let newest = store.query_events(&EventQuery::newest(3)).await.unwrap();
    assert_eq!(
        newest.events.iter().map(|e| e.id).collect::<Vec<_>>(),
        vec![90, 89, 88]
    );
    assert_eq!(newest.total, 90);
}

/// Paging with `before` (the last id seen) visits every match once, newest first, and
/// stays put while new events are committed; `offset` pages agree with it.
pub async fn event_queries_page_stably(store: &dyn Store) {
    // A large commit among small ones: pages cross commit boundaries and big records.
    fill(store, 20, 2).await;
    let mut big = ChangeSet::new();
    for n in 0..300 {
        big.event(new_event(1000 + n));
    }
    store.commit(big).await.unwrap();
    fill(store, 20, 2).await;
    for filter in [
        EventQuery::newest(9),
        EventQuery::newest(9).project("p1"),
        EventQuery::newest(9)
            .feature("f3")
            .event_type("feature-created"),
    ] {
        let log = whole_log(store).await;
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
            let page = store.query_events(&cursor).await.unwrap();
            // The total counts the events committed meanwhile too.
            assert!(page.total >= total, "{cursor:?}");
            let Some(last) = page.events.last() else {
                break;
            };
            cursor.before = Some(last.id);
            seen.extend(page.events.iter().map(|e| e.id));
            // Commits between pages do not move the pages after the cursor.
            let mut changes = ChangeSet::new();
            changes.event(new_event(7));
            store.commit(changes).await.unwrap();
        }
        assert_eq!(seen, all, "paging {filter:?} with before");
        // Offsets, against the log as it is now.
        let log = whole_log(store).await;
        for offset in [0, 1, 8, 9, 10, 299, 300, 5000] {
            check(store, &log, &filter.clone().offset(offset)).await;
        }
        let before = log.len() as u64 / 2;
        check(store, &log, &filter.clone().before(before).offset(3)).await;
    }
}

/// Edge cases: a limit of 0 answers only the total; a huge limit everything; a cursor at
/// or below the first id nothing; a cursor past the end everything; an empty log nothing.
pub async fn event_query_limits(store: &dyn Store) {
    let empty = store
        .query_events(&EventQuery::newest(usize::MAX))
        .await
        .unwrap();
    assert!(empty.events.is_empty());
    assert_eq!(empty.total, 0);
    fill(store, 10, 4).await;
    let log = whole_log(store).await;
    let zero = store.query_events(&EventQuery::newest(0)).await.unwrap();
    assert!(zero.events.is_empty());
    assert_eq!(zero.total, 40);
    let zero = store
        .query_events(&EventQuery::newest(0).project("p0"))
        .await
        .unwrap();
    assert!(zero.events.is_empty());
    assert_eq!(
        zero.total,
        expected(&log, &EventQuery::newest(0).project("p0")).1
    );
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
        check(store, &log, &query).await;
    }
}
