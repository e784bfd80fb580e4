//! Finding a feature by name across every project (the facade's feature search: name,
//! description or a tag value), a page at a time.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use serde::Deserialize;

use super::Ui;
use super::layout::{self, Page, pager, query, seg};
use super::session::Signed;
use crate::model::FeatureSearchQuery;

/// Results a page.
const PER_PAGE: usize = 50;

/// The page's query.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<String>,
}

/// `GET /search?q=`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Query(params): Query<SearchQuery>,
) -> Response {
    let page = params
        .page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
        - 1;
    let text = params.q.trim();
    let found = if text.is_empty() {
        None
    } else {
        let search = FeatureSearchQuery {
            query: Some(text.to_owned()),
            offset: Some(page.saturating_mul(PER_PAGE).to_string()),
            limit: Some(PER_PAGE.to_string()),
            ..FeatureSearchQuery::default()
        };
        match ui.admin.search_features(signed.caller(), &search).await {
            Ok(found) => Some(found),
            Err(error) => return layout::error(&ui, &signed, &error),
        }
    };
    let base = ui.url("/search");
    let link = |p: usize| {
        format!(
            "{base}{}",
            query(&[("q", &params.q), ("page", &(p + 1).to_string())])
        )
    };
    let body = html! {
        form.search method="get" action=(base) role="search" {
            div {
                label for="q" { "Find a feature in every project" }
                input #q type="search" name="q" value=(params.q) placeholder="name, description or tag";
            }
            button type="submit" { "Search" }
        }
        @if let Some(found) = &found {
            (pager(page, PER_PAGE, found.total, link))
            table {
                caption.visually-hidden { "Features found" }
                thead { tr {
                    th scope="col" { "Feature" } th scope="col" { "Project" } th scope="col" { "Type" }
                    th scope="col" { "Description" } th scope="col" { "On in" }
                } }
                tbody {
                    @for f in &found.features {
                        @let project = f.project.clone().unwrap_or_default();
                        tr {
                            td {
                                a href=(ui.url(&format!("/projects/{}/features/{}", seg(&project), seg(&f.name)))) { (f.name) }
                                @if f.stale == Some(true) { " " span.tag { "stale" } }
                            }
                            td { a href=(ui.url(&format!("/projects/{}", seg(&project)))) { (project) } }
                            td { (f.feature_type.as_deref().unwrap_or("")) }
                            td { (f.description.clone().flatten().unwrap_or_default()) }
                            td {
                                @for e in f.environments.iter().flatten().filter(|e| e.enabled) {
                                    span.tag { (e.name) }
                                }
                            }
                        }
                    }
                }
            }
            @if found.features.is_empty() { p { "No feature matches “" (text) "”." } }
        } @else {
            p.muted { "Type part of a name. Archived features are in the " a href=(ui.url("/archive")) { "archive" } "." }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Search features", body),
        StatusCode::OK,
    )
}
