//! How [`Write`]s and [`Event`]s are decoded (journals, snapshots, HTTP clients).
//!
//! Their derived encodings stay as they are (`{"op": "put", "key": …, "value": …}`; an event
//! with its [`NewEvent`] members flattened in), but decoding goes through the plain structs
//! here: serde buffers an internally tagged enum or a flattened struct before decoding it,
//! and a [`Json`] (raw JSON text) can only be read from the text itself, never from that
//! buffer.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::{Event, Json, Key, NewEvent, Revision, Write};

/// The operation of a [`Write`] as encoded.
#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum WriteOp {
    Put,
    Delete,
}

/// A [`Write`] as encoded (`{"op": "put", "key": …, "value": …}`), decoded field by field.
#[derive(Deserialize)]
pub(super) struct WireWrite {
    op: WriteOp,
    key: Key,
    #[serde(default)]
    value: Option<Json>,
}

impl TryFrom<WireWrite> for Write {
    type Error = String;

    fn try_from(wire: WireWrite) -> Result<Self, Self::Error> {
        match (wire.op, wire.value) {
            (WriteOp::Put, Some(value)) => Ok(Write::Put {
                key: wire.key,
                value,
            }),
            (WriteOp::Put, None) => Err(format!("the put of {} has no value", wire.key)),
            (WriteOp::Delete, _) => Ok(Write::Delete { key: wire.key }),
        }
    }
}

/// An [`Event`] as encoded: its position and the members of its [`NewEvent`], side by side.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireEvent {
    id: u64,
    revision: Revision,
    #[serde(rename = "type")]
    event_type: String,
    created_by: String,
    created_at: DateTime<Utc>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    feature_name: Option<String>,
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    data: Option<Json>,
    #[serde(default)]
    pre_data: Option<Json>,
    #[serde(default)]
    created_by_user_id: Option<i64>,
    #[serde(default)]
    tags: Option<Json>,
}

impl From<WireEvent> for Event {
    fn from(wire: WireEvent) -> Self {
        Event {
            id: wire.id,
            revision: wire.revision,
            event: NewEvent {
                event_type: wire.event_type,
                created_by: wire.created_by,
                created_at: wire.created_at,
                project: wire.project,
                feature_name: wire.feature_name,
                environment: wire.environment,
                data: wire.data,
                pre_data: wire.pre_data,
                created_by_user_id: wire.created_by_user_id,
                tags: wire.tags,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::Collection;

    #[test]
    fn writes_decode_from_their_encoding() {
        let put = Write::Put {
            key: Key::new(Collection::Features, "f"),
            value: json!({"name": "f", "n": [1, 2]}).into(),
        };
        let delete = Write::Delete {
            key: Key::new(Collection::Features, "g"),
        };
        for write in [put, delete] {
            let text = serde_json::to_string(&write).unwrap();
            assert_eq!(
                serde_json::from_str::<Write>(&text).unwrap(),
                write,
                "{text}"
            );
        }
    }

    #[test]
    fn a_put_without_a_value_is_refused() {
        let error = serde_json::from_str::<Write>(
            r#"{"op": "put", "key": {"collection": "features", "id": "f"}}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("has no value"), "{error}");
    }

    #[test]
    fn events_decode_from_their_flat_encoding() {
        let event = Event {
            id: 7,
            revision: Revision(3),
            event: NewEvent {
                event_type: "feature-created".to_owned(),
                created_by: "admin".to_owned(),
                created_at: Utc::now(),
                project: Some("p".to_owned()),
                feature_name: Some("f".to_owned()),
                environment: None,
                data: Some(json!({"name": "f"}).into()),
                pre_data: None,
                created_by_user_id: None,
                tags: None,
            },
        };
        let text = serde_json::to_string(&event).unwrap();
        assert!(text.contains(r#""featureName":"f""#), "{text}");
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
    }
}
