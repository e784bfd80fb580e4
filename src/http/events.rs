//! `GET /api/admin/events`: the audit log, newest first, a page at a time.

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, QueryParams};
use crate::ToggleAdmin;
use crate::store::{Event, EventQuery};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How many events a response holds when `?limit=` is absent, as in Unleash.
const DEFAULT_LIMIT: usize = 100;
/// The most events one response holds, as in Unleash's event search: a larger `?limit=` is
/// cut to this, so one call never reads an unbounded part of the log.
const MAX_LIMIT: usize = 1000;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(list))
}

/// The filters and the page: `?type=`, `?project=`, `?feature=` (exact names; all given
/// must match), `?limit=`, `?offset=`, `?before=`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct Filter {
    /// Only events of this type (`feature-created`, …).
    #[serde(rename = "type")]
    event_type: Option<String>,
    /// Only events of this project.
    project: Option<String>,
    /// Only events of this feature.
    feature: Option<String>,
    /// The most events to return: 100 when absent, at most 1000.
    limit: Option<usize>,
    /// Skip this many matching events first (after `before`). Deep offsets cost a walk over
    /// the skipped matches; page with `before` instead.
    offset: Option<u64>,
    /// Only events with a smaller id: the last id of the previous page, to page without
    /// offsets.
    before: Option<u64>,
}

/// Unleash's `eventsSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Events {
    version: u32,
    events: Vec<Event>,
    total_events: u64,
}

/// The events that match, newest first: at most `limit` (100 by default) of them, with
/// `totalEvents` counting every match. Only the page is read from the store.
#[utoipa::path(
    get,
    path = "/api/admin/events",
    tag = "events",
    params(Filter),
    responses(
        (status = 200, description = "The matching events, newest first.", body = Events),
        super::openapi::Errors
    )
)]
async fn list(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(filter): QueryParams<Filter>,
) -> HttpResult<Json<Events>> {
    let mut query = EventQuery::newest(filter.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT))
        .offset(filter.offset.unwrap_or(0));
    query.event_type = filter.event_type;
    query.project = filter.project;
    query.feature = filter.feature;
    query.before = filter.before;
    let page = admin.query_events(&caller, &query).await?;
    Ok(Json::ok(Events {
        version: 1,
        events: page.events,
        total_events: page.total,
    }))
}
