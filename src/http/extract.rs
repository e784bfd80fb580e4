//! Extractors that turn every rejection into this crate's error body: the caller from the
//! `Authorization` header, JSON bodies, path and query parameters.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, FailedToBufferBody};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, Uri, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::HttpError;
use super::strict::Strict;
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail};
use crate::{Result, ToggleAdmin};

/// The caller of an admin route, authenticated by the API key in the `Authorization` header
/// (the key as is, or after `Bearer `). A client key → 403, as in Unleash.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated(pub Caller);

impl FromRequestParts<ToggleAdmin> for Authenticated {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        admin: &ToggleAdmin,
    ) -> std::result::Result<Self, HttpError> {
        let AnyKey(caller) = AnyKey::from_request_parts(parts, admin).await?;
        if caller.key().access.is_client() {
            return Err(crate::admin::wrong_key_type().into());
        }
        Ok(Authenticated(caller))
    }
}

/// The caller of a client route (`/api/client/*`): any valid key, client keys included,
/// frontend keys excepted (403, as in Unleash).
#[derive(Debug, Clone)]
pub(crate) struct AnyKey(pub Caller);

impl FromRequestParts<ToggleAdmin> for AnyKey {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        admin: &ToggleAdmin,
    ) -> std::result::Result<Self, HttpError> {
        let caller = authenticate(parts, admin).await?;
        if caller.key().access.is_frontend() {
            return Err(crate::admin::wrong_key_type().into());
        }
        Ok(AnyKey(caller))
    }
}

/// The API key in the `Authorization` header, not yet authenticated: for a route whose
/// operation authenticates it itself (a variant change, which may authenticate on what the
/// store knows in process, see [`ToggleAdmin::permit_variants_change`]).
#[derive(Debug, Clone)]
pub(crate) struct KeySecret(pub Option<String>);

impl<S: Send + Sync> FromRequestParts<S> for KeySecret {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        _state: &S,
    ) -> std::result::Result<Self, HttpError> {
        Ok(KeySecret(secret_of(parts)?.map(str::to_owned)))
    }
}

/// The SDK key (client or frontend) named by the `Authorization` header, admitted with
/// one read of its record ([`ToggleAdmin::permit_sdk`]).
pub(crate) async fn permit_sdk(
    parts: &Parts,
    admin: &ToggleAdmin,
) -> std::result::Result<crate::admin::Permit, HttpError> {
    Ok(admin.permit_sdk(secret_of(parts)?).await?)
}

/// The caller named by the `Authorization` header, whatever its key's type.
pub(crate) async fn authenticate(
    parts: &Parts,
    admin: &ToggleAdmin,
) -> std::result::Result<Caller, HttpError> {
    Ok(admin.authenticate(secret_of(parts)?).await?)
}

/// The key in the `Authorization` header: as it is, or after `Bearer `.
fn secret_of(parts: &Parts) -> std::result::Result<Option<&str>, HttpError> {
    let secret = match parts.headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => Some(value.to_str().map_err(|_| Error::AuthenticationRequired {
            message: "The Authorization header is not a valid API key.".to_owned(),
        })?),
    };
    let secret = secret.map(|s| {
        let s = s.trim();
        match s.get(..7) {
            Some(prefix) if prefix.eq_ignore_ascii_case("bearer ") => s[7..].trim_start(),
            _ => s,
        }
    });
    Ok(secret)
}

/// Which content types a body may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accept {
    /// `application/json` only.
    Json,
    /// `application/json` or `application/json-patch+json`.
    JsonOrPatch,
}

/// A JSON object body decoded into `T`. Content type, size, syntax and shape are checked;
/// every failure is an [`Error`] whose details name the position or the JSON pointer. The body
/// must be an object: serde would otherwise accept an array for a struct, by position.
#[derive(Debug, Clone)]
pub(crate) struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> std::result::Result<Self, HttpError> {
        let bytes = read_body(req, state, Accept::Json).await?;
        let value: Value = decode_json(&bytes)?;
        if !value.is_object() {
            return Err(Error::invalid_at(
                "",
                format!(
                    "the request body must be a JSON object, not {}",
                    crate::error::json_kind(&value)
                ),
            )
            .into());
        }
        Ok(JsonBody(decode_value(value)?))
    }
}

/// Any JSON body (an array, for the variants PUT).
#[derive(Debug, Clone)]
pub(crate) struct JsonValue(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonValue {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> std::result::Result<Self, HttpError> {
        let bytes = read_body(req, state, Accept::Json).await?;
        Ok(JsonValue(decode_json(&bytes)?))
    }
}

/// Decode an already parsed body into `T`; a value of the wrong shape is named by its JSON
/// pointer.
pub(crate) fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    serde_path_to_error::deserialize(Strict(&value)).map_err(|error| {
        let pointer = pointer_of(error.path());
        shape_error(pointer, error.into_inner())
    })
}

fn shape_error(pointer: String, inner: serde_json::Error) -> Error {
    let at = if pointer.is_empty() {
        "the top level".to_owned()
    } else {
        pointer.clone()
    };
    Error::Validation {
        message: format!("The request body does not have the expected shape: at {at}: {inner}"),
        details: vec![ErrorDetail::at(pointer, inner.to_string())],
        source: Some(Box::new(inner)),
    }
}

/// Check the content type, then read the body within the router's limit.
async fn read_body<S: Send + Sync>(
    req: Request,
    state: &S,
    accept: Accept,
) -> Result<Bytes, HttpError> {
    check_content_type(req.headers(), accept)?;
    Bytes::from_request(req, state)
        .await
        .map_err(|rejection| match rejection {
            BytesRejection::FailedToBufferBody(FailedToBufferBody::LengthLimitError(e)) => {
                HttpError::PayloadTooLarge {
                    message: format!("The request body is too large: {e}."),
                }
            }
            other => Error::validation(
                "The request body could not be read.",
                vec![ErrorDetail::general(other.body_text())],
            )
            .into(),
        })
}

fn check_content_type(headers: &HeaderMap, accept: Accept) -> Result<(), HttpError> {
    let provided = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let essence = provided
        .as_deref()
        .and_then(|ct| ct.split(';').next())
        .map(|e| e.trim().to_ascii_lowercase());
    let accepted = matches!(
        (essence.as_deref(), accept),
        (Some("application/json"), _) | (Some("application/json-patch+json"), Accept::JsonOrPatch)
    );
    if accepted {
        return Ok(());
    }
    let what = provided.unwrap_or_else(|| "you didn't provide one".to_owned());
    let types = match accept {
        Accept::Json => "application/json",
        Accept::JsonOrPatch => "application/json, application/json-patch+json",
    };
    Err(HttpError::ContentType {
        message: format!(
            "We do not accept the content-type you provided ({what}). Try using one of the content-types we do accept instead ({types}) and make sure the body is in the corresponding format."
        ),
    })
}

/// Decode `bytes` as one JSON document: a syntax error names its line and column. An object
/// with the same key twice is refused with the JSON pointer of the key (serde_json would
/// silently keep the last one, so `{"weight": 1, "weight": 900}` would mean 900 here and
/// 1 to another parser).
pub(crate) fn decode_json(bytes: &[u8]) -> Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize::<_, UniqueKeys>(&mut deserializer) {
        Ok(UniqueKeys(value)) => {
            deserializer.end().map_err(syntax_error)?;
            Ok(value)
        }
        Err(error) => {
            let pointer = pointer_of(error.path());
            let inner = error.into_inner();
            if inner.is_data() {
                Err(shape_error(pointer, inner))
            } else {
                Err(syntax_error(inner))
            }
        }
    }
}

/// A JSON value whose objects have no key twice (the error names the duplicate key).
struct UniqueKeys(Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        deserializer
            .deserialize_any(UniqueKeysVisitor)
            .map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        // serde_json never hands over a non-finite number; `Null` would be its own choice too.
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        serde::Deserialize::deserialize(d).map(|UniqueKeys(v)| v)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate key `{key}` in an object"
                )));
            }
            let UniqueKeys(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

fn syntax_error(error: serde_json::Error) -> Error {
    let message = format!("The request body is not valid JSON: {error}.");
    Error::Validation {
        details: vec![ErrorDetail::at("", message.clone())],
        message,
        source: Some(Box::new(error)),
    }
}

/// A serde path as a JSON pointer (RFC 6901): `roles[0].id` → `/roles/0/id`.
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    pointer
}

/// Path parameters; a parameter that is not valid UTF-8 (after percent-decoding) or of the
/// wrong type is a 400, and so is one that cannot be a name: one with a control character
/// (NUL, newline, …) or longer than 255 characters (512 for `{token}`, which may be a
/// secret). Such a parameter names nothing that can exist, so the answer is a 400 naming the
/// parameter rather than a 404.
#[derive(Debug, Clone)]
pub(crate) struct Params<T>(pub T);

/// The longest path parameter, in characters: names are at most 255 (Unleash's columns); a
/// key's secret (`{token}`) at most 512.
fn path_parameter_limit(name: &str) -> usize {
    if name == "token" { 512 } else { 255 }
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> std::result::Result<Self, HttpError> {
        if let Ok(Path(raw)) = Path::<Vec<(String, String)>>::from_request_parts(parts, state).await
        {
            let mut problems = Vec::new();
            for (name, value) in &raw {
                let limit = path_parameter_limit(name);
                let length = value.chars().count();
                if length > limit {
                    problems.push(ErrorDetail::at(
                        format!("{{{name}}}"),
                        format!("the path parameter {name} is {length} characters long, more than {limit}"),
                    ));
                } else if let Some(c) = value.chars().find(|c| c.is_control()) {
                    problems.push(ErrorDetail::at(
                        format!("{{{name}}}"),
                        format!(
                            "the path parameter {name} must not contain control characters, but has U+{:04X}",
                            u32::from(c)
                        ),
                    ));
                }
            }
            if !problems.is_empty() {
                return Err(Error::validation("A path parameter is not valid.", problems).into());
            }
        }
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(Params(value)),
            Err(rejection) => Err(Error::validation(
                "A path parameter is not valid.",
                vec![ErrorDetail::general(rejection.body_text())],
            )
            .into()),
        }
    }
}

/// Query parameters; one of the wrong type is a 400.
#[derive(Debug, Clone)]
pub(crate) struct QueryParams<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> std::result::Result<Self, HttpError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(QueryParams(value)),
            Err(rejection) => Err(Error::validation(
                "A query parameter is not valid.",
                vec![ErrorDetail::general(rejection.body_text())],
            )
            .into()),
        }
    }
}

/// A request body not read yet: handlers check the caller's permission first, then read it,
/// so that a caller without the permission gets 403 whatever the body (the order of the
/// checks is authentication → permission → body shape).
#[derive(Debug)]
pub(crate) struct LaterBody(Request);

impl<S: Send + Sync> FromRequest<S> for LaterBody {
    type Rejection = HttpError;

    async fn from_request(req: Request, _state: &S) -> std::result::Result<Self, HttpError> {
        Ok(LaterBody(req))
    }
}

impl LaterBody {
    /// The body of the variants PATCH as raw JSON (`application/json` or
    /// `application/json-patch+json`), for [`decode_patch`](crate::variants::decode_patch)
    /// to check strictly.
    pub(crate) async fn patch(self) -> Result<Value, HttpError> {
        Ok(decode_json(
            &read_body(self.0, &(), Accept::JsonOrPatch).await?,
        )?)
    }

    /// Any JSON body: see [`JsonValue`].
    pub(crate) async fn value(self) -> Result<Value, HttpError> {
        Ok(decode_json(&read_body(self.0, &(), Accept::Json).await?)?)
    }

    /// A JSON object decoded into `T`: see [`JsonBody`].
    pub(crate) async fn object<T: DeserializeOwned>(self) -> Result<T, HttpError> {
        let value = self.value().await?;
        if !value.is_object() {
            return Err(Error::invalid_at(
                "",
                format!(
                    "the request body must be a JSON object, not {}",
                    crate::error::json_kind(&value)
                ),
            )
            .into());
        }
        Ok(decode_value(value)?)
    }
}

/// The origin (`scheme://host[:port]`) a request was sent to, as a proxy in front of the
/// server tells it: the scheme of `X-Forwarded-Proto` (else `http`, or the request URI's
/// `https`), the host of `X-Forwarded-Host`, else `Host`, else the request URI's authority.
/// `None` without a host, or with one that is not a plain host (a `/`, `?`, `#`, `@` or space
/// in it), so that a forged header cannot make it point elsewhere than a host.
pub(crate) fn request_origin(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let host = header("x-forwarded-host")
        .or_else(|| header("host"))
        .or_else(|| uri.authority().map(|a| a.as_str()))?;
    if host.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    let scheme = match header("x-forwarded-proto") {
        Some("https") => "https",
        _ => uri.scheme_str().filter(|s| *s == "https").unwrap_or("http"),
    };
    Some(format!("{scheme}://{host}"))
}
