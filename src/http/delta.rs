//! `GET /api/client/delta`: Unleash's delta protocol for polling SDKs (see
//! [`ToggleAdmin::client_delta`]). The first call (no `If-None-Match`) answers one
//! `hydration` event; a later call with `If-None-Match: "<eventId>"` the events since, or
//! 304 when there are none; every answer carries `ETag: "<last eventId>"`. A malformed
//! `If-None-Match` is treated as none (a hydration), never an error.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::error::HttpResult;
use super::extract::{AnyKey, QueryParams};
use crate::ToggleAdmin;
use crate::admin::DeltaAnswer;
use crate::error::Error;
use crate::model::ClientFeaturesQuery;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(delta))
}

/// `?project=` (repeatable), `?namePrefix=`, `?tag=type:value` (repeatable), as for
/// `/api/client/features`.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Documents the parameters; they are read as pairs.
pub(super) struct DeltaParams {
    project: Option<Vec<String>>,
    name_prefix: Option<String>,
    tag: Option<Vec<String>>,
}

/// The filters of a client request from its query pairs (segments by reference).
pub(super) fn client_query(pairs: Vec<(String, String)>) -> Result<ClientFeaturesQuery, Error> {
    let mut query = ClientFeaturesQuery {
        segments: true,
        ..ClientFeaturesQuery::default()
    };
    for (name, value) in pairs {
        match name.as_str() {
            "project" => query.projects.push(value),
            "namePrefix" => query.name_prefix = Some(value),
            "tag" => match value.split_once(':') {
                Some((tag_type, tag_value)) => {
                    query.tags.push((tag_type.to_owned(), tag_value.to_owned()))
                }
                None => {
                    return Err(Error::invalid_at(
                        "/tag",
                        format!("a tag filter is written type:value, not \"{value}\""),
                    ));
                }
            },
            _ => {}
        }
    }
    query.projects.sort();
    query.projects.dedup();
    query.tags.sort();
    query.tags.dedup();
    Ok(query)
}

/// The event id in `If-None-Match` (`"42"`, `W/"42"` or `42`); anything else is none.
fn event_id_of(headers: &HeaderMap) -> Option<u64> {
    let value = headers.get(header::IF_NONE_MATCH)?.to_str().ok()?;
    let tag = value.trim().trim_start_matches("W/");
    let tag = tag
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tag);
    tag.parse().ok()
}

/// The events since the client's `If-None-Match` (Unleash's `ClientFeaturesDelta`:
/// `{events: [{type, eventId, …}]}`), a `hydration` when it sent none or is too far behind,
/// or 304.
#[utoipa::path(
    get,
    path = "/api/client/delta",
    tag = "client",
    params(DeltaParams),
    responses(
        (status = 200, description = "The events since If-None-Match (or a hydration), with ETag \"<last eventId>\".", content_type = "application/json"),
        (status = 304, description = "No event since the eventId in If-None-Match; no body."),
        super::openapi::Errors
    )
)]
async fn delta(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    headers: HeaderMap,
    QueryParams(pairs): QueryParams<Vec<(String, String)>>,
) -> HttpResult<Response> {
    let query = client_query(pairs)?;
    let answer = admin
        .client_delta(&caller, &query, event_id_of(&headers))
        .await?;
    let (status, etag, body) = match answer {
        DeltaAnswer::NotModified { etag } => (StatusCode::NOT_MODIFIED, etag, None),
        DeltaAnswer::Events { etag, json, .. } => (StatusCode::OK, etag, Some(json)),
    };
    let etag = HeaderValue::from_str(&etag)
        .map_err(|e| Error::internal("an ETag is not a header value", Some(Box::new(e))))?;
    let builder = Response::builder()
        .status(status)
        .header(header::ETAG, etag)
        .header(header::CACHE_CONTROL, "no-cache");
    let response = match body {
        Some(json) => builder
            .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
            .body(Body::from(json)),
        None => builder.body(Body::empty()),
    };
    response.map_err(|e| Error::internal("could not build a response", Some(Box::new(e))).into())
}
