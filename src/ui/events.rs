//! The event log, newest first, filtered by type, project and feature, a page at a time.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use serde::Deserialize;

use super::Ui;
use super::layout::{self, Page, pager, query};
use super::session::Signed;
use crate::store::{EventQuery, Json};

/// Events a page.
const PER_PAGE: usize = 50;

/// The page's query.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct EventsQuery {
    #[serde(default, rename = "type")]
    event_type: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    feature: String,
    #[serde(default)]
    page: Option<String>,
}

fn pretty(json: &Json) -> String {
    serde_json::from_str::<serde_json::Value>(json.as_raw().get())
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_else(|_| json.to_string())
}

/// `GET /events`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Query(params): Query<EventsQuery>,
) -> Response {
    let page = params
        .page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
        - 1;
    let filter = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    let mut wanted = EventQuery::newest(PER_PAGE);
    wanted.event_type = filter(&params.event_type);
    wanted.project = filter(&params.project);
    wanted.feature = filter(&params.feature);
    wanted.offset = u64::try_from(page.saturating_mul(PER_PAGE)).unwrap_or(u64::MAX);
    let found = match ui.admin.query_events(signed.caller(), &wanted).await {
        Ok(p) => p,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let base = ui.url("/events");
    let link = |p: usize| {
        format!(
            "{base}{}",
            query(&[
                ("type", &params.event_type),
                ("project", &params.project),
                ("feature", &params.feature),
                ("page", &(p + 1).to_string()),
            ])
        )
    };
    let total = usize::try_from(found.total).unwrap_or(usize::MAX);
    let body = html! {
        form.search method="get" action=(base) {
            div { label for="type" { "Type" } input #type type="text" name="type" value=(params.event_type) placeholder="feature-created"; }
            div { label for="project" { "Project" } input #project type="text" name="project" value=(params.project); }
            div { label for="feature" { "Feature" } input #feature type="text" name="feature" value=(params.feature); }
            button type="submit" { "Filter" }
        }
        (pager(page, PER_PAGE, total, link))
        table {
            thead { tr {
                th scope="col" { "Id" } th scope="col" { "When" } th scope="col" { "Type" } th scope="col" { "By" }
                th scope="col" { "Project" } th scope="col" { "Feature" } th scope="col" { "Environment" } th scope="col" { "Data" }
            } }
            tbody {
                @for e in &found.events {
                    tr {
                        td.num { (e.id) }
                        td { (e.event.created_at.format("%Y-%m-%d %H:%M:%S")) }
                        td { code { (e.event.event_type) } }
                        td { (e.event.created_by) }
                        td { (e.event.project.as_deref().unwrap_or("")) }
                        td { (e.event.feature_name.as_deref().unwrap_or("")) }
                        td { (e.event.environment.as_deref().unwrap_or("")) }
                        td {
                            @if e.event.data.is_some() || e.event.pre_data.is_some() {
                                details {
                                    summary { "Show" }
                                    @if let Some(pre) = &e.event.pre_data { p { "Before:" } pre { (pretty(pre)) } }
                                    @if let Some(data) = &e.event.data { p { "After:" } pre { (pretty(data)) } }
                                }
                            }
                        }
                    }
                }
            }
        }
        @if found.events.is_empty() { p { "No events match." } }
        (pager(page, PER_PAGE, total, link))
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Event log", body),
        StatusCode::OK,
    )
}
