//! The registered applications with their instances and SDK versions; deleting one
//! ([`ToggleAdmin::delete_application`](crate::ToggleAdmin::delete_application)) after a
//! confirmation page.

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::session::Signed;
use super::{Ui, csrf};

/// `GET /applications`.
pub(crate) async fn page(State(ui): State<Ui>, signed: Signed) -> Response {
    let applications = match ui.admin.applications(signed.caller()).await {
        Ok(a) => a,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        @if applications.is_empty() {
            p { "No application has registered yet. SDKs register when they start." }
        } @else {
            table {
                thead { tr {
                    th scope="col" { "Application" }
                    th scope="col" { "SDK versions" }
                    th scope="col" { "Instances" }
                    th scope="col" { "Strategies" }
                    th scope="col" { span.visually-hidden { "Actions" } }
                } }
                tbody {
                    @for app in &applications {
                        @let versions: BTreeSet<&str> = app.instances.iter()
                            .filter_map(|i| i.sdk_version.as_deref())
                            .chain(app.sdk_version.as_deref())
                            .collect();
                        tr {
                            td {
                                strong { (app.name) }
                                @if let Some(d) = &app.description { br; span.muted { (d) } }
                            }
                            td { @for v in &versions { span.tag { (v) } } }
                            td {
                                @if app.instances.is_empty() { span.muted { "none" } }
                                @for i in &app.instances {
                                    div {
                                        code { (i.instance_id) }
                                        @if let Some(env) = &i.environment { " · " (env) }
                                        @if let Some(seen) = &i.last_seen { " · last seen " (seen.format("%Y-%m-%d %H:%M:%S UTC")) }
                                    }
                                }
                            }
                            td { @for s in &app.strategies { span.tag { (s) } } }
                            td {
                                a href=(ui.url(&format!("/applications/{}/delete", seg(&app.name))))
                                    aria-label=(format!("Delete {}", app.name)) { "Delete…" }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Applications", body),
        StatusCode::OK,
    )
}

/// `GET /applications/{name}/delete`: the confirmation.
pub(crate) async fn confirm(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
) -> Response {
    let app = match ui.admin.application(signed.caller(), &name).await {
        Ok(a) => a,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        p {
            "Delete the application " strong { (app.name) } " and its "
            (app.instances.len()) " registered instance(s)? "
            "Running SDKs register it again when they next start."
        }
        form method="post" action=(ui.url(&format!("/applications/{}/delete", seg(&name)))) {
            (csrf::input(&signed))
            div.actions {
                button.danger type="submit" { "Delete " (app.name) }
                a href=(ui.url("/applications")) { "Cancel" }
            }
        }
    };
    let title = format!("Delete application {name}?");
    layout::render(&ui, Some(&signed), &Page::new(title, body), StatusCode::OK)
}

/// `POST /applications/{name}/delete`.
pub(crate) async fn delete(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    match ui.admin.delete_application(signed.caller(), &name).await {
        Ok(()) => {
            ui.sessions
                .flash(&signed.id, format!("Deleted the application {name}."));
            Redirect::to(&ui.url("/applications")).into_response()
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
