//! Normalisation and comparison of recorded and replayed bodies, as the compatibility
//! material's README says; and the ids each server assigns to events and personal access
//! tokens (see [`assigned_id`]), which neither side chooses.

use std::collections::BTreeMap;

use serde_json::Value;

/// Members whose ISO timestamps are replaced by `<timestamp>`.
fn is_time_member(name: &str) -> bool {
    name.ends_with("At") || matches!(name, "lastSeen" | "started" | "date" | "seen" | "time")
}

/// What the `id` of an item of the list `member` becomes, for the lists whose ids the server
/// assigns and neither side chooses: an event's id is its position in the server's log,
/// which holds everything written on that server before (Unleash's own set-up and start-up
/// events, ours); a personal access token's is a number counting every token made on an
/// Unleash server, and here a number derived from the key's random id.
fn assigned_id(member: &str) -> Option<&'static str> {
    match member {
        "events" => Some("<event id>"),
        "pats" => Some("<token number>"),
        _ => None,
    }
}

/// Unleash's error names mapped to ours.
pub fn our_error_name(unleash: &str) -> &str {
    match unleash {
        "BadDataError" | "PatternError" => "ValidationError",
        "PermissionError" => "NoAccessError",
        "UnauthorizedError" => "AuthenticationRequired",
        other => other,
    }
}

/// Every UUID inside a string → `<uuid>`.
fn replace_uuids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if i + 36 <= text.len()
            && text.is_char_boundary(i)
            && text.is_char_boundary(i + 36)
            && uuid::Uuid::try_parse(&text[i..i + 36]).is_ok()
            && bytes[i + 8] == b'-'
        {
            out.push_str("<uuid>");
            i += 36;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn looks_like_timestamp(text: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(text).is_ok()
        || chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").is_ok()
}

/// Normalise `value` in place; `captured` maps captured integer ids to their `${name}`.
pub fn normalise(value: &mut Value, captured: &BTreeMap<i64, String>) {
    normalise_in(value, None, false, captured);
}

fn normalise_in(
    value: &mut Value,
    member: Option<&str>,
    in_segments: bool,
    captured: &BTreeMap<i64, String>,
) {
    match value {
        Value::String(text) => {
            if text == "<timestamp>" || text.starts_with("${") {
                return;
            }
            if member.is_some_and(is_time_member) && looks_like_timestamp(text) {
                *text = "<timestamp>".to_owned();
            } else if member == Some("stack") {
                *text = "<stack>".to_owned();
            } else {
                *text = replace_uuids(text);
            }
        }
        Value::Number(number) => {
            if in_segments && let Some(name) = number.as_i64().and_then(|n| captured.get(&n)) {
                *value = Value::String(format!("${{{name}}}"));
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Some(kind) = member.and_then(assigned_id)
                    && let Some(id) = item.get_mut("id").filter(|id| id.is_i64())
                {
                    *id = Value::from(kind);
                }
                normalise_in(item, member, in_segments, captured);
            }
        }
        Value::Object(object) => {
            object.remove("lifecycle");
            for (key, item) in object.iter_mut() {
                let segments = in_segments || key == "segments";
                normalise_in(item, Some(key), segments, captured);
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

/// Whether `ours` shows every member of `theirs` with an equal value (extra members on our
/// side are fine). Lists must have the same length; their order matters only under
/// `variants` and `strategies`. On a difference, the JSON pointer and both values.
pub fn contains(theirs: &Value, ours: &Value) -> Result<(), String> {
    contains_at(theirs, ours, "", false)
}

fn contains_at(theirs: &Value, ours: &Value, at: &str, ordered: bool) -> Result<(), String> {
    match (theirs, ours) {
        (Value::Object(t), Value::Object(o)) => {
            for (key, tv) in t {
                let Some(ov) = o.get(key) else {
                    return Err(format!("{at}/{key}: missing (Unleash: {tv})"));
                };
                let ordered = matches!(key.as_str(), "variants" | "strategies");
                contains_at(tv, ov, &format!("{at}/{key}"), ordered)?;
            }
            Ok(())
        }
        (Value::Array(t), Value::Array(o)) => {
            if t.len() != o.len() {
                return Err(format!(
                    "{at}: {} items, Unleash {} (ours {ours}, Unleash {theirs})",
                    o.len(),
                    t.len()
                ));
            }
            if ordered {
                for (i, (tv, ov)) in t.iter().zip(o).enumerate() {
                    contains_at(tv, ov, &format!("{at}/{i}"), false)?;
                }
                return Ok(());
            }
            let mut used = vec![false; o.len()];
            for (i, tv) in t.iter().enumerate() {
                let found = o
                    .iter()
                    .enumerate()
                    .find(|(j, ov)| !used[*j] && contains_at(tv, ov, "", false).is_ok());
                match found {
                    Some((j, _)) => used[j] = true,
                    None => {
                        return Err(format!(
                            "{at}/{i}: no item of ours matches {tv} (ours {ours})"
                        ));
                    }
                }
            }
            Ok(())
        }
        (t, o) if numbers_equal(t, o) || t == o => Ok(()),
        (t, o) => Err(format!("{at}: ours {o}, Unleash {t}")),
    }
}

fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => a.is_number() && b.is_number() && x == y,
        _ => false,
    }
}

/// Drop `member` from every object directly inside the list at `list` of `value`.
pub fn drop_in_list(value: &mut Value, list: &str, member: &str) {
    if let Some(Value::Array(items)) = value.get_mut(list) {
        for item in items {
            if let Value::Object(object) = item {
                object.remove(member);
            }
        }
    }
}
