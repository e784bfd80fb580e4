//! The audit log over HTTP: `GET /api/admin/events` (newest first, a page at a time), a
//! feature's events, Unleash's two event searches, and who made events.
//!
//! Events are shown as [`EventView`]s (Unleash's `eventSchema`).

use axum::extract::State;
use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, JsonBody, Params, QueryParams};
use crate::ToggleAdmin;
use crate::admin::{event_view, parse_event_filter};
use crate::error::{Error, ErrorDetail};
use crate::model::{EventCreator, EventFieldFilter, EventSearch, EventSearchBody, EventView};
use crate::store::{Event, EventQuery};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How many events the event search (`GET /api/admin/search/events`) returns when `limit`
/// is absent, as in Unleash.
const SEARCH_LIMIT: usize = 50;

/// How many events a response holds when `?limit=` is absent, as in Unleash.
const DEFAULT_LIMIT: usize = 100;
/// The most events one response holds, as in Unleash's event search: a larger `?limit=` is
/// cut to this, so one call never reads an unbounded part of the log.
const MAX_LIMIT: usize = 1000;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(feature_events))
        .routes(routes!(search_body))
        .routes(routes!(search))
        .routes(routes!(creators))
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
    events: Vec<EventView>,
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
        events: views(page.events, false),
        total_events: page.total,
    }))
}

/// Unleash's `featureEventsSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct FeatureEvents {
    version: u32,
    toggle_name: String,
    events: Vec<EventView>,
    total_events: u64,
}

/// A feature's newest events (at most 100), with how many it has.
#[utoipa::path(
    get,
    path = "/api/admin/events/{featureName}",
    tag = "events",
    params(super::openapi::FeatureNamePath),
    responses(
        (status = 200, description = "The feature's events, newest first.", body = FeatureEvents),
        super::openapi::Errors
    )
)]
async fn feature_events(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    Params(feature): Params<String>,
) -> HttpResult<Json<FeatureEvents>> {
    let search = EventSearch {
        feature: Some(EventFieldFilter::is(feature.clone())),
        limit: DEFAULT_LIMIT,
        ..EventSearch::default()
    };
    let page = admin.search_events(&caller, &search).await?;
    Ok(Json::ok(FeatureEvents {
        version: 1,
        toggle_name: feature,
        events: views(page.events, false),
        total_events: page.total,
    }))
}

/// Unleash's older event search: `{type?, project?, feature?, query?, limit?, offset?}`.
#[utoipa::path(
    post,
    path = "/api/admin/events/search",
    tag = "events",
    request_body(content = EventSearchBody, description = "What to find.", content_type = "application/json"),
    responses(
        (status = 200, description = "The matching events, newest first.", body = Events),
        super::openapi::BodyErrors
    )
)]
async fn search_body(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    JsonBody(body): JsonBody<EventSearchBody>,
) -> HttpResult<Json<Events>> {
    let limit = usize::try_from(body.limit.unwrap_or(DEFAULT_LIMIT as u64))
        .unwrap_or(MAX_LIMIT)
        .min(MAX_LIMIT);
    let search = EventSearch {
        query: body.query.filter(|q| !q.is_empty()),
        event_type: body.event_type.map(EventFieldFilter::is),
        project: body.project.map(EventFieldFilter::is),
        feature: body.feature.map(EventFieldFilter::is),
        offset: body.offset.unwrap_or(0),
        limit,
        ..EventSearch::default()
    };
    let page = admin.search_events(&caller, &search).await?;
    Ok(Json::ok(Events {
        version: 1,
        events: views(page.events, false),
        total_events: page.total,
    }))
}

/// `GET /api/admin/search/events`: each filter a value or Unleash's operator form
/// (`IS:`, `IS_NOT:`, `IS_ANY_OF:a,b`, `IS_NONE_OF:a,b`); `from`/`to` dates (`2024-05-01`,
/// `to` inclusive) or RFC 3339 instants, optionally after `IS:`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchParams {
    /// Text to find in the event's type, author, project, feature, data or data before.
    query: Option<String>,
    /// The feature(s).
    feature: Option<String>,
    /// The project(s).
    project: Option<String>,
    /// The event type(s).
    #[serde(rename = "type")]
    event_type: Option<String>,
    /// Who made them: an id from `/api/admin/event-creators`, or the name the events record
    /// as `createdBy` (a user's email or username, a key's name).
    created_by: Option<String>,
    /// The first day (or instant).
    from: Option<String>,
    /// The last day (or instant).
    to: Option<String>,
    /// Skip this many matches.
    offset: Option<String>,
    /// The most events to return: 50 when absent, at most 1000.
    limit: Option<String>,
}

/// Unleash's `eventSearchResponseSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
struct EventSearchPage {
    events: Vec<EventView>,
    total: u64,
}

/// Unleash's event search.
#[utoipa::path(
    get,
    path = "/api/admin/search/events",
    tag = "events",
    params(SearchParams),
    responses(
        (status = 200, description = "The matching events, newest first.", body = EventSearchPage),
        super::openapi::Errors
    )
)]
async fn search(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
    QueryParams(params): QueryParams<SearchParams>,
) -> HttpResult<Json<EventSearchPage>> {
    let mut problems = Vec::new();
    let mut filter = |name: &str, value: Option<String>| {
        let value = value.filter(|v| !v.is_empty())?;
        let parsed = parse_event_filter(&value);
        if parsed.is_none() {
            problems.push(ErrorDetail::at(
                format!("/{name}"),
                format!(
                    "\"{value}\" is not a filter: write a value, or IS:, IS_NOT:, IS_ANY_OF: or IS_NONE_OF: and values"
                ),
            ));
        }
        parsed
    };
    let event_type = filter("type", params.event_type);
    let project = filter("project", params.project);
    let feature = filter("feature", params.feature);
    let created_by = filter("createdBy", params.created_by);
    let from = params
        .from
        .as_deref()
        .and_then(|v| instant("from", v, false, &mut problems));
    let to = params
        .to
        .as_deref()
        .and_then(|v| instant("to", v, true, &mut problems));
    let number = |name: &str, value: Option<&str>, problems: &mut Vec<ErrorDetail>| {
        let value = value?;
        match value.parse::<u64>() {
            Ok(n) => Some(n),
            Err(_) => {
                problems.push(ErrorDetail::at(
                    format!("/{name}"),
                    format!("{name} must be a whole number, not \"{value}\""),
                ));
                None
            }
        }
    };
    let offset = number("offset", params.offset.as_deref(), &mut problems);
    let limit = number("limit", params.limit.as_deref(), &mut problems);
    if !problems.is_empty() {
        return Err(Error::validation("The event search is not valid.", problems).into());
    }
    let search = EventSearch {
        query: params.query.filter(|q| !q.is_empty()),
        event_type,
        project,
        feature,
        created_by,
        from,
        to,
        offset: offset.unwrap_or(0),
        limit: limit
            .map_or(SEARCH_LIMIT, |l| usize::try_from(l).unwrap_or(MAX_LIMIT))
            .min(MAX_LIMIT),
    };
    let page = admin.search_events(&caller, &search).await?;
    Ok(Json::ok(EventSearchPage {
        events: views(page.events, true),
        total: page.total,
    }))
}

/// `events` as shown, `labelled` for the event search.
fn views(events: Vec<Event>, labelled: bool) -> Vec<EventView> {
    events
        .into_iter()
        .map(|e| event_view(e, labelled))
        .collect()
}

/// The instant a `from` or `to` names: a date (`2024-05-01`; `to` means the end of that day,
/// as Unleash) or an RFC 3339 instant, optionally after `IS:`. A problem is named at
/// `/{name}`.
fn instant(
    name: &str,
    value: &str,
    end_of_day: bool,
    problems: &mut Vec<ErrorDetail>,
) -> Option<DateTime<Utc>> {
    let text = value.strip_prefix("IS:").unwrap_or(value);
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let day = if end_of_day { day.succ_opt()? } else { day };
        return day.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
    }
    match DateTime::parse_from_rfc3339(text) {
        Ok(at) => {
            let at = at.with_timezone(&Utc);
            // `to` names the last instant included.
            Some(if end_of_day {
                at + TimeDelta::nanoseconds(1)
            } else {
                at
            })
        }
        Err(_) => {
            problems.push(ErrorDetail::at(
                format!("/{name}"),
                format!(
                    "{name} must be a date (2024-05-01) or an RFC 3339 instant, not \"{value}\""
                ),
            ));
            None
        }
    }
}

/// Everyone who made events the caller may see, by name.
#[utoipa::path(
    get,
    path = "/api/admin/event-creators",
    tag = "events",
    responses(
        (status = 200, description = "Who made events, `[{id, name}]`.", body = Vec<EventCreator>),
        super::openapi::Errors
    )
)]
async fn creators(
    State(admin): State<ToggleAdmin>,
    Authenticated(caller): Authenticated,
) -> HttpResult<Json<Vec<EventCreator>>> {
    Ok(Json::ok(admin.event_creators(&caller).await?))
}
