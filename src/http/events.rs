//! `GET /api/admin/events`: the audit log, newest first.

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::error::{HttpResult, Json};
use super::extract::{Authenticated, QueryParams};
use crate::ToggleAdmin;
use crate::store::Event;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How many events one read of the store returns while scanning the log.
const PAGE: usize = 1000;
/// How many events a response holds when `?limit=` is absent, as in Unleash.
const DEFAULT_LIMIT: usize = 100;

pub(crate) fn routes() -> OpenApiRouter<ToggleAdmin> {
    OpenApiRouter::new().routes(routes!(list))
}

/// `?project=`, `?feature=`, `?limit=`.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
struct Filter {
    project: Option<String>,
    feature: Option<String>,
    limit: Option<usize>,
}

/// Unleash's `eventsSchema`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Events {
    version: u32,
    #[schema(value_type = Vec<super::openapi::EventSchema>)]
    events: Vec<Event>,
    total_events: usize,
}

/// The events that match, newest first: at most `limit` (100 by default) of them, with
/// `totalEvents` counting every match.
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
    let matches = |event: &Event| {
        filter
            .project
            .as_deref()
            .is_none_or(|p| event.event.project.as_deref() == Some(p))
            && filter
                .feature
                .as_deref()
                .is_none_or(|f| event.event.feature_name.as_deref() == Some(f))
    };
    let mut found = Vec::new();
    let mut after = 0;
    loop {
        let page = admin.events(&caller, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        let full = page.len() == PAGE;
        found.extend(page.into_iter().filter(|e| matches(e)));
        if !full {
            break;
        }
    }
    let total_events = found.len();
    found.reverse();
    found.truncate(filter.limit.unwrap_or(DEFAULT_LIMIT));
    Ok(Json::ok(Events {
        version: 1,
        events: found,
        total_events,
    }))
}
