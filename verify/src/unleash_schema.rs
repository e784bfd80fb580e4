//! Answers checked against Unleash's own OpenAPI document (Unleash 6.10.1, as served at
//! `/docs/openapi.json`; `tests/fixtures/unleash-compat/unleash-openapi-6.10.1.json`): the
//! schema of an operation's response, as JSON Schema, and an assertion that a body is valid
//! against it (every member it requires present, every type exact, no member it does not
//! allow).
//!
//! The document is OpenAPI 3.0: its `nullable: true` becomes a JSON Schema union with
//! `null`, and its `$ref`s resolve against its own `components`. Formats (`date-time`) are
//! checked too.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

/// Unleash's document, read once.
static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/unleash-compat/unleash-openapi-6.10.1.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
});

/// Unleash 6.10.1's OpenAPI document.
pub fn unleash_document() -> &'static Value {
    &DOCUMENT
}

/// The operation `operation_id` of Unleash's document: `(method, path, operation)`.
pub fn unleash_operation(operation_id: &str) -> (String, String, &'static Value) {
    let paths = DOCUMENT["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, operation) in item.as_object().into_iter().flatten() {
            if operation["operationId"] == operation_id {
                return (method.to_uppercase(), path.clone(), operation);
            }
        }
    }
    panic!("Unleash's document has no operation {operation_id}");
}

/// The JSON Schema (draft 2020-12) of the JSON body of the `status` response of Unleash's
/// operation `operation_id`, with the document's components alongside for its references.
pub fn unleash_response_schema(operation_id: &str, status: u16) -> Value {
    let (_, _, operation) = unleash_operation(operation_id);
    let schema =
        &operation["responses"][status.to_string()]["content"]["application/json"]["schema"];
    assert!(
        schema.is_object(),
        "Unleash's {operation_id} documents no JSON body for {status}"
    );
    let mut root = match to_json_schema(schema) {
        Value::Object(map) => map,
        other => panic!("{operation_id} {status}: not a schema object: {other}"),
    };
    let components: Map<String, Value> = DOCUMENT["components"]["schemas"]
        .as_object()
        .expect("components.schemas")
        .iter()
        .map(|(name, schema)| (name.clone(), to_json_schema(schema)))
        .collect();
    root.insert(
        "$schema".to_owned(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    root.insert("components".to_owned(), json!({ "schemas": components }));
    Value::Object(root)
}

/// Assert that `body` is what Unleash's document says operation `operation_id` answers
/// with `status`: panics listing every violation with where it is in the body.
pub fn assert_unleash_response(operation_id: &str, status: u16, body: &Value) {
    let schema = unleash_response_schema(operation_id, status);
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{operation_id} {status}: the schema does not compile: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not Unleash's {operation_id} {status} answer: {errors:#?}\n{body:#}"
    );
}

/// An OpenAPI 3.0 schema as JSON Schema: `nullable: true` becomes a union with `null`.
fn to_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: Map<String, Value> = map
                .iter()
                .filter(|(key, _)| key.as_str() != "nullable")
                .map(|(key, value)| {
                    // Under `properties` every key is a member's name, not a keyword.
                    let value = if key == "properties" {
                        match value {
                            Value::Object(members) => Value::Object(
                                members
                                    .iter()
                                    .map(|(name, s)| (name.clone(), to_json_schema(s)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        to_json_schema(value)
                    };
                    (key.clone(), value)
                })
                .collect();
            if map.get("nullable") == Some(&Value::Bool(true)) {
                match out.remove("type") {
                    Some(Value::String(kind)) => {
                        out.insert("type".to_owned(), json!([kind, "null"]));
                        if let Some(Value::Array(values)) = out.get_mut("enum") {
                            values.push(Value::Null);
                        }
                    }
                    other => {
                        if let Some(kind) = other {
                            out.insert("type".to_owned(), kind);
                        }
                        return json!({ "anyOf": [Value::Object(out), { "type": "null" }] });
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(to_json_schema).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_becomes_a_union_with_null() {
        let schema = to_json_schema(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "nullable": true},
                "b": {"$ref": "#/components/schemas/x", "nullable": true},
                "nullable": {"type": "boolean"}
            }
        }));
        assert_eq!(schema["properties"]["a"]["type"], json!(["string", "null"]));
        assert_eq!(
            schema["properties"]["b"]["anyOf"][1],
            json!({"type": "null"})
        );
        // A member named like the keyword stays.
        assert_eq!(schema["properties"]["nullable"]["type"], "boolean");
    }

    #[test]
    fn an_answer_missing_a_required_member_or_with_an_extra_one_is_refused() {
        let valid = json!({"version": 1, "roles": [{"id": 1, "type": "root", "name": "Admin"}]});
        assert_unleash_response("getUserRoles", 200, &valid);
        for invalid in [
            json!({"roles": []}),
            json!({"version": 1, "roles": [], "extra": true}),
            json!({"version": "1", "roles": []}),
            json!({"version": 1, "roles": [{"id": 1, "type": "root"}]}),
        ] {
            let result =
                std::panic::catch_unwind(|| assert_unleash_response("getUserRoles", 200, &invalid));
            assert!(result.is_err(), "accepted {invalid}");
        }
    }
}
