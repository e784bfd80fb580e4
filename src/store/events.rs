//! Reading the audit log a page at a time: [`EventQuery`] and [`EventPage`], the exact
//! per-filter totals every store can keep cheaply ([`EventCounts`]), and the in-memory
//! page walk shared by [`MemoryStore`](super::MemoryStore) and the default
//! [`Store::query_events`](super::Store::query_events).
//!
//! # Design notes
//!
//! * **Newest first, with a cursor.** Unleash's event search lists newest first and pages
//!   with `offset`/`limit`. An offset costs a walk over every skipped match, so the query
//!   also takes `before` (only events with a smaller id): a client that pages with the last
//!   id it saw reads only what it is shown, however deep it goes. Both may be combined;
//!   `offset` counts matches after `before` applies.
//! * **Exact totals without a scan.** `totalEvents` counts every event matching the filters
//!   (not only the page). Counting by scanning would read the whole log on every call, so
//!   stores keep [`EventCounts`]: one counter per distinct *(type, project, feature)*.
//!   That grows with the number of features and projects (which the records hold anyway),
//!   not with the number of events, and answers any combination of the three filters by
//!   adding up the counters that match.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::event_log::EventLog;
use super::{Event, NewEvent, Store, StoreError};

/// Which events to read, newest first: the filters (all must match), the cursor, the page.
///
/// ```
/// use toggle_admin::store::EventQuery;
///
/// // The 50 newest `feature-created` events of project `web` older than event 1000.
/// let query = EventQuery::newest(50)
///     .event_type("feature-created")
///     .project("web")
///     .before(1000);
/// assert_eq!(query.limit, 50);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EventQuery {
    /// Only events of this type (Unleash's name, `feature-created`, …).
    pub event_type: Option<String>,
    /// Only events of this project.
    pub project: Option<String>,
    /// Only events of this feature.
    pub feature: Option<String>,
    /// Only events with an id smaller than this (a cursor: the last id of the page before).
    pub before: Option<u64>,
    /// Skip this many matching events (after `before`) before the page starts.
    pub offset: u64,
    /// The most events the page holds.
    pub limit: usize,
}

impl EventQuery {
    /// The `limit` newest events, unfiltered.
    pub fn newest(limit: usize) -> Self {
        Self {
            event_type: None,
            project: None,
            feature: None,
            before: None,
            offset: 0,
            limit,
        }
    }

    /// Only events of type `event_type`.
    pub fn event_type(mut self, event_type: impl Into<String>) -> Self {
        self.event_type = Some(event_type.into());
        self
    }

    /// Only events of project `project`.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Only events of feature `feature`.
    pub fn feature(mut self, feature: impl Into<String>) -> Self {
        self.feature = Some(feature.into());
        self
    }

    /// Only events with an id smaller than `id`.
    pub fn before(mut self, id: u64) -> Self {
        self.before = Some(id);
        self
    }

    /// Skip the first `offset` matches.
    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// True when no filter is set: every event matches.
    pub fn is_unfiltered(&self) -> bool {
        self.event_type.is_none() && self.project.is_none() && self.feature.is_none()
    }

    /// Whether `event` passes the filters (the cursor and the page aside).
    pub fn matches(&self, event: &NewEvent) -> bool {
        self.matches_keys(
            &event.event_type,
            event.project.as_deref(),
            event.feature_name.as_deref(),
        )
    }

    /// Whether an event of this type, project and feature passes the filters.
    pub fn matches_keys(
        &self,
        event_type: &str,
        project: Option<&str>,
        feature: Option<&str>,
    ) -> bool {
        self.event_type.as_deref().is_none_or(|t| t == event_type)
            && self.project.as_deref().is_none_or(|p| Some(p) == project)
            && self.feature.as_deref().is_none_or(|f| Some(f) == feature)
    }

    /// The largest id the query can return, in a log of `count` events (ids `1..=count`),
    /// before the offset: `None` when nothing is older than the cursor.
    pub(crate) fn newest_id(&self, count: u64) -> Option<u64> {
        let newest = match self.before {
            Some(before) => before.saturating_sub(1).min(count),
            None => count,
        };
        (newest > 0).then_some(newest)
    }
}

/// One page of events, newest first, with how many events match the filters in all.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct EventPage {
    /// The page, newest first.
    pub events: Vec<Event>,
    /// How many events of the whole log match the query's filters (ignoring `before`,
    /// `offset` and `limit`): Unleash's `totalEvents`.
    pub total: u64,
}

impl EventPage {
    /// A page of `events` out of `total` matches.
    pub fn new(events: Vec<Event>, total: u64) -> Self {
        Self { events, total }
    }
}

/// A distinct *(type, project, feature)* of [`EventCounts`], and how many events have it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Counted {
    event_type: String,
    project: Option<String>,
    feature: Option<String>,
    count: u64,
}

/// How many events the log holds per distinct *(type, project, feature)*: exact
/// [`EventPage::total`]s without a scan (see the module's design notes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventCounts {
    all: u64,
    /// By the three joined into one string (see [`EventCounts::add_keys`]), so that counting
    /// an event of a known key looks it up without allocating.
    by_key: HashMap<String, Counted>,
    /// The joined key of the last event counted, reused.
    scratch: String,
}

impl EventCounts {
    /// Count one more event.
    pub fn add(&mut self, event: &NewEvent) {
        self.add_keys(
            &event.event_type,
            event.project.as_deref(),
            event.feature_name.as_deref(),
        );
    }

    /// Count one more event of this type, project and feature.
    pub fn add_keys(&mut self, event_type: &str, project: Option<&str>, feature: Option<&str>) {
        self.all += 1;
        // Each part length-prefixed (`-` when absent), so that no two triples join alike.
        let key = &mut self.scratch;
        key.clear();
        for part in [Some(event_type), project, feature] {
            match part {
                Some(text) => {
                    // Writing to a String cannot fail.
                    let _ = write!(key, "{}:{text}", text.len());
                }
                None => key.push('-'),
            }
        }
        if let Some(counted) = self.by_key.get_mut(key.as_str()) {
            counted.count += 1;
            return;
        }
        self.by_key.insert(
            key.clone(),
            Counted {
                event_type: event_type.to_owned(),
                project: project.map(str::to_owned),
                feature: feature.map(str::to_owned),
                count: 1,
            },
        );
    }

    /// How many events were counted.
    pub fn all(&self) -> u64 {
        self.all
    }

    /// How many counted events pass `query`'s filters.
    pub fn matching(&self, query: &EventQuery) -> u64 {
        if query.is_unfiltered() {
            return self.all;
        }
        self.by_key
            .values()
            .filter(|c| {
                query.matches_keys(&c.event_type, c.project.as_deref(), c.feature.as_deref())
            })
            .map(|c| c.count)
            .sum()
    }
}

/// A page of `log` (events `1..=log.len()` in id order) for `query`, newest first, with the
/// total from `counts`.
pub(crate) fn page_of(log: &EventLog, counts: &EventCounts, query: &EventQuery) -> EventPage {
    let total = counts.matching(query);
    let Some(newest) = query.newest_id(log.len() as u64) else {
        return EventPage::new(Vec::new(), total);
    };
    // Event `id` sits at index `id - 1`.
    let end = usize::try_from(newest).unwrap_or(usize::MAX).min(log.len());
    let skip = usize::try_from(query.offset).unwrap_or(usize::MAX);
    let events = if query.is_unfiltered() {
        // Every event matches: the page is one range, found without walking the skipped.
        let last = end.saturating_sub(skip);
        let first = last.saturating_sub(query.limit);
        log.range(first, last).rev().cloned().collect()
    } else {
        log.range(0, end)
            .rev()
            .filter(|e| query.matches(&e.event))
            .skip(skip)
            .take(query.limit)
            .cloned()
            .collect()
    };
    EventPage::new(events, total)
}

/// How many events one `events` call reads while [`scan`] walks the log.
const SCAN_PAGE: usize = 1000;

/// The default [`Store::query_events`]: read the whole log oldest first through
/// [`Store::events`], keeping the newest matches. Correct for any store, and as slow as
/// the log is long; stores override it.
pub(crate) async fn scan<S: Store + ?Sized>(
    store: &S,
    query: &EventQuery,
) -> Result<EventPage, StoreError> {
    let mut matches = Vec::new();
    let mut after = 0;
    loop {
        let page = store.events(after, SCAN_PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        let full = page.len() == SCAN_PAGE;
        matches.extend(page.into_iter().filter(|e| query.matches(&e.event)));
        if !full {
            break;
        }
    }
    let total = matches.len() as u64;
    let newest = query.before.unwrap_or(u64::MAX);
    let skip = usize::try_from(query.offset).unwrap_or(usize::MAX);
    let events = matches
        .into_iter()
        .rev()
        .filter(|e| e.id < newest)
        .skip(skip)
        .take(query.limit)
        .collect();
    Ok(EventPage::new(events, total))
}
