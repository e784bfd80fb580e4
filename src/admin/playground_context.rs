//! The playground's context as a request writes it: Unleash's `sdkContextSchema` (`appName`,
//! `userId`, `sessionId`, `remoteAddress`, `environment`, `currentTime`, `properties`, and any
//! other top-level string as a property), checked field by field into the engine's
//! [`Context`], or flattened for the advanced playground's combinations.

use serde_json::{Map, Value};
use unleash_types::client_features::Context;

use crate::error::{Error, ErrorDetail, Result};

/// The context of a request: `appName` required; each field a string or `null` (absent);
/// `properties` an object of strings; any other top-level string is a property (and wins
/// over a property of the same name, as in Unleash).
pub(super) fn strict_context(raw: &Map<String, Value>) -> Result<Context> {
    let mut context = Context::default();
    let mut properties = std::collections::HashMap::new();
    let mut extra = Vec::new();
    let mut problems = Vec::new();
    for (name, value) in raw {
        if name == "properties" {
            match value {
                Value::Object(entries) => {
                    for (key, value) in entries {
                        match value {
                            Value::String(text) => {
                                properties.insert(key.clone(), text.clone());
                            }
                            Value::Null => {}
                            other => problems.push(not_a_string(
                                format!(
                                    "/context/properties/{}",
                                    crate::error::short_pointer_token(key)
                                ),
                                other,
                            )),
                        }
                    }
                }
                Value::Null => {}
                other => problems.push(ErrorDetail::at(
                    "/context/properties",
                    format!(
                        "properties must be an object, not {}",
                        crate::error::json_kind(other)
                    ),
                )),
            }
            continue;
        }
        let text = match value {
            Value::String(text) => text.clone(),
            Value::Null => continue,
            other => {
                problems.push(not_a_string(
                    format!("/context/{}", crate::error::short_pointer_token(name)),
                    other,
                ));
                continue;
            }
        };
        match name.as_str() {
            "appName" => context.app_name = Some(text),
            "userId" => context.user_id = Some(text),
            "sessionId" => context.session_id = Some(text),
            "remoteAddress" => context.remote_address = Some(text),
            "environment" => context.environment = Some(text),
            "currentTime" => context.current_time = Some(text),
            _ => extra.push((name.clone(), text)),
        }
    }
    properties.extend(extra);
    if context.app_name.as_deref().is_none_or(str::is_empty) {
        problems.push(ErrorDetail::at(
            "/context/appName",
            "the context needs an appName (at least one character)",
        ));
    }
    if let Some(time) = &context.current_time
        && chrono::DateTime::parse_from_rfc3339(time).is_err()
    {
        problems.push(ErrorDetail::at(
            "/context/currentTime",
            "currentTime must be an RFC 3339 date-time (2024-01-31T12:00:00Z)",
        ));
    }
    if !problems.is_empty() {
        problems.truncate(20);
        return Err(Error::validation("The context is not valid.", problems));
    }
    context.properties = (!properties.is_empty()).then_some(properties);
    Ok(context)
}

/// The advanced playground's context, flat (`properties` spread into the top level, as
/// Unleash evaluates it), and the top-level fields left out because they are not strings.
pub(super) fn lenient_context(
    raw: &Map<String, Value>,
) -> Result<(Map<String, Value>, Vec<String>)> {
    let mut flat = Map::new();
    let mut invalid = Vec::new();
    let mut problems = Vec::new();
    for (name, value) in raw {
        match (name.as_str(), value) {
            ("properties", Value::Object(entries)) => {
                for (key, value) in entries {
                    match value {
                        Value::String(_) => {
                            flat.entry(key.clone()).or_insert_with(|| value.clone());
                        }
                        Value::Null => {}
                        other => problems.push(not_a_string(
                            format!(
                                "/context/properties/{}",
                                crate::error::short_pointer_token(key)
                            ),
                            other,
                        )),
                    }
                }
            }
            ("properties", Value::Null) => {}
            ("properties", other) => problems.push(ErrorDetail::at(
                "/context/properties",
                format!(
                    "properties must be an object, not {}",
                    crate::error::json_kind(other)
                ),
            )),
            ("appName", Value::String(_)) => {
                flat.insert(name.clone(), value.clone());
            }
            ("appName", other) => problems.push(not_a_string("/context/appName".to_owned(), other)),
            (_, Value::String(_)) => {
                // A top-level field wins over a property of the same name.
                flat.insert(name.clone(), value.clone());
            }
            _ => invalid.push(name.clone()),
        }
    }
    if !problems.is_empty() {
        problems.truncate(20);
        return Err(Error::validation("The context is not valid.", problems));
    }
    Ok((flat, invalid))
}

fn not_a_string(path: String, value: &Value) -> ErrorDetail {
    ErrorDetail::at(
        path,
        format!(
            "a context value must be a string, not {}",
            crate::error::json_kind(value)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_context_needs_an_app_name_and_string_values() {
        let error = strict_context(&map(json!({"userId": 7, "properties": {"a": true}})))
            .err()
            .map(|e| {
                e.details()
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        assert_eq!(error.len(), 3, "{error:?}");
        assert!(error.iter().any(|d| d.contains("/context/appName")));
        assert!(error.iter().any(|d| d.contains("/context/userId")));
        assert!(error.iter().any(|d| d.contains("/context/properties/a")));
    }

    #[test]
    fn a_top_level_field_is_a_property_and_wins() {
        let context = strict_context(&map(json!({
            "appName": "a", "country": "NO", "properties": {"country": "DK", "tier": "gold"}
        })))
        .ok()
        .and_then(|c| c.properties)
        .unwrap_or_default();
        assert_eq!(context.get("country").map(String::as_str), Some("NO"));
        assert_eq!(context.get("tier").map(String::as_str), Some("gold"));
    }
}
