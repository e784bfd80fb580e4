//! The audit log: every change, who made it, when, before and after. Events are written by
//! the flow with the change they describe (`flow.rs`); this file reads them.
//!
//! # Who sees which events
//!
//! The whole log is for admins (an admin key, a user whose root role is Admin, a key granted
//! `ADMIN` everywhere). The searches (`events_of_feature`, `search_events`) show other keys
//! only events of a project (as Unleash's event search shows non-admins), and only of the
//! projects their grants name when they are limited to some: events without a project (keys,
//! users, environments) are admin matters.
//!
//! # Searching without scanning more than needed
//!
//! The store answers the filters it indexes (one type, project and feature, newest first,
//! with exact totals) by itself. The other filters (text, author, dates, several values, the
//! caller's projects) are applied here over the store's answer, a page of
//! [`SCAN_PAGE`] events at a time: the cost grows with the events the store's filters let
//! through, and the total is exact.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use super::ToggleAdmin;
use super::author::{present, recorded_name};
use super::records::decode_opt;
use super::users::user_key;
use crate::access::ADMIN_ROLE;
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{
    ADMIN_TOKEN_USER_ID, EventCreator, EventFieldFilter, EventSearch, EventView, KeyAccess,
    Permission, SYSTEM_USER_ID, User, event_label,
};
use crate::store::{Event, EventPage, EventQuery, Json, NewEvent};

/// How many events one read of the store brings while a search walks the log.
const SCAN_PAGE: usize = 1000;

/// Which events a caller may see (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
struct EventScope {
    /// Every event.
    admin: bool,
    /// The projects it is limited to, if it is.
    projects: Option<BTreeSet<String>>,
}

impl EventScope {
    fn sees(&self, event: &Event) -> bool {
        if self.admin {
            return true;
        }
        match (&event.event.project, &self.projects) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(project), Some(allowed)) => allowed.contains(project),
        }
    }
}

/// The id [`EventCreator`] gives the author `name` of an event recorded before authors were
/// recorded by id: a number derived from it (47 bits of its SHA-256),
/// the same for the same name on every instance and store.
pub fn creator_id(name: &str) -> i64 {
    let digest = Sha256::digest(name.as_bytes());
    let mut id: i64 = 0;
    for byte in digest.iter().take(6) {
        id = (id << 8) | i64::from(*byte);
    }
    (id >> 1).max(1)
}

impl ToggleAdmin {
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

    /// The events matching `search` that `caller` may see (see the module docs), newest
    /// first, with how many match in all: Unleash's event searches
    /// (`GET /api/admin/search/events`, `POST /api/admin/events/search`) and a feature's
    /// events (`GET /api/admin/events/{featureName}`). Any valid key may search.
    pub async fn search_events(&self, caller: &Caller, search: &EventSearch) -> Result<EventPage> {
        self.permit(caller, &[]).await?;
        let scope = self.event_scope(caller).await?;
        let mut base = EventQuery::newest(SCAN_PAGE);
        base.event_type = search
            .event_type
            .as_ref()
            .and_then(|f| f.single())
            .map(str::to_owned);
        base.project = search
            .project
            .as_ref()
            .and_then(|f| f.single())
            .map(str::to_owned);
        base.feature = search
            .feature
            .as_ref()
            .and_then(|f| f.single())
            .map(str::to_owned);
        let pushed_all = scope.admin
            && search.query.is_none()
            && search.created_by.is_none()
            && search.from.is_none()
            && search.to.is_none()
            && [&search.event_type, &search.project, &search.feature]
                .iter()
                .all(|f| f.as_ref().is_none_or(|f| f.single().is_some()));
        if pushed_all {
            let mut query = base;
            query.limit = search.limit;
            query.offset = search.offset;
            return Ok(self.store.query_events(&query).await?);
        }
        let query_text = search.query.as_deref().map(str::to_lowercase);
        let matches = |event: &Event| {
            let e = &event.event;
            scope.sees(event)
                && search
                    .event_type
                    .as_ref()
                    .is_none_or(|f| f.passes(Some(&e.event_type)))
                && search
                    .project
                    .as_ref()
                    .is_none_or(|f| f.passes(e.project.as_deref()))
                && search
                    .feature
                    .as_ref()
                    .is_none_or(|f| f.passes(e.feature_name.as_deref()))
                && search.created_by.as_ref().is_none_or(|f| {
                    let id = author_of(e).to_string();
                    f.passes_any(&[&e.created_by, &id])
                })
                && search.from.is_none_or(|from| e.created_at >= from)
                && search.to.is_none_or(|to| e.created_at < to)
                && query_text.as_deref().is_none_or(|q| mentions(event, q))
        };
        let mut total = 0u64;
        let mut events = Vec::new();
        let mut cursor: Option<u64> = None;
        loop {
            let mut query = base.clone();
            query.before = cursor;
            let page = self.store.query_events(&query).await?;
            let read = page.events.len();
            for event in page.events {
                cursor = Some(event.id);
                if !matches(&event) {
                    continue;
                }
                total += 1;
                if total > search.offset && events.len() < search.limit {
                    events.push(event);
                }
            }
            if read < SCAN_PAGE {
                break;
            }
        }
        Ok(EventPage::new(events, total))
    }

    /// Everyone who made events `caller` may see (`GET /api/admin/event-creators`, Unleash's
    /// `eventCreatorsSchema`), by id: each user by its display name, else by the name its
    /// events record (its email, else its username: Unleash shows the user's name, else its
    /// events' `createdBy`; here the user's as it is now), else, for a user that no longer
    /// exists, by what its first event recorded; `Unleash Admin Token` (-42) for the keys
    /// acting as no user, `Unleash System` (-1337) for the service itself, as Unleash lists
    /// them. Events recorded before authors were recorded by id stand for their author's
    /// name, with the id [`creator_id`] gives it. The event search's `createdBy` takes these
    /// ids, and the names the events record. Walks the whole log. Any valid key may read
    /// them.
    pub async fn event_creators(&self, caller: &Caller) -> Result<Vec<EventCreator>> {
        self.permit(caller, &[]).await?;
        let scope = self.event_scope(caller).await?;
        let mut creators: BTreeMap<i64, String> = BTreeMap::new();
        let mut after = 0u64;
        loop {
            let page = self.store.events(after, SCAN_PAGE).await?;
            let read = page.len();
            for event in page {
                after = event.id;
                if !scope.sees(&event) {
                    continue;
                }
                if let std::collections::btree_map::Entry::Vacant(entry) =
                    creators.entry(author_of(&event.event))
                {
                    let name = self
                        .creator_name(*entry.key(), &event.event.created_by)
                        .await?;
                    entry.insert(name);
                }
            }
            if read < SCAN_PAGE {
                break;
            }
        }
        Ok(creators
            .into_iter()
            .map(|(id, name)| EventCreator { id, name })
            .collect())
    }

    /// The name [`event_creators`](Self::event_creators) shows for the author `id` of an
    /// event recorded as by `created_by`.
    async fn creator_name(&self, id: i64, created_by: &str) -> Result<String> {
        Ok(match id {
            SYSTEM_USER_ID => "Unleash System".to_owned(),
            ADMIN_TOKEN_USER_ID => "Unleash Admin Token".to_owned(),
            id => {
                let key = user_key(id);
                let user: Option<User> = decode_opt(&key, self.store.get(&key).await?.as_ref())?;
                user.as_ref()
                    .and_then(|u| present(&u.name).or(recorded_name(u)))
                    .unwrap_or(created_by)
                    .to_owned()
            }
        })
    }

    /// Which events `caller` may see.
    async fn event_scope(&self, caller: &Caller) -> Result<EventScope> {
        Ok(match &caller.info.access {
            KeyAccess::Admin => EventScope {
                admin: true,
                projects: None,
            },
            KeyAccess::Grants { grants } => {
                let admin = grants
                    .iter()
                    .any(|g| g.covers(Permission::Admin, None, None));
                let unlimited = grants
                    .iter()
                    .any(|g| g.project.as_deref().is_none_or(|p| p == "*"));
                EventScope {
                    admin,
                    projects: (!unlimited)
                        .then(|| grants.iter().filter_map(|g| g.project.clone()).collect()),
                }
            }
            KeyAccess::User { user_id } => {
                let key = user_key(*user_id);
                let user: Option<User> = decode_opt(&key, self.store.get(&key).await?.as_ref())?;
                EventScope {
                    admin: user.is_some_and(|u| u.root_role == ADMIN_ROLE),
                    projects: None,
                }
            }
            KeyAccess::Client { .. } => EventScope {
                admin: false,
                projects: Some(BTreeSet::new()),
            },
        })
    }
}

/// The author of `event` by id, as [`ToggleAdmin::event_creators`] lists it: its recorded
/// user id, or for an event recorded before authors were recorded by id, the id
/// [`creator_id`] gives its author's name.
fn author_of(event: &NewEvent) -> i64 {
    event
        .created_by_user_id
        .unwrap_or_else(|| creator_id(&event.created_by))
}

/// How the event routes show `event` (Unleash's `eventSchema`); `labelled` adds its label,
/// as Unleash's event search does.
pub fn event_view(event: Event, labelled: bool) -> EventView {
    let Event {
        id,
        revision,
        event: e,
    } = event;
    EventView {
        id,
        revision: revision.0,
        label: labelled.then(|| {
            event_label(&e.event_type)
                .map(str::to_owned)
                .unwrap_or_else(|| e.event_type.clone())
        }),
        event_type: e.event_type,
        created_by: e.created_by,
        created_by_user_id: e.created_by_user_id,
        created_at: e.created_at,
        project: e.project,
        feature_name: e.feature_name,
        environment: e.environment,
        data: e.data,
        pre_data: e.pre_data,
        tags: e.tags.unwrap_or_else(no_tags),
    }
}

/// `[]`.
fn no_tags() -> Json {
    Json::from_text("[]".to_owned()).unwrap_or_else(|_| Json::null())
}

/// Whether `event` mentions `text` (lower case): in its type, author, project, feature,
/// environment, data or data before, ignoring case.
fn mentions(event: &Event, text: &str) -> bool {
    let e = &event.event;
    [
        Some(e.event_type.as_str()),
        Some(e.created_by.as_str()),
        e.project.as_deref(),
        e.feature_name.as_deref(),
        e.environment.as_deref(),
        e.data.as_ref().map(|d| d.as_str()),
        e.pre_data.as_ref().map(|d| d.as_str()),
    ]
    .into_iter()
    .flatten()
    .any(|field| field.to_lowercase().contains(text))
}

/// An [`EventFieldFilter`] from Unleash's operator syntax: `IS:a`, `IS_NOT:a`, `IS_ANY_OF:a,b`,
/// `IS_NONE_OF:a,b`, or a bare value (`IS`). `None` for an unknown operator.
pub fn parse_event_filter(text: &str) -> Option<EventFieldFilter> {
    let (operator, rest) = match text.split_once(':') {
        Some((op, rest)) if op.chars().all(|c| c.is_ascii_uppercase() || c == '_') => (op, rest),
        _ => ("IS", text),
    };
    let (list, negated) = match operator {
        "IS" => (false, false),
        "IS_NOT" => (false, true),
        "IS_ANY_OF" => (true, false),
        "IS_NONE_OF" => (true, true),
        _ => return None,
    };
    let values = if list {
        rest.split(',').map(str::to_owned).collect()
    } else {
        vec![rest.to_owned()]
    };
    Some(EventFieldFilter { values, negated })
}
