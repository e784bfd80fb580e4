//! A feature's page: its settings, per environment its state, a one-line summary of its
//! rollout and its strategies (edit, remove, move up or down, add, copy to another
//! environment), its variants, and its latest events (who changed what, when).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::constraints::describe;
use super::features::toggle;
use super::layout::{self, Page, query, seg};
use super::session::Signed;
use super::{Ui, csrf, problems, rollout};
use crate::admin::Need;
use crate::model::{FeatureEnvironment, FeatureStrategy, Permission, Segment};
use crate::store::EventQuery;

/// Events shown on the page; the event log has the rest.
const EVENTS: usize = 15;

/// `GET /projects/{project}/features/{feature}`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
) -> Response {
    let caller = signed.caller();
    let feature = match ui.admin.feature(caller, &project, &name).await {
        Ok(f) => f,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let segments = match ui.admin.segments(caller).await {
        Ok(s) => s,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let events = match ui
        .admin
        .query_events(caller, &EventQuery::newest(EVENTS).feature(name.clone()))
        .await
    {
        Ok(e) => e,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let notice = problems::read_only(
        &ui,
        &signed,
        &[Need::project(Permission::UpdateFeature, &project)],
    )
    .await;
    let base = format!("/projects/{}/features/{}", seg(&project), seg(&name));
    let environments = feature.environments.clone().unwrap_or_default();
    let names: Vec<&str> = environments.iter().map(|e| e.name.as_str()).collect();
    let stale = feature.stale == Some(true);
    let body = html! {
        p { a href=(ui.url(&format!("/projects/{}", seg(&project)))) { "← project " (project) } }
        @if let Some(n) = notice { (n) }
        dl {
            dt { "Type" } dd { (feature.feature_type.as_deref().unwrap_or("release")) }
            dt { "Description" } dd { (feature.description.clone().flatten().unwrap_or_default()) }
            dt { "Impression data" } dd { @if feature.impression_data == Some(true) { "on" } @else { "off" } }
            dt { "Stale" } dd { @if stale { "yes" } @else { "no" } }
        }
        div.actions {
            a href=(ui.url(&format!("{base}/settings"))) { "Edit the settings" }
            form.inline method="post" action=(ui.url(&format!("{base}/stale"))) {
                (csrf::input(&signed))
                input type="hidden" name="stale" value=(if stale { "false" } else { "true" });
                button.secondary type="submit" { @if stale { "Mark as not stale" } @else { "Mark as stale" } }
            }
            a href=(ui.url(&format!("{base}/archive"))) { "Archive…" }
        }
        @for env in &environments {
            (environment(&ui, &signed, &project, &name, env, &names, &segments))
        }
        section aria-labelledby="events" {
            h2 #events { "Who changed this, when" }
            @if events.events.is_empty() { p.muted { "No events yet." } }
            @else {
                table {
                    caption.visually-hidden { "Latest events of this feature" }
                    thead { tr { th scope="col" { "When" } th scope="col" { "Who" } th scope="col" { "What" } th scope="col" { "Environment" } } }
                    tbody {
                        @for e in &events.events {
                            tr {
                                td { (e.event.created_at.format("%Y-%m-%d %H:%M:%S")) }
                                td { (e.event.created_by) }
                                td { code { (e.event.event_type) } }
                                td { (e.event.environment.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
            p { a href=(format!("{}{}", ui.url("/events"), query(&[("feature", &name)]))) { "Every event of " (name) " (with what changed)" } }
        }
    };
    let title = format!("Feature {name}");
    layout::render(&ui, Some(&signed), &Page::new(title, body), StatusCode::OK)
}

/// One environment: state and summary, strategies, and what can be done with them.
fn environment(
    ui: &Ui,
    signed: &Signed,
    project: &str,
    feature: &str,
    env: &FeatureEnvironment,
    all: &[&str],
    segments: &[Segment],
) -> Markup {
    let base = format!(
        "/projects/{}/features/{}/environments/{}",
        seg(project),
        seg(feature),
        seg(&env.name)
    );
    let back = ui.url(&format!(
        "/projects/{}/features/{}",
        seg(project),
        seg(feature)
    ));
    let strategies = env.strategies.as_deref().unwrap_or_default();
    let others: Vec<&&str> = all.iter().filter(|e| **e != env.name).collect();
    let heading = format!("env-{}", env.name);
    html! {
        section aria-labelledby=(heading) {
            h2 id=(heading) { "Environment " (env.name) }
            p.rollout {
                (toggle(ui, signed, project, feature, &env.name, env.enabled, &back))
                " "
                span.summary data-environment=(env.name) { (rollout::summary(env.enabled, strategies, segments)) }
            }
            (strategy_table(ui, signed, &base, strategies, segments))
            div.actions {
                a href=(ui.url(&format!("{base}/strategies/new"))) { "Add a strategy in " (env.name) }
                a href=(ui.url(&format!("{base}/variants"))) {
                    "Variants of " (env.name) " (" (env.variants.as_ref().map_or(0, Vec::len)) ")"
                }
            }
            @if !others.is_empty() && !strategies.is_empty() {
                form.search method="post" action=(ui.url(&format!("{base}/copy"))) {
                    (csrf::input(signed))
                    div {
                        label for=(format!("copy-{}", env.name)) { "Copy these strategies to" }
                        select id=(format!("copy-{}", env.name)) name="to" {
                            @for other in &others { option value=(other) { (other) } }
                        }
                    }
                    button.secondary type="submit" { "Copy" }
                }
            }
        }
    }
}

fn strategy_table(
    ui: &Ui,
    signed: &Signed,
    base: &str,
    list: &[FeatureStrategy],
    segments: &[Segment],
) -> Markup {
    html! {
        @if list.is_empty() {
            p.muted { "No strategies." }
        } @else {
            table.strategies {
                caption.visually-hidden { "Strategies, evaluated in this order" }
                thead { tr {
                    th scope="col" { "#" } th scope="col" { "Strategy" } th scope="col" { "Who" }
                    th scope="col" { "Constraints and segments" } th scope="col" { "Variants" } th scope="col" { "Actions" }
                } }
                tbody {
                    @for (i, s) in list.iter().enumerate() {
                        @let id = s.id.clone().unwrap_or_default();
                        @let path = format!("{base}/strategies/{}", seg(&id));
                        @let label = format!("strategy {} ({})", i + 1, s.title.clone().flatten().filter(|t| !t.is_empty()).unwrap_or_else(|| s.name.clone()));
                        tr {
                            td.num { (i + 1) }
                            td {
                                (s.name)
                                @if let Some(Some(title)) = &s.title { @if !title.is_empty() { br; span.muted { (title) } } }
                                @if s.is_disabled() { " " span.tag { "disabled" } }
                            }
                            td { (rollout::strategy(&FeatureStrategy { constraints: Vec::new(), segments: Vec::new(), ..s.clone() }, segments)) }
                            td {
                                @for c in &s.constraints { div { (describe(c)) } }
                                @for sid in &s.segments {
                                    span.tag { "segment " (segments.iter().find(|g| g.id == *sid).map_or_else(|| sid.to_string(), |g| g.name.clone())) }
                                }
                            }
                            td { @for v in &s.variants { span.tag { (v.name) " " (v.weight / 10) "." (v.weight % 10) " %" } } }
                            td {
                                a href=(ui.url(&path)) aria-label=(format!("Edit {label}")) { "Edit" }
                                " "
                                @for (direction, arrow, possible) in [("up", "↑", i > 0), ("down", "↓", i + 1 < list.len())] {
                                    @if possible {
                                        form.inline method="post" action=(ui.url(&format!("{path}/move"))) {
                                            (csrf::input(signed))
                                            input type="hidden" name="direction" value=(direction);
                                            button.secondary.small type="submit" aria-label=(format!("Move {label} {direction}")) { (arrow) }
                                        }
                                        " "
                                    }
                                }
                                a href=(ui.url(&format!("{path}/remove"))) aria-label=(format!("Remove {label}")) { "Remove…" }
                            }
                        }
                    }
                }
            }
        }
    }
}
