//! No NUL (U+0000) in anything stored, on every store.
//!
//! PostgreSQL's `text` and `jsonb` cannot hold the NUL character, while the MemoryStore and
//! the FileStore can: left to the stores, the same request would be stored by one and fail
//! with a 500 on the other. So the facade refuses it once, before any commit, with a 400
//! naming where it is, for every string of every record and event a change set writes —
//! whatever operation built it (a context field's legal value, a description, a variant's
//! payload, an import document, …) — rather than field by field in each operation.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::store::{ChangeSet, Json, Write};

const MESSAGE: &str = "must not contain the NUL character (U+0000)";

/// [`Error::Validation`] naming the first string of `changes` that holds a NUL: its JSON
/// path within the record or event written (`legalValues[0].value`, `description`), or `id`
/// for a record's key.
pub(crate) fn refuse_nul(changes: &ChangeSet) -> Result<()> {
    for write in &changes.writes {
        let (key, value) = match write {
            Write::Put { key, value } => (key, Some(value)),
            Write::Delete { key } => (key, None),
        };
        if key.id.contains('\0') {
            return Err(Error::invalid_at("id", MESSAGE));
        }
        if let Some(path) = value.and_then(nul_in) {
            return Err(Error::invalid_at(path, MESSAGE));
        }
    }
    for event in &changes.events {
        let texts = [
            ("type", Some(&event.event_type)),
            ("createdBy", Some(&event.created_by)),
            ("project", event.project.as_ref()),
            ("featureName", event.feature_name.as_ref()),
            ("environment", event.environment.as_ref()),
        ];
        for (field, text) in texts {
            if text.is_some_and(|text| text.contains('\0')) {
                return Err(Error::invalid_at(field, MESSAGE));
            }
        }
        for (field, data) in [("data", &event.data), ("preData", &event.pre_data)] {
            if let Some(path) = data.as_ref().and_then(nul_in) {
                let path = if path.is_empty() {
                    field.to_owned()
                } else if path.starts_with('[') {
                    format!("{field}{path}")
                } else {
                    format!("{field}.{path}")
                };
                return Err(Error::invalid_at(path, MESSAGE));
            }
        }
    }
    Ok(())
}

/// The path of the first string (or object key) in `json` holding a NUL. JSON text writes a
/// NUL as the escape `\u0000`, so text without that sequence needs no parsing: the common
/// case costs one scan.
fn nul_in(json: &Json) -> Option<String> {
    let text = json.as_str();
    if !text.contains("\\u0000") {
        return None;
    }
    // The sequence may also be an escaped backslash followed by `u0000`: parse to be sure.
    let value: Value = serde_json::from_str(text).ok()?;
    let mut path = String::new();
    find(&value, &mut path).then_some(path)
}

/// Whether `value` holds a NUL; if so, `path` leads to it.
fn find(value: &Value, path: &mut String) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().enumerate().any(|(index, item)| {
            let len = path.len();
            path.push_str(&format!("[{index}]"));
            let found = find(item, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        Value::Object(fields) => fields.iter().any(|(name, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            // A NUL in a key is shown escaped, so that the path itself holds none.
            path.push_str(&name.replace('\0', "\\u0000"));
            let found = name.contains('\0') || find(item, path);
            if !found {
                path.truncate(len);
            }
            found
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::{Collection, Key};

    fn put(value: Value) -> ChangeSet {
        let mut changes = ChangeSet::new();
        changes.put(Key::new(Collection::ContextFields, "f"), value);
        changes
    }

    fn path_of(changes: &ChangeSet) -> Option<String> {
        refuse_nul(changes)
            .err()
            .and_then(|error| error.details().first()?.path.clone())
    }

    #[test]
    fn names_the_path_of_the_string_holding_a_nul() {
        let changes = put(json!({"legalValues": [{"value": "a"}, {"value": "b\u{0}"}]}));
        assert_eq!(path_of(&changes).as_deref(), Some("legalValues[1].value"));
        let changes = put(json!({"parameters": {"x\u{0}": "1"}}));
        assert_eq!(path_of(&changes).as_deref(), Some("parameters.x\\u0000"));
    }

    #[test]
    fn an_escaped_backslash_before_u0000_is_no_nul() {
        assert!(refuse_nul(&put(json!({"description": "C:\\u0000"}))).is_ok());
        assert!(refuse_nul(&put(json!({"description": "plain"}))).is_ok());
    }

    #[test]
    fn a_nul_in_an_id_is_refused() {
        let mut changes = ChangeSet::new();
        changes.delete(Key::new(Collection::Features, "a\u{0}"));
        assert_eq!(path_of(&changes).as_deref(), Some("id"));
    }
}
