//! A project's features (searched and paged on the server, so 10,000 features load a page
//! at a time), and turning a feature on or off in an environment. A feature's own page is
//! `feature.rs`.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::fields::Fields;
use super::layout::{self, Page, pager, query, seg};
use super::session::Signed;
use super::{Ui, csrf};
use crate::model::FeatureListQuery;

/// Features a page.
pub(crate) const PER_PAGE: usize = 50;

/// The query of a project's features page.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct FeaturesQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<String>,
}

/// `GET /projects/{project}`: a page of the project's features.
pub(crate) async fn features(
    State(ui): State<Ui>,
    signed: Signed,
    Path(project): Path<String>,
    Query(params): Query<FeaturesQuery>,
) -> Response {
    let page = params
        .page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
        - 1;
    let caller = signed.caller();
    let details = ui.admin.project(caller, &project).await;
    let list = ui
        .admin
        .feature_list(
            caller,
            &project,
            &FeatureListQuery {
                search: Some(params.q.clone()),
                offset: page.saturating_mul(PER_PAGE),
                limit: PER_PAGE,
            },
        )
        .await;
    let (details, list) = match (details, list) {
        (Ok(d), Ok(l)) => (d, l),
        (Err(error), _) | (_, Err(error)) => return layout::error(&ui, &signed, &error),
    };
    let base = ui.url(&format!("/projects/{}", seg(&project)));
    let here = format!(
        "{base}{}",
        query(&[("q", &params.q), ("page", &(page + 1).to_string())])
    );
    let link = |p: usize| {
        format!(
            "{base}{}",
            query(&[("q", &params.q), ("page", &(p + 1).to_string())])
        )
    };
    let body = html! {
        p {
            a href=(ui.url(&format!("/projects/{}/new-feature", seg(&project)))) { "New feature" }
            " · "
            a href=(ui.url(&format!("/projects/{}/access", seg(&project)))) { "Project access" }
            " · "
            a href=(format!("{}{}", ui.url("/export"), query(&[("project", &project)]))) { "Export" }
            " · "
            a href=(format!("{}{}", ui.url("/events"), query(&[("project", &project)]))) { "Events" }
        }
        @if let Some(d) = &details.description { p.muted { (d) } }
        form.search method="get" action=(base) role="search" {
            div {
                label for="q" { "Search features" }
                input #q type="search" name="q" value=(params.q) placeholder="name or description";
            }
            button type="submit" { "Search" }
        }
        (pager(page, PER_PAGE, list.total, link))
        table {
            caption.visually-hidden { "Features" }
            thead { tr {
                th scope="col" { "Feature" }
                th scope="col" { "Type" }
                th scope="col" { "Description" }
                @for e in &list.environments { th scope="col" { (e) } }
            } }
            tbody {
                @for f in &list.features {
                    tr {
                        td {
                            a href=(format!("{base}/features/{}", seg(&f.name))) { (f.name) }
                            @if f.stale { " " span.tag { "stale" } }
                        }
                        td { (f.feature_type) }
                        td { (f.description.as_deref().unwrap_or("")) }
                        @for (e, on) in list.environments.iter().zip(&f.enabled) {
                            td { (toggle(&ui, &signed, &project, &f.name, e, *on, &here)) }
                        }
                    }
                }
            }
        }
        @if list.features.is_empty() { p { "No features match." } }
        (pager(page, PER_PAGE, list.total, link))
    };
    let title = format!("Project {}", details.name);
    layout::render(&ui, Some(&signed), &Page::new(title, body), StatusCode::OK)
}

/// The button that turns `feature` on or off in `environment`, coming back to `back`.
pub(crate) fn toggle(
    ui: &Ui,
    signed: &Signed,
    project: &str,
    feature: &str,
    environment: &str,
    on: bool,
    back: &str,
) -> Markup {
    let action = ui.url(&format!(
        "/projects/{}/features/{}/environments/{}/enabled",
        seg(project),
        seg(feature),
        seg(environment)
    ));
    html! {
        form.inline method="post" action=(action) {
            (csrf::input(signed))
            input type="hidden" name="enabled" value=(if on { "false" } else { "true" });
            input type="hidden" name="back" value=(back);
            button.toggle.on[on].off[!on] type="submit"
                aria-label=(format!("{feature} in {environment}: {}; turn {}", if on { "on" } else { "off" }, if on { "off" } else { "on" })) {
                @if on { "on" } @else { "off" }
            }
        }
    }
}

/// `POST …/environments/{environment}/enabled`.
pub(crate) async fn set_enabled(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment)): Path<(String, String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let enabled = fields.get("enabled") == Some("true");
    match ui
        .admin
        .set_feature_enabled(signed.caller(), &project, &feature, &environment, enabled)
        .await
    {
        Ok(()) => {
            let state = if enabled { "on" } else { "off" };
            ui.sessions.flash(
                &signed.id,
                format!("{feature} is {state} in {environment}."),
            );
            // Only a path of this page is followed back to.
            let back = fields
                .get("back")
                .filter(|b| b.starts_with(&format!("{}/", ui.config.base)) && !b.starts_with("//"))
                .map_or_else(
                    || ui.url(&format!("/projects/{}", seg(&project))),
                    str::to_owned,
                );
            Redirect::to(&back).into_response()
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
