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
