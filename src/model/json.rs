//! [`Json`]: how a store holds a record's value and an event's data — valid JSON text,
//! shared.

use std::fmt;
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON document as a store holds it: valid JSON text, shared (a clone is a reference-count
/// increment, never a copy).
///
/// Text rather than a [`Value`] tree, for three reasons that all come from feature-toggle
/// workloads (many small records, read far more often than written):
///
/// * **memory**: a small object as a `Value` is a B-tree node of ~600 bytes plus a heap
///   string per key; as text it is its own length (a feature with four variants: ~6 KB as
///   `Value`s, ~0.5 KB as text);
/// * **writes**: a record is serialised straight from its typed form
///   ([`Json::encode`]), one buffer instead of one allocation per member, and a journal or
///   a database receives that text as it is;
/// * **reads**: typed records are decoded straight from the text ([`Json::decode`]),
///   borrowing where they can.
///
/// Equality is equality of the JSON values (`{"a":1,"b":2}` equals `{ "b": 2, "a": 1 }`), so a
/// value that went through PostgreSQL's `jsonb` compares equal to the one written.
#[derive(Clone)]
pub struct Json(Arc<RawValue>);

impl Json {
    /// The JSON `null`.
    pub fn null() -> Self {
        Self::from_raw(RawValue::NULL.to_owned())
    }

    /// `value` as JSON text.
    pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(Self::from_raw)
    }

    /// `value` as JSON text, for values that always serialise (the crate's model types: no
    /// maps with non-string keys, no failing `Serialize` impls). Should one fail anyway, the
    /// document is `null` and the failure is logged: an event's data is not worth a panic.
    pub(crate) fn of<T: Serialize + ?Sized>(value: &T) -> Self {
        Self::encode(value).unwrap_or_else(|error| {
            tracing::error!(%error, "a value could not be encoded as JSON; stored as null");
            Self::null()
        })
    }

    /// `text`, once checked to be one valid JSON value.
    pub fn from_text(text: String) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text).map(Self::from_raw)
    }

    pub(crate) fn from_raw(raw: Box<RawValue>) -> Self {
        Self(Arc::from(raw))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The text as a [`RawValue`], to embed in a larger document without re-encoding it.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// Decode the document into `T`, borrowing from the text where `T` allows.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }

    /// The document as a [`Value`] tree. Fails only for a document nested deeper than
    /// serde_json's recursion limit (128 levels), which the facade never writes.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        self.decode()
    }
}

impl From<&Value> for Json {
    fn from(value: &Value) -> Self {
        // A `Value` always serialises (its map keys are strings); `Display` is its compact
        // JSON text, which is valid, so only an impossible failure falls back to `null`.
        RawValue::from_string(value.to_string()).map_or_else(|_| Self::null(), Self::from_raw)
    }
}

impl From<Value> for Json {
    fn from(value: Value) -> Self {
        Self::from(&value)
    }
}

impl PartialEq for Json {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || self.as_str() == other.as_str()
            || matches!((self.to_value(), other.to_value()), (Ok(a), Ok(b)) if a == b)
    }
}

impl PartialEq<Value> for Json {
    fn eq(&self, other: &Value) -> bool {
        self.to_value().is_ok_and(|value| value == *other)
    }
}

impl fmt::Debug for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(Self::from_raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_is_of_values_not_of_text() {
        let a = Json::from_text(r#"{"a":1,"b":[true,null]}"#.to_owned()).unwrap();
        let b = Json::from_text(r#"{ "b": [true, null], "a": 1 }"#.to_owned()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, json!({"b": [true, null], "a": 1}));
        assert_ne!(a, Json::from(json!({"a": 2, "b": [true, null]})));
    }

    #[test]
    fn invalid_text_is_refused() {
        assert!(Json::from_text("{\"a\":".to_owned()).is_err());
        assert!(Json::from_text("1 2".to_owned()).is_err());
    }

    #[test]
    fn it_serialises_as_the_embedded_document() {
        let doc = Json::encode(&json!({"x": [1, 2]})).unwrap();
        let outer = serde_json::to_string(&json!({"doc": doc.to_value().unwrap()})).unwrap();
        assert_eq!(
            serde_json::to_string(&vec![doc.clone()]).unwrap(),
            r#"[{"x":[1,2]}]"#
        );
        let back: Json = serde_json::from_str(r#"{"x":[1,2]}"#).unwrap();
        assert_eq!(back, doc);
        assert_eq!(outer, r#"{"doc":{"x":[1,2]}}"#);
    }

    #[test]
    fn typed_records_decode_from_the_text() {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            project: &'a str,
        }
        let doc = Json::encode(&json!({"project": "p", "other": 1})).unwrap();
        assert_eq!(doc.decode::<Head<'_>>().unwrap().project, "p");
    }
}
