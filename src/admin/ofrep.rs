//! OpenFeature's Remote Evaluation Protocol (OFREP): another door onto the frontend API's
//! evaluation (feature `frontend`), for OpenFeature's OFREP providers.
//!
//! * **Who.** A frontend or a client key, evaluated within its environment and projects;
//!   an admin key or a key acting as a user → [`Error::NoAccess`], as on the frontend API.
//! * **What.** The flags are evaluated exactly as `POST /api/frontend/all` evaluates them
//!   for the same context: the same engine, built once per change of the key's scope (see
//!   `frontend.rs`). [`ofrep_context`] maps an OpenFeature context as Unleash's OpenFeature
//!   providers do (`targetingKey` is the `userId`).
//! * **The answer of a flag** ([`OfrepEvaluation`]): off → `false`, `DISABLED`, variant
//!   `disabled`; on without a variant → `true`, `STATIC` when every context gets it
//!   ([`unconditional`]) else `TARGETING_MATCH`, variant `enabled`; on with a variant →
//!   `SPLIT`, the variant's name, and its payload as the value (`json` parsed, `number` a
//!   JSON number, integers as integers; `string` and `csv` as they are) or `true` when it
//!   has none. A `json` or `number` payload that does not parse is the flag's `PARSE_ERROR`.
//! * **Caching** ([`ToggleAdmin::ofrep_evaluate_flags`]): the bulk answer's `ETag` is a
//!   digest of the scope's client document's ETag (which changes exactly when a flag of the
//!   scope does), of the whole context and of the stream credential's validity window; an
//!   `If-None-Match` that names it is [`OfrepAnswer::NotModified`] without evaluating. A
//!   context without `currentTime` is evaluated at the time of the request: a date
//!   constraint that starts to hold between two requests does not change the ETag.
//! * **Push.** The bulk answer names a stream of server-sent events on which every change
//!   of the key's scope sends `{"type": "refetchEvaluation"}` (unnamed events, with `id:`;
//!   the web provider ignores named ones), and one at the connection, so that nothing
//!   changed between the evaluation and the connection is missed. It is a stream of the SDK
//!   streaming machinery (`streaming.rs`): the same scope histories, pump, keep-alives,
//!   limits, revocation and, over PostgreSQL, the same notifications between instances.
//!   Browsers' `EventSource` sends no headers, so its URL carries a credential of its own
//!   ([`ToggleAdmin::ofrep_stream_token`]), never the key: an HMAC-SHA-256, under a secret
//!   drawn once per process, of the key's hash and an expiry; it opens that key's stream
//!   and nothing else, and only until it expires (a stream already open runs on). With
//!   several instances behind one address, a URL works on the instance that wrote it.
//! * **Usage metrics.** Each flag evaluated counts once (yes or no, and its variant) for
//!   the application (the context's `appName`, else the caller's) in the key's environment,
//!   buffered as SDK reports are (`client_metrics.rs`); a bulk answer counts every flag it
//!   lists, by the flag's place in the scope's document under one lock
//!   (`evaluation_counts.rs`), so that counting costs a bulk answer little next to
//!   evaluating.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::Utc;
use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};
use unleash_types::client_features::{ClientFeature, Context};
use unleash_yggdrasil::ExtendedVariantDef;

use super::frontend::Evaluator;
use super::records::{api_key_key, decode};
use super::streaming::StreamFormat;
use super::{Authority, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::ApiKeyInfo;
use crate::model::{
    ClientFeaturesQuery, OfrepBulk, OfrepErrorCode, OfrepEvaluation, OfrepFailure, OfrepFlag,
    OfrepMetadata, OfrepReason,
};

pub use super::streaming::ClientStream as OfrepStream;

/// How long a stream credential's validity window lasts: a credential written in one window
/// is valid until the end of the next, so for one to two hours.
pub const STREAM_TOKEN_WINDOW_SECS: i64 = 3600;

/// The application OFREP evaluations are counted for when neither the context's `appName`
/// nor the caller names one.
pub const DEFAULT_OFREP_APPLICATION: &str = "ofrep";

/// The secret stream credentials are signed with: drawn once per process.
static STREAM_SECRET: LazyLock<Option<[u8; 32]>> = LazyLock::new(|| {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).ok().map(|()| secret)
});

/// The answer of a bulk evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum OfrepAnswer {
    /// Neither the flags of the scope nor the context changed since the `If-None-Match`.
    NotModified {
        /// The ETag, quoted.
        etag: String,
    },
    /// Every flag of the scope.
    Flags {
        /// The ETag, quoted.
        etag: String,
        /// The flags (`event_streams` empty: the HTTP layer names the stream, whose URL it
        /// knows, with `stream_token`).
        flags: OfrepBulk,
        /// The stream's credential ([`ToggleAdmin::ofrep_stream_token`]).
        stream_token: String,
    },
}

impl ToggleAdmin {
    /// One flag (`POST /ofrep/v1/evaluate/flags/{key}`) for `context`, counted in the usage
    /// metrics of `application` (the context's `appName` wins). The flag's answer may be an
    /// [`OfrepFailure`] (`PARSE_ERROR`: its payload does not parse).
    ///
    /// A flag the key's scope does not hold → [`Error::NotFound`]; a context over the
    /// frontend API's limits → [`Error::Validation`]; an admin or user key →
    /// [`Error::NoAccess`]; a revoked or expired key → [`Error::AuthenticationRequired`].
    pub async fn ofrep_evaluate_flag<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        key: &str,
        context: &Context,
        application: Option<&str>,
    ) -> Result<OfrepFlag> {
        let (_, evaluator) = self.ofrep_evaluator(authority.into(), context).await?;
        let (place, feature) = evaluator
            .features()
            .iter()
            .enumerate()
            .find(|(_, f)| f.name == key)
            .ok_or_else(|| {
                Error::not_found(format!(
                    "The flag {} does not exist for this key.",
                    Value::from(key.chars().take(256).collect::<String>())
                ))
            })?;
        let (enabled, variant) = evaluator.evaluate(feature);
        self.count(
            &evaluator,
            context,
            application,
            std::iter::once((place, enabled, counted_variant(variant.as_ref()))),
        )
        .await;
        Ok(flag(feature, enabled, variant))
    }

    /// Every flag of the key's scope (`POST /ofrep/v1/evaluate/flags`) for `context`, or
    /// [`OfrepAnswer::NotModified`] when `if_none_match` names the answer's ETag (which covers
    /// the flags in the key's scope and the whole context); counted in the usage metrics as
    /// [`ofrep_evaluate_flag`](Self::ofrep_evaluate_flag) counts one flag. Errors as there.
    pub async fn ofrep_evaluate_flags<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        context: &Context,
        application: Option<&str>,
        if_none_match: Option<&str>,
    ) -> Result<OfrepAnswer> {
        let (caller, evaluator) = self.ofrep_evaluator(authority.into(), context).await?;
        let window = Utc::now().timestamp().div_euclid(STREAM_TOKEN_WINDOW_SECS);
        let etag = answer_etag(evaluator.document_etag(), context, window);
        if if_none_match.is_some_and(|header| etag_matches(header, &etag)) {
            return Ok(OfrepAnswer::NotModified { etag });
        }
        let evaluations: Vec<(bool, Option<ExtendedVariantDef>)> = evaluator
            .features()
            .iter()
            .map(|feature| evaluator.evaluate(feature))
            .collect();
        self.count(
            &evaluator,
            context,
            application,
            evaluations
                .iter()
                .enumerate()
                .map(|(place, (enabled, variant))| {
                    (place, *enabled, counted_variant(variant.as_ref()))
                }),
        )
        .await;
        let flags = evaluator
            .features()
            .iter()
            .zip(evaluations)
            .map(|(feature, (enabled, variant))| flag(feature, enabled, variant))
            .collect();
        Ok(OfrepAnswer::Flags {
            etag,
            flags: OfrepBulk {
                flags,
                event_streams: Vec::new(),
            },
            stream_token: stream_token(&caller.secret_hash, window)?,
        })
    }

    /// A credential for `caller`'s OFREP stream ([`ofrep_stream`](Self::ofrep_stream)),
    /// valid until the end of the next [`STREAM_TOKEN_WINDOW_SECS`] window. It names the
    /// key by its hash (never its secret) and opens nothing but that key's stream.
    pub fn ofrep_stream_token(&self, caller: &Caller) -> Result<String> {
        let window = Utc::now().timestamp().div_euclid(STREAM_TOKEN_WINDOW_SECS);
        stream_token(&caller.secret_hash, window)
    }

    /// The OFREP stream a credential of [`ofrep_stream_token`](Self::ofrep_stream_token)
    /// opens: `{"type": "refetchEvaluation"}` at once and at each change of the key's
    /// scope, keep-alive comments between.
    ///
    /// A malformed, forged or expired credential, or one whose key was revoked or has
    /// expired → [`Error::AuthenticationRequired`]; over the stream limits →
    /// [`Error::TooManyRequests`].
    pub async fn ofrep_stream(&self, token: &str) -> Result<OfrepStream> {
        let refused = || Error::AuthenticationRequired {
            message: "The stream's credential is not valid or has expired; evaluate the flags \
                      again for a new one."
                .to_owned(),
        };
        let hash = verify_stream_token(token, Utc::now().timestamp()).ok_or_else(refused)?;
        let key = api_key_key(hash);
        let record = self.store.get(&key).await?.ok_or_else(refused)?;
        let info: ApiKeyInfo = decode(&key, &record.value)?;
        let caller = Caller {
            secret_hash: hash.to_owned(),
            info,
            revision: record.revision,
        };
        if !caller.info.access.is_client() {
            return Err(super::wrong_key_type());
        }
        self.open_stream(
            &caller,
            &ClientFeaturesQuery::default(),
            None,
            StreamFormat::Refetch,
        )
        .await
    }

    /// The evaluator of a frontend or client key's scope (the key of an SDK permit as it
    /// was read, any other read afresh), with its caller.
    async fn ofrep_evaluator(
        &self,
        authority: Authority<'_>,
        context: &Context,
    ) -> Result<(Caller, Evaluator)> {
        let (caller, scope) = self.sdk_scope(authority).await?;
        if !caller.info.access.is_client() {
            return Err(super::wrong_key_type());
        }
        Ok((caller, self.frontend_evaluator(scope, context).await?))
    }

    /// Count `evaluations` — `(place of the flag in the scope's document, enabled, variant)`
    /// — in the usage metrics.
    async fn count<'v>(
        &self,
        evaluator: &Evaluator,
        context: &Context,
        application: Option<&str>,
        evaluations: impl Iterator<Item = (usize, bool, Option<&'v str>)>,
    ) {
        let application = [context.app_name.as_deref(), application]
            .into_iter()
            .flatten()
            .find(|name| crate::names::display_name_problem(name, crate::names::MAX_NAME).is_none())
            .unwrap_or(DEFAULT_OFREP_APPLICATION);
        let environment = evaluator.environment().unwrap_or_default();
        self.count_evaluations(
            evaluator.shared_document(),
            environment,
            application,
            evaluations,
        )
        .await;
    }
}

/// The variant an evaluation counts: the chosen one, when there is one.
fn counted_variant(variant: Option<&ExtendedVariantDef>) -> Option<&str> {
    variant.filter(|v| v.enabled).map(|v| v.name.as_str())
}

/// An OpenFeature evaluation context as Unleash's OpenFeature providers map it:
/// `targetingKey` is the `userId` (and wins over a `userId`); `userId`, `sessionId`,
/// `remoteAddress`, `environment`, `appName` and `currentTime` are those fields; every other
/// string, number or boolean is a property, as text (`42`, `4.5`, `true`); so are those of a
/// nested `properties` object. `null`, arrays and other objects are left out. A standard
/// field whose value is an array or an object → [`Error::Validation`] naming it.
pub fn ofrep_context(context: &Map<String, Value>) -> Result<Context> {
    let mut mapped = Context::default();
    let mut properties = HashMap::new();
    let mut problems = Vec::new();
    let mut targeting_key = None;
    for (name, value) in context {
        let slot = match name.as_str() {
            "targetingKey" => &mut targeting_key,
            "userId" => &mut mapped.user_id,
            "sessionId" => &mut mapped.session_id,
            "remoteAddress" => &mut mapped.remote_address,
            "environment" => &mut mapped.environment,
            "appName" => &mut mapped.app_name,
            "currentTime" => &mut mapped.current_time,
            "properties" if value.is_object() => {
                for (property, value) in value.as_object().into_iter().flatten() {
                    if let Some(text) = scalar_text(value) {
                        properties.insert(property.clone(), text);
                    }
                }
                continue;
            }
            _ => {
                if let Some(text) = scalar_text(value) {
                    properties.insert(name.clone(), text);
                }
                continue;
            }
        };
        match value {
            Value::Array(_) | Value::Object(_) => problems.push(ErrorDetail::at(
                name.clone(),
                format!("{name} must be a string, a number or a boolean"),
            )),
            other => *slot = scalar_text(other),
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation("The context is not valid.", problems));
    }
    if targeting_key.is_some() {
        mapped.user_id = targeting_key;
    }
    mapped.properties = (!properties.is_empty()).then_some(properties);
    Ok(mapped)
}

/// A string, number or boolean as text; `None` for anything else.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The OFREP answer of `feature`, `enabled` or not for the context, with the variant it
/// gets when it is.
fn flag(feature: &ClientFeature, enabled: bool, variant: Option<ExtendedVariantDef>) -> OfrepFlag {
    let mut metadata = OfrepMetadata {
        enabled,
        payload_type: None,
    };
    let (value, reason, variant) = match variant {
        _ if !enabled => (
            Value::Bool(false),
            OfrepReason::Disabled,
            Cow::Borrowed("disabled"),
        ),
        Some(variant) if variant.enabled => {
            let value = match variant.payload {
                None => Value::Bool(true),
                Some(payload) => match payload_value(&payload.payload_type, payload.value) {
                    Ok(value) => {
                        metadata.payload_type = Some(payload.payload_type);
                        value
                    }
                    Err(details) => {
                        return OfrepFlag::Failure(OfrepFailure {
                            key: Some(feature.name.clone()),
                            error_code: OfrepErrorCode::ParseError,
                            error_details: details,
                        });
                    }
                },
            };
            (value, OfrepReason::Split, Cow::Owned(variant.name))
        }
        _ => {
            let reason = if unconditional(feature) {
                OfrepReason::Static
            } else {
                OfrepReason::TargetingMatch
            };
            (Value::Bool(true), reason, Cow::Borrowed("enabled"))
        }
    };
    OfrepFlag::Evaluation(OfrepEvaluation {
        key: feature.name.clone(),
        value,
        reason,
        variant,
        metadata,
    })
}

/// A payload's value by its type: `json` parsed, `number` a JSON number (an integer when it
/// is one), anything else (`string`, `csv`) as it is.
fn payload_value(payload_type: &str, text: String) -> std::result::Result<Value, String> {
    match payload_type {
        "json" => serde_json::from_str(&text)
            .map_err(|e| format!("the variant's json payload does not parse: {e}")),
        "number" => {
            let trimmed = text.trim();
            if let Ok(integer) = trimmed.parse::<i64>() {
                return Ok(Value::Number(integer.into()));
            }
            trimmed
                .parse::<f64>()
                .ok()
                .and_then(Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| {
                    format!(
                        "the variant's number payload is not a number: {}",
                        Value::from(text.chars().take(64).collect::<String>())
                    )
                })
        }
        _ => Ok(Value::String(text)),
    }
}

/// Whether `feature`, enabled, is on for every context: no parent flags, and no strategies
/// (an enabled flag without strategies is on, as in Unleash) or one without constraints or
/// segments that includes everyone (`default`, or `flexibleRollout` at 100 %).
pub(crate) fn unconditional(feature: &ClientFeature) -> bool {
    if feature.dependencies.as_ref().is_some_and(|d| !d.is_empty()) {
        return false;
    }
    let Some(strategies) = feature.strategies.as_ref().filter(|s| !s.is_empty()) else {
        return true;
    };
    strategies.iter().any(|strategy| {
        let plain = strategy.constraints.as_ref().is_none_or(Vec::is_empty)
            && strategy.segments.as_ref().is_none_or(Vec::is_empty);
        // The parameters looked up only for a plain strategy: a bulk answer asks this of
        // every flag that is on.
        plain
            && match strategy.name.as_str() {
                "default" => true,
                "flexibleRollout" => strategy
                    .parameters
                    .as_ref()
                    .and_then(|p| p.get("rollout"))
                    .is_some_and(|r| r.trim() == "100"),
                _ => false,
            }
    })
}

/// The bulk answer's ETag: the scope's document, the whole context (fields and properties,
/// in a fixed order, each length-prefixed) and the credential's window.
fn answer_etag(document_etag: &str, context: &Context, window: i64) -> String {
    let mut digest = Sha256::new();
    let mut part = |text: Option<&str>| match text {
        None => digest.update([0u8]),
        Some(text) => {
            digest.update([1u8]);
            digest.update((text.len() as u64).to_le_bytes());
            digest.update(text.as_bytes());
        }
    };
    part(Some(document_etag));
    part(Some(&window.to_string()));
    for field in [
        &context.user_id,
        &context.session_id,
        &context.environment,
        &context.app_name,
        &context.current_time,
        &context.remote_address,
    ] {
        part(field.as_deref());
    }
    let mut properties: Vec<(&String, &String)> = context.properties.iter().flatten().collect();
    properties.sort();
    part(Some(&properties.len().to_string()));
    for (name, value) in properties {
        part(Some(name));
        part(Some(value));
    }
    let hex = hex(&digest.finalize()[..12]);
    format!("\"{hex}\"")
}

/// Whether an `If-None-Match` header names `etag` (a list, weak tags and `*` included).
fn etag_matches(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == etag
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// HMAC-SHA-256 (RFC 2104) of `message` under `key`.
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let mut inner_pad = [0x36u8; 64];
    let mut outer_pad = [0x5cu8; 64];
    for (i, byte) in key.iter().enumerate() {
        inner_pad[i] ^= byte;
        outer_pad[i] ^= byte;
    }
    let inner = Sha256::new()
        .chain_update(inner_pad)
        .chain_update(message)
        .finalize();
    let outer = Sha256::new()
        .chain_update(outer_pad)
        .chain_update(inner)
        .finalize();
    let mut out = [0u8; 32];
    out.copy_from_slice(&outer);
    out
}

/// `<expiry>.<key hash>.<mac>`: the key's hash and the end of the window after `window`,
/// signed.
fn stream_token(secret_hash: &str, window: i64) -> Result<String> {
    let secret = STREAM_SECRET.as_ref().ok_or_else(|| {
        Error::internal(
            "the operating system's random source failed: no stream secret",
            None,
        )
    })?;
    let expiry = (window + 2) * STREAM_TOKEN_WINDOW_SECS;
    let signed = format!("{expiry}.{secret_hash}");
    let mac = hex(&hmac(secret, signed.as_bytes()));
    Ok(format!("{signed}.{mac}"))
}

/// The key hash a stream credential names, if it is genuine and not expired at `now`.
fn verify_stream_token(token: &str, now: i64) -> Option<&str> {
    let secret = STREAM_SECRET.as_ref()?;
    let (signed, mac) = token.rsplit_once('.')?;
    let (expiry, hash) = signed.split_once('.')?;
    let expected = hex(&hmac(secret, signed.as_bytes()));
    // In constant time: a forger learns nothing from how long a refusal takes.
    let differs = expected
        .bytes()
        .zip(mac.bytes())
        .fold(expected.len() ^ mac.len(), |acc, (a, b)| {
            acc | usize::from(a ^ b)
        });
    if differs != 0 || expiry.parse::<i64>().ok()? <= now {
        return None;
    }
    Some(hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn targeting_key_wins_and_other_values_become_properties() {
        let context = json!({"targetingKey": "t", "userId": "u", "sessionId": "s",
            "plan": "pro", "seats": 42, "ratio": 4.5, "beta": true, "skip": null,
            "list": [1], "properties": {"region": "eu"}});
        let mapped = ofrep_context(context.as_object().unwrap()).unwrap();
        assert_eq!(mapped.user_id.as_deref(), Some("t"));
        assert_eq!(mapped.session_id.as_deref(), Some("s"));
        let properties = mapped.properties.unwrap();
        assert_eq!(properties["plan"], "pro");
        assert_eq!(properties["seats"], "42");
        assert_eq!(properties["ratio"], "4.5");
        assert_eq!(properties["beta"], "true");
        assert_eq!(properties["region"], "eu");
        assert!(!properties.contains_key("skip") && !properties.contains_key("list"));
        let bad = json!({"userId": {"a": 1}});
        assert!(ofrep_context(bad.as_object().unwrap()).is_err());
    }

    #[test]
    fn payloads_by_type() {
        assert_eq!(payload_value("number", "42".into()), Ok(json!(42)));
        assert_eq!(payload_value("number", "4.25".into()), Ok(json!(4.25)));
        assert!(payload_value("number", "many".into()).is_err());
        assert_eq!(
            payload_value("json", "{\"a\":1}".into()),
            Ok(json!({"a": 1}))
        );
        assert!(payload_value("json", "{".into()).is_err());
        assert_eq!(payload_value("csv", "a,b".into()), Ok(json!("a,b")));
    }

    #[test]
    fn stream_tokens_verify_only_as_signed_and_before_expiry() {
        let token = stream_token("abc", 10).unwrap();
        let expiry = 12 * STREAM_TOKEN_WINDOW_SECS;
        assert_eq!(verify_stream_token(&token, expiry - 1), Some("abc"));
        assert_eq!(verify_stream_token(&token, expiry), None);
        let forged = token.replacen("abc", "abd", 1);
        assert_eq!(verify_stream_token(&forged, 0), None);
        assert_eq!(verify_stream_token("nonsense", 0), None);
    }

    #[test]
    fn etags_cover_the_context() {
        let mut context = Context::default();
        let a = answer_etag("\"d\"", &context, 1);
        context.properties = Some(HashMap::from([("p".to_owned(), "1".to_owned())]));
        let b = answer_etag("\"d\"", &context, 1);
        assert_ne!(a, b);
        assert_ne!(b, answer_etag("\"e\"", &context, 1));
        assert!(etag_matches(&format!("W/{b}, \"x\""), &b));
    }
}
