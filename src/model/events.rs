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
    /// Who made it: an [`EventCreator`]'s id (the event's `createdByUserId`), or the name
    /// the event records as its `createdBy` (a user's email or username, a key's name).
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

/// Someone who made events (Unleash's `eventCreatorsSchema` item): a user by its id, or one
/// of Unleash's authors that are no user (-42 `Unleash Admin Token` for keys acting as no
/// user, -1337 `Unleash System`); the event search's `createdBy` takes the id (or the name
/// the events record as their `createdBy`, which for a user is its email or username).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
pub struct EventCreator {
    /// The user's id, or the number standing for an author that is no user.
    pub id: i64,
    /// The author's name.
    pub name: String,
}

/// An event as the event routes show it (Unleash's `eventSchema`): every member present,
/// `null` when it does not apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    /// The event's id: its position in the log, 1 for the first.
    pub id: u64,
    /// The revision of the commit that recorded it (this crate's; Unleash has none).
    pub revision: u64,
    /// The event type, Unleash's name (`feature-created`, …).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Who made the change, as Unleash records it: for a key acting as a user, the user's
    /// email, else its username (as the user was when the change committed); for a key acting
    /// as no user, the key's name (as Unleash records an admin token's name).
    pub created_by: String,
    /// Who made the change, by user id: the user a key acts as, -42 for a key acting as no
    /// user (Unleash's admin token user), -1337 for the service itself; `null` for events
    /// recorded before authors were recorded by id.
    pub created_by_user_id: Option<i64>,
    /// When.
    #[serde(with = "super::millis_timestamp")]
    #[cfg_attr(feature = "http", schema(value_type = String, format = DateTime))]
    pub created_at: DateTime<Utc>,
    /// The project concerned, if any.
    pub project: Option<String>,
    /// The feature concerned, if any.
    pub feature_name: Option<String>,
    /// The environment concerned, if any.
    pub environment: Option<String>,
    /// The state after the change.
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub data: Option<super::Json>,
    /// The state before the change.
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub pre_data: Option<super::Json>,
    /// The tags the event carries, `[{type, value}]`: a deleted feature's tags, as Unleash
    /// records them; empty for every other event.
    #[cfg_attr(feature = "http", schema(value_type = Vec<Object>))]
    pub tags: super::Json,
    /// What happened, for people (`Flag created`, …), in the event search only: Unleash's
    /// label of the event type, or the type itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// Unleash's label of an event type, for people (the event search's `label`); `None` for a
/// type Unleash gives none (it shows the type itself).
pub fn event_label(event_type: &str) -> Option<&'static str> {
    Some(match event_type {
        "api-token-created" => "API token created",
        "api-token-deleted" => "API token deleted",
        "context-field-created" => "Context field created",
        "context-field-deleted" => "Context field deleted",
        "context-field-updated" => "Context field updated",
        "feature-archived" => "Flag archived",
        "feature-created" => "Flag created",
        "feature-deleted" => "Flag deleted",
        "feature-environment-disabled" => "Flag disabled",
        "feature-environment-enabled" => "Flag enabled",
        "feature-environment-variants-updated" => "Flag variants updated",
        "feature-metadata-updated" => "Flag metadata updated",
        "feature-completed" => "Flag marked as completed",
        "feature-potentially-stale-on" => "Flag potentially stale",
        "feature-project-change" => "Flag moved to a new project",
        "feature-revived" => "Flag revived",
        "feature-stale-off" => "Flag stale marking removed",
        "feature-stale-on" => "Flag marked as stale",
        "feature-strategy-add" => "Flag strategy added",
        "feature-strategy-remove" => "Flag strategy removed",
        "feature-strategy-update" => "Flag strategy updated",
        "feature-tagged" => "Flag tagged",
        "feature-untagged" => "Flag untagged",
        "group-created" => "Group created",
        "group-deleted" => "Group deleted",
        "group-updated" => "Group updated",
        "project-created" => "Project created",
        "project-archived" => "Project archived",
        "project-deleted" => "Project deleted",
        "segment-created" => "Segment created",
        "segment-deleted" => "Segment deleted",
        "segment-updated" => "Segment updated",
        "user-created" => "User created",
        "user-deleted" => "User deleted",
        "user-updated" => "User updated",
        _ => return None,
    })
}
