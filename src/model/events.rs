//! Searching the event log: the filters of Unleash's event search routes and their answers.
//! The events themselves are the store's [`Event`](crate::store::Event)s.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// One filter of an event search: the values a field may (or, `negated`, may not) have.
/// Unleash writes them as `IS:value`, `IS_ANY_OF:a,b`, `IS_NOT:value`, `IS_NONE_OF:a,b`; a
/// value without an operator means `IS`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventFieldFilter {
    /// The values.
    pub values: Vec<String>,
    /// True when the field must have none of them.
    pub negated: bool,
}

impl EventFieldFilter {
    /// The field is `value`.
    pub fn is(value: impl Into<String>) -> Self {
        Self {
            values: vec![value.into()],
            negated: false,
        }
    }

    /// Whether `value` passes (an absent value passes only a negated filter).
    pub fn passes(&self, value: Option<&str>) -> bool {
        let found = value.is_some_and(|v| self.values.iter().any(|w| w == v));
        found != self.negated
    }

    /// Whether a field known by any of `names` (e.g. an author's name and its id) passes.
    pub fn passes_any(&self, names: &[&str]) -> bool {
        let found = names.iter().any(|n| self.values.iter().any(|w| w == n));
        found != self.negated
    }

    /// The one value this filter requires, when it requires exactly one.
    pub fn single(&self) -> Option<&str> {
        match self.values.as_slice() {
            [one] if !self.negated => Some(one),
            _ => None,
        }
    }
}

/// What to find in the event log (every filter given must hold), newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventSearch {
    /// Text found, ignoring case, in the event's type, author, project, feature,
    /// environment, data or data before.
    pub query: Option<String>,
    /// The event's type.
    pub event_type: Option<EventFieldFilter>,
    /// The event's project.
    pub project: Option<EventFieldFilter>,
    /// The event's feature.
    pub feature: Option<EventFieldFilter>,
    /// Who made it: an [`EventCreator`]'s id, or its name.
    pub created_by: Option<EventFieldFilter>,
    /// Only events made at or after this instant.
    pub from: Option<DateTime<Utc>>,
    /// Only events made before this instant.
    pub to: Option<DateTime<Utc>>,
    /// Skip this many matches.
    pub offset: u64,
    /// The most events to return.
    pub limit: usize,
}

/// The body of `POST /api/admin/events/search` (Unleash's `deprecatedSearchEventsSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EventSearchBody {
    /// Only events of this type.
    #[serde(rename = "type", default)]
    pub event_type: Option<String>,
    /// Only events of this project.
    #[serde(default)]
    pub project: Option<String>,
    /// Only events of this feature.
    #[serde(default)]
    pub feature: Option<String>,
    /// Text to find, ignoring case, in the event's type, author, data and data before.
    #[serde(default)]
    pub query: Option<String>,
    /// The most events to return: 100 when absent, at most 1000.
    #[serde(default)]
    pub limit: Option<u64>,
    /// Skip this many matches.
    #[serde(default)]
    pub offset: Option<u64>,
}

/// Someone who made events (Unleash's `eventCreatorsSchema` item).
///
/// Events here record who made them by name (the key's name), not by user id, so the id is
/// derived from the name: the same name always has the same id, and the event search's
/// `createdBy` takes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct EventCreator {
    /// A number standing for the name.
    pub id: i64,
    /// The name events record.
    pub name: String,
}
