//! `GET /api/client/streaming`: the client features as server-sent events
//! (`text/event-stream`), as Unleash's streaming SDKs consume them (see
//! [`ToggleAdmin::client_stream`]): `unleash-connected` with a hydration (or, with a
//! `Last-Event-ID` the history still holds, the events since), then `unleash-updated` with
//! each change; `id:` on every event; a keep-alive comment every
//! [`PushConfig::keep_alive`](crate::admin::PushConfig::keep_alive). A malformed
//! `Last-Event-ID` is treated as none. Over the stream limits → 429 `TooManyRequests`.
//!
//! The body is written from the encoded bytes the admin shares between subscribers; it is
//! never compressed (the router's compression skips `text/event-stream`), and the
//! whole-request timeout does not apply to it (it ends at the response's headers).

use std::convert::Infallible;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::delta::{DeltaParams, client_query};
use super::error::HttpResult;
use super::extract::{AnyKey, QueryParams};
use crate::ToggleAdmin;
use crate::admin::ClientStream;
use crate::error::Error;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(streaming))
}

/// The client features as server-sent events.
#[utoipa::path(
    get,
    path = "/api/client/streaming",
    tag = "client",
    params(DeltaParams),
    responses(
        (status = 200, description = "A stream of server-sent events: unleash-connected, then unleash-updated; each data is a ClientFeaturesDelta.", content_type = "text/event-stream"),
        (status = 429, description = "Too many streams, over the server or the key.", body = crate::ErrorBody),
        super::openapi::Errors
    )
)]
async fn streaming(
    State(admin): State<ToggleAdmin>,
    AnyKey(caller): AnyKey,
    headers: HeaderMap,
    QueryParams(pairs): QueryParams<Vec<(String, String)>>,
) -> HttpResult<Response> {
    let query = client_query(pairs)?;
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let stream = admin.client_stream(&caller, &query, last_event_id).await?;
    let body = futures_util::stream::unfold(stream, |mut stream: ClientStream| async move {
        let next: Bytes = stream.next().await?;
        Some((Ok::<_, Infallible>(next), stream))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        // nginx and the like: pass events on as they come.
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(body))
        .map_err(|e| Error::internal("could not build a response", Some(Box::new(e))).into())
}
