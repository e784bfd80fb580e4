//! Projects: the home page (every project). A project's features are in `features.rs`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::Ui;
use super::layout::{self, Page, seg};
use super::session::Signed;

/// `GET /`: every project.
pub(crate) async fn home(State(ui): State<Ui>, signed: Signed) -> Response {
    let projects = match ui.admin.projects(signed.caller()).await {
        Ok(projects) => projects,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        @if projects.is_empty() {
            p { "There are no projects yet. Create one through the admin API, or import an export into a new project." }
        } @else {
            table {
                thead { tr { th scope="col" { "Project" } th scope="col" { "Id" } th scope="col" { "Environments" } th scope="col" { "Description" } th scope="col" { "Access" } } }
                tbody {
                    @for p in &projects {
                        tr {
                            td { a href=(ui.url(&format!("/projects/{}", seg(&p.id)))) { (p.name) } }
                            td { code { (p.id) } }
                            td { @for e in &p.environments { span.tag { (e) } } }
                            td { (p.description.as_deref().unwrap_or("")) }
                            td { a href=(ui.url(&format!("/projects/{}/access", seg(&p.id)))) { "Access" } }
                        }
                    }
                }
            }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Projects", body),
        StatusCode::OK,
    )
}
