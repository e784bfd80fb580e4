//! Wire types: every resource of the specification as serde types with Unleash's exact JSON
//! names (camelCase, `type`). Deprecated fields are accepted and returned; closed sets are
//! enums.
//!
//! Documents made by Unleash round-trip exactly: optional fields absent on input stay absent,
//! nullable fields sent as `null` come back as `null` (a double `Option`: outer `None` = absent,
//! `Some(None)` = `null`), and the resources that Unleash grows over versions keep unknown keys
//! in an `extra` map. Timestamps are written the way Unleash (JavaScript's `toISOString`) writes
//! them: UTC, with milliseconds, e.g. `2024-01-01T00:00:00.000Z`.

mod access;
mod application;
mod catalog;
mod client;
mod client_metrics;
mod context;
mod edge;
mod events;
mod export;
mod feature;
mod feature_archive;
mod feature_edits;
mod feature_lifecycle;
mod feature_links;
mod feature_list;
mod feature_search;
mod feature_types;
mod frontend;
mod import;
mod json;
mod keys;
mod maintenance;
mod ofrep;
mod permissions;
mod playground;
mod playground_page;
mod project;
mod project_health;
mod project_status;
mod segments;
mod strategy;
mod tags;
mod ui_config;
mod users;
mod variant;

pub use access::*;
pub use application::*;
pub use catalog::*;
pub use client::*;
pub use client_metrics::*;
pub use context::*;
pub use edge::*;
pub use events::*;
pub use export::*;
pub use feature::*;
pub use feature_archive::*;
pub use feature_edits::*;
pub use feature_lifecycle::*;
pub use feature_links::*;
pub use feature_list::*;
pub use feature_search::*;
pub use feature_types::*;
pub use frontend::*;
pub use import::*;
pub use json::Json;
pub use keys::*;
pub use maintenance::*;
pub use ofrep::*;
pub use permissions::*;
pub use playground::*;
pub use playground_page::*;
pub use project::*;
pub use project_health::*;
pub use project_status::*;
pub use segments::*;
pub use strategy::*;
pub use tags::*;
pub use ui_config::*;
pub use users::*;
pub use variant::*;

use serde::{Deserialize, Deserializer};

/// Deserialises a nullable optional field: present `null` becomes `Some(None)`, a present value
/// `Some(Some(v))`. Together with `#[serde(default)]` an absent field stays `None`, so that
/// absent and `null` both survive a round trip.
pub(crate) fn double_option<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Writes a timestamp as Unleash does: RFC 3339 in UTC with at least millisecond precision.
fn format_timestamp(at: &chrono::DateTime<chrono::Utc>) -> String {
    use chrono::{SecondsFormat, Timelike};
    // JavaScript always writes milliseconds; finer precision is kept rather than truncated.
    let format = if at.nanosecond().is_multiple_of(1_000_000) {
        SecondsFormat::Millis
    } else {
        SecondsFormat::AutoSi
    };
    at.to_rfc3339_opts(format, true)
}

/// `with` module for an optional, non-nullable timestamp (`Option<DateTime<Utc>>`).
pub(crate) mod timestamp {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the timestamp in Unleash's format, `null` when `None`.
    pub(crate) fn serialize<S: Serializer>(
        value: &Option<DateTime<Utc>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(at) => serializer.serialize_str(&super::format_timestamp(at)),
            None => serializer.serialize_none(),
        }
    }

    /// Reads an RFC 3339 timestamp with any offset, converted to UTC.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        Option::<DateTime<Utc>>::deserialize(deserializer)
    }
}

/// `with` module for an optional, nullable timestamp (`Option<Option<DateTime<Utc>>>`, see
/// [`double_option`]).
pub(crate) mod nullable_timestamp {
    use chrono::{DateTime, Utc};
    use serde::{Deserializer, Serializer};

    /// Writes the timestamp in Unleash's format, `null` for `Some(None)`.
    pub(crate) fn serialize<S: Serializer>(
        value: &Option<Option<DateTime<Utc>>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        super::timestamp::serialize(&value.flatten(), serializer)
    }

    /// Reads `null` as `Some(None)` and a timestamp as `Some(Some(_))`.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Option<DateTime<Utc>>>, D::Error> {
        super::timestamp::deserialize(deserializer).map(Some)
    }
}

/// `with` module for a timestamp written as Unleash writes API tokens' dates: always with
/// milliseconds, finer precision cut (`2024-01-01T00:00:00.000Z`). Only the HTTP API's key
/// views write it.
pub(crate) mod millis_timestamp {
    use chrono::{DateTime, SecondsFormat, Utc};
    use serde::Serializer;

    pub(crate) fn serialize<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&at.to_rfc3339_opts(SecondsFormat::Millis, true))
    }

    /// An optional timestamp: `null` when absent.
    pub(crate) mod optional {
        use chrono::{DateTime, Utc};
        use serde::Serializer;

        pub(crate) fn serialize<S: Serializer>(
            at: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => super::serialize(at, s),
                None => s.serialize_none(),
            }
        }
    }
}
