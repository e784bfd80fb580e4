//! OpenFeature's Remote Evaluation Protocol (OFREP, `open-feature/protocol`): the answers of
//! `POST /ofrep/v1/evaluate/flags/{key}` and `POST /ofrep/v1/evaluate/flags`, as OpenFeature's
//! OFREP providers read them.
//!
//! A flag evaluates to an [`OfrepEvaluation`] (`{key, value, reason, variant, metadata}`) or
//! an [`OfrepFailure`] (`{key, errorCode, errorDetails}`); the bulk answer lists either for
//! every flag of the key's scope ([`OfrepBulk`]), and names the stream that announces changes
//! ([`OfrepEventStream`], protocol 0.3.0's `eventStreams`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a flag has its value (OpenFeature's resolution reasons, as OFREP sends them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OfrepReason {
    /// The flag is on for everyone: a strategy without constraints or segments that
    /// includes every context (`default`, or a rollout of 100 %), no parent flags.
    Static,
    /// The flag is on for this context by its rules (a rollout, constraints, segments, a
    /// parent).
    TargetingMatch,
    /// A variant was chosen for the context.
    Split,
    /// The flag is off for this context (off in the environment, or no rule matched).
    Disabled,
}

/// An OFREP error code (OpenFeature's error codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OfrepErrorCode {
    /// The request or a flag's payload is not valid JSON.
    ParseError,
    /// The context is not valid (not an object, over the limits, a malformed `currentTime`).
    InvalidContext,
    /// The flag does not exist in the key's scope.
    FlagNotFound,
    /// Anything else: credentials refused, too large a body, too many streams, a store
    /// failure.
    General,
}

/// One flag evaluated for a context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfrepEvaluation {
    /// The flag's name.
    pub key: String,
    /// `false` off, `true` on; a chosen variant's payload when it has one (`json` parsed,
    /// `number` a JSON number, `string` and `csv` a string).
    pub value: Value,
    /// Why it has that value.
    pub reason: OfrepReason,
    /// `disabled` off, `enabled` on without a variant, else the chosen variant's name.
    pub variant: Cow<'static, str>,
    /// Whether the flag is on, and the payload's type.
    pub metadata: OfrepMetadata,
}

/// An evaluation's `metadata` (OFREP leaves its fields to the server).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfrepMetadata {
    /// Whether the flag is on for the context (a variant's payload may be its value).
    pub enabled: bool,
    /// The chosen variant's payload type (`string`, `json`, `csv`, `number`), when it has
    /// a payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_type: Option<String>,
}

/// A flag, or a request, that could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfrepFailure {
    /// The flag's name (absent in a bulk request's failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What went wrong.
    pub error_code: OfrepErrorCode,
    /// What went wrong, for people.
    pub error_details: String,
}

/// One entry of a bulk answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OfrepFlag {
    /// Evaluated.
    Evaluation(OfrepEvaluation),
    /// Not evaluated (a `json` payload that does not parse).
    Failure(OfrepFailure),
}

/// A stream that announces changes of the bulk answer (OFREP 0.3.0's `eventStreams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfrepEventStream {
    /// `sse`: server-sent events, each `data: {"type": "refetchEvaluation"}`.
    #[serde(rename = "type")]
    pub stream_type: String,
    /// The stream's absolute URL, its credential included (browsers' `EventSource` sends no
    /// headers).
    pub url: String,
}

/// The answer of `POST /ofrep/v1/evaluate/flags`: every flag of the key's scope, enabled or
/// not, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfrepBulk {
    /// The flags.
    pub flags: Vec<OfrepFlag>,
    /// Where changes are announced (empty when the server offers no stream).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_streams: Vec<OfrepEventStream>,
}

impl OfrepBulk {
    /// The answer as JSON, byte for byte as its `Serialize` writes it, into `out`. A bulk
    /// answer lists every flag of a scope, and most are `true` or `false` with fixed
    /// reasons and variants: those are written from fixed pieces, only their names escaped
    /// (serde would escape every field name and value of each flag, a third of the
    /// answer's cost); anything else goes through serde.
    pub fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"flags\":[");
        for (i, flag) in self.flags.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match flag {
                OfrepFlag::Evaluation(evaluation) => evaluation.write_json(out)?,
                OfrepFlag::Failure(failure) => serde_json::to_writer(&mut *out, failure)?,
            }
        }
        out.push(b']');
        if !self.event_streams.is_empty() {
            out.extend_from_slice(b",\"eventStreams\":");
            serde_json::to_writer(&mut *out, &self.event_streams)?;
        }
        out.push(b'}');
        Ok(())
    }
}

impl OfrepEvaluation {
    /// As [`OfrepBulk::write_json`] writes it.
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.extend_from_slice(b"{\"key\":");
        write_str(out, &self.key)?;
        out.extend_from_slice(b",\"value\":");
        match &self.value {
            Value::Bool(true) => out.extend_from_slice(b"true"),
            Value::Bool(false) => out.extend_from_slice(b"false"),
            other => serde_json::to_writer(&mut *out, other)?,
        }
        out.extend_from_slice(match self.reason {
            OfrepReason::Static => b",\"reason\":\"STATIC\",\"variant\":".as_slice(),
            OfrepReason::TargetingMatch => b",\"reason\":\"TARGETING_MATCH\",\"variant\":",
            OfrepReason::Split => b",\"reason\":\"SPLIT\",\"variant\":",
            OfrepReason::Disabled => b",\"reason\":\"DISABLED\",\"variant\":",
        });
        match &*self.variant {
            "disabled" => out.extend_from_slice(b"\"disabled\""),
            "enabled" => out.extend_from_slice(b"\"enabled\""),
            other => write_str(out, other)?,
        }
        out.extend_from_slice(if self.metadata.enabled {
            b",\"metadata\":{\"enabled\":true".as_slice()
        } else {
            b",\"metadata\":{\"enabled\":false"
        });
        if let Some(payload_type) = &self.metadata.payload_type {
            out.extend_from_slice(b",\"payloadType\":");
            write_str(out, payload_type)?;
        }
        out.extend_from_slice(b"}}");
        Ok(())
    }
}

/// `text` as a JSON string: as it is between quotes when nothing in it needs escaping (a
/// flag's name never does), else as serde escapes it.
fn write_str(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if text.bytes().all(|b| PLAIN[usize::from(b)]) {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        Ok(())
    } else {
        serde_json::to_writer(&mut *out, text)
    }
}

/// The bytes a JSON string holds as they are: all but control characters, `"` and `\`
/// (UTF-8 sequences included, as serde writes them).
const PLAIN: [bool; 256] = {
    let mut plain = [true; 256];
    let mut b = 0;
    while b < 0x20 {
        plain[b] = false;
        b += 1;
    }
    plain[b'"' as usize] = false;
    plain[b'\\' as usize] = false;
    plain
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn evaluation(key: &str, value: Value, reason: OfrepReason, variant: &str) -> OfrepFlag {
        OfrepFlag::Evaluation(OfrepEvaluation {
            key: key.to_owned(),
            value,
            reason,
            variant: Cow::Owned(variant.to_owned()),
            metadata: OfrepMetadata {
                enabled: reason != OfrepReason::Disabled,
                payload_type: None,
            },
        })
    }

    #[test]
    fn the_bulk_answer_is_written_as_serde_writes_it() {
        let mut with_payload = evaluation("p", json!({"a": [1, "x"]}), OfrepReason::Split, "v\"1");
        if let OfrepFlag::Evaluation(e) = &mut with_payload {
            e.metadata.payload_type = Some("json".to_owned());
        }
        let mut bulk = OfrepBulk {
            flags: vec![
                evaluation("off", json!(false), OfrepReason::Disabled, "disabled"),
                evaluation("on", json!(true), OfrepReason::Static, "enabled"),
                evaluation(
                    "rule\u{7f}\n\u{e9}",
                    json!(true),
                    OfrepReason::TargetingMatch,
                    "enabled",
                ),
                evaluation(
                    "caf\u{e9}\u{7f}",
                    json!(false),
                    OfrepReason::Disabled,
                    "disabled",
                ),
                evaluation("s", json!("blue"), OfrepReason::Split, "blue"),
                evaluation("n", json!(4.5), OfrepReason::Split, "half"),
                with_payload,
                OfrepFlag::Failure(OfrepFailure {
                    key: Some("bad".to_owned()),
                    error_code: OfrepErrorCode::ParseError,
                    error_details: "does not \"parse\"".to_owned(),
                }),
            ],
            event_streams: Vec::new(),
        };
        for streams in [false, true] {
            if streams {
                bulk.event_streams.push(OfrepEventStream {
                    stream_type: "sse".to_owned(),
                    url: "http://h/ofrep/v1/events?token=a.b".to_owned(),
                });
            }
            let mut written = Vec::new();
            bulk.write_json(&mut written).unwrap();
            let serialized = serde_json::to_vec(&bulk).unwrap();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                String::from_utf8(serialized).unwrap()
            );
        }
        let mut empty = Vec::new();
        OfrepBulk {
            flags: Vec::new(),
            event_streams: Vec::new(),
        }
        .write_json(&mut empty)
        .unwrap();
        assert_eq!(empty, b"{\"flags\":[]}");
    }
}
