//! What one commit carries: the preconditions that must still hold, the writes, and the
//! events describing them, applied by [`Store::commit`](super::Store::commit) all together
//! or not at all.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Collection, Json, Key, Revision, wire};

/// What must still hold for a change set to be applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Precondition {
    /// The record at `key` is still at `revision`: no commit wrote or deleted it since.
    /// `revision` [`Revision::ABSENT`] means the record must not exist.
    Record {
        /// The record.
        key: Key,
        /// The revision it was read at.
        revision: Revision,
    },
    /// No commit wrote or deleted anything in `collection` after `revision`.
    CollectionUnchanged {
        /// The collection.
        collection: Collection,
        /// The collection's revision when it was read ([`Listing::revision`](super::Listing::revision)).
        revision: Revision,
    },
}

/// One write of a change set.
// Decoded through `wire::WireWrite` (see there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case", try_from = "wire::WireWrite")]
pub enum Write {
    /// Create or replace the record at `key`.
    Put {
        /// Where.
        key: Key,
        /// The new value.
        value: Json,
    },
    /// Delete the record at `key`; deleting a record that does not exist is not an error.
    Delete {
        /// Where.
        key: Key,
    },
}

impl Write {
    /// The key this write touches.
    pub fn key(&self) -> &Key {
        match self {
            Write::Put { key, .. } | Write::Delete { key } => key,
        }
    }
}

/// An audit event as the facade proposes it, committed with the writes it describes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NewEvent {
    /// The event type, Unleash's name (`feature-environment-variants-updated`, …).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Who made the change (the email or username of the user a key acts as, else the
    /// key's name).
    pub created_by: String,
    /// When the change was made.
    pub created_at: DateTime<Utc>,
    /// The project concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The feature concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_name: Option<String>,
    /// The environment concerned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The state after the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub data: Option<Json>,
    /// The state before the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Object>))]
    pub pre_data: Option<Json>,
    /// Who made the change, by user id, when known: the user a key acts as, or a number
    /// standing for a kind of author (the facade's, Unleash's: -42 for a key acting as no
    /// user, -1337 for the service itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_user_id: Option<i64>,
    /// The tags the event carries (a JSON array), if any: a deleted feature's tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "http", schema(value_type = Option<Vec<Object>>))]
    pub tags: Option<Json>,
}

/// An event as stored: the proposed event with its position in the log. Also the wire type
/// of the event log (`GET /api/admin/events`), whose OpenAPI schema is derived from it.
// Decoded through `wire::WireEvent` (see there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", from = "wire::WireEvent")]
pub struct Event {
    /// The event's id: 1 for the first event of the store, then increasing, in change-set
    /// order within a commit. In this crate's MemoryStore and FileStore ids have no gaps and
    /// follow commit order; a PostgresStore may skip ids (a commit that failed) and two
    /// commits running side by side may interleave theirs (see the [`Store`](super::Store) contract).
    pub id: u64,
    /// The revision of the commit that recorded it.
    #[cfg_attr(feature = "http", schema(value_type = u64))]
    pub revision: Revision,
    /// The event itself.
    #[serde(flatten)]
    pub event: NewEvent,
}

/// Everything one operation writes, applied atomically by [`Store::commit`](super::Store::commit).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ChangeSet {
    /// What must still hold; if any does not, nothing is written.
    pub preconditions: Vec<Precondition>,
    /// The writes, applied in order (a later write to the same key wins).
    pub writes: Vec<Write>,
    /// The events, appended to the log in order.
    pub events: Vec<NewEvent>,
}

impl ChangeSet {
    /// An empty change set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Require that the record at `key` is still at `revision`.
    pub fn expect_revision(&mut self, key: Key, revision: Revision) -> &mut Self {
        self.preconditions
            .push(Precondition::Record { key, revision });
        self
    }

    /// Require that nothing in `collection` changed since `revision`.
    pub fn expect_collection(&mut self, collection: Collection, revision: Revision) -> &mut Self {
        self.preconditions.push(Precondition::CollectionUnchanged {
            collection,
            revision,
        });
        self
    }

    /// Create or replace the record at `key`.
    ///
    /// `value` is a [`Json`] document or anything that converts into one (a [`serde_json::Value`]).
    pub fn put(&mut self, key: Key, value: impl Into<Json>) -> &mut Self {
        self.writes.push(Write::Put {
            key,
            value: value.into(),
        });
        self
    }

    /// Delete the record at `key`.
    pub fn delete(&mut self, key: Key) -> &mut Self {
        self.writes.push(Write::Delete { key });
        self
    }

    /// Record an event with the writes.
    pub fn event(&mut self, event: NewEvent) -> &mut Self {
        self.events.push(event);
        self
    }

    /// True when the change set writes nothing and records no event.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.events.is_empty()
    }
}
