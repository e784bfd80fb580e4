//! A deserializer over a parsed JSON [`Value`] that refuses an array where a struct belongs.
//!
//! serde's derived `Deserialize` accepts a struct written as an array of its fields in order
//! (`["checkout", "release"]` for `{name, type}`), and `serde_json` lets it. For a request
//! body that is a client's mistake, not a shorthand: it gets a 400 naming the path instead.
//! Everything else behaves as deserialising from the `Value` does. (Inside flattened or
//! tagged types serde buffers the value and this check no longer reaches.)

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Value};

/// `value`, deserialised strictly.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strict<'a>(pub &'a Value);

fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (None, Some(i), _) => Unexpected::Signed(i),
            (None, None, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

impl<'a> Deserializer<'a> for Strict<'a> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Seq(items.iter())),
            Value::Object(map) => visitor.visit_map(Map {
                entries: map.iter(),
                value: None,
            }),
            scalar => scalar.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Map {
                entries: map.iter(),
                value: None,
            }),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Seq(items.iter())),
            other => Err(de::Error::invalid_type(unexpected(other), &visitor)),
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    forward_to_deserialize_any! {
        <W: Visitor<'a>>
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct identifier ignored_any
    }
}

struct Seq<'a>(std::slice::Iter<'a, Value>);

impl<'a> SeqAccess<'a> for Seq<'a> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|item| seed.deserialize(Strict(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Map<'a> {
    entries: serde_json::map::Iter<'a>,
    value: Option<&'a Value>,
}

impl<'a> MapAccess<'a> for Map<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(BorrowedStrDeserializer::new(key))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(value) => seed.deserialize(Strict(value)),
            None => Err(de::Error::custom(
                "a map value was asked for before its key",
            )),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    use super::Strict;
    use crate::model::{FeatureVariants, ImportBody, Project};

    fn strict<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
        T::deserialize(Strict(value))
    }

    #[test]
    fn real_exports_decode_as_serde_json_decodes_them() {
        for name in [
            "export-two-features.json",
            "export-strategies-constraints.json",
            "export-segment-context-dependency.json",
        ] {
            let path = format!(
                "{}/tests/fixtures/unleash-6.10.1/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            let body = json!({"project": "default", "environment": "development", "data": value});
            let lax: ImportBody = serde_json::from_value(body.clone()).unwrap();
            let strict: ImportBody = strict(&body).unwrap();
            assert_eq!(strict, lax, "{name}");
        }
    }

    #[test]
    fn options_enums_and_nulls_decode() {
        let body = json!({"version": 1, "variants": [
            {"name": "a", "weight": 1, "weightType": "fix", "stickiness": null,
             "payload": {"type": "json", "value": "{}"}, "overrides": [{"contextName": "x", "values": ["1"]}]}
        ]});
        let lax: FeatureVariants = serde_json::from_value(body.clone()).unwrap();
        assert_eq!(strict::<FeatureVariants>(&body).unwrap(), lax);
    }

    #[test]
    fn an_array_for_a_struct_is_refused_at_any_depth() {
        assert!(strict::<Project>(&json!(["p", "P"])).is_err());
        assert!(serde_json::from_value::<Project>(json!(["p", "P"])).is_ok());
        let nested = json!({"id": "p", "name": "P", "featureNaming": ["x"]});
        assert!(strict::<Project>(&nested).is_err());
        assert!(strict::<FeatureVariants>(&json!({"version": 1, "variants": [["a", 1]]})).is_err());
    }
}
