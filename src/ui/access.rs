//! A project's access: its roles with their users and groups, edited and saved as a whole
//! through [`ToggleAdmin::set_project_access`](crate::ToggleAdmin::set_project_access).
//! A refusal (a role the signed-in key may not hand out, a missing permission) is shown with
//! the facade's reason.

use std::collections::BTreeSet;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::session::Signed;
use super::{Ui, csrf};
use crate::error::Error;
use crate::model::{Group, Role, User};
use crate::model::{ProjectAccessConfiguration, RoleAccess};

/// What the page shows.
struct Directory {
    roles: Vec<Role>,
    users: Vec<User>,
    groups: Vec<Group>,
}

async fn directory(ui: &Ui, signed: &Signed) -> Result<Directory, Error> {
    let caller = signed.caller();
    let roles = ui.admin.roles(caller).await?;
    Ok(Directory {
        roles: roles
            .into_iter()
            .filter(|r| r.role_type.is_project_role())
            .collect(),
        users: ui.admin.users(caller).await?,
        groups: ui.admin.groups(caller).await?,
    })
}

fn user_label(user: &User) -> String {
    let name = user
        .name
        .clone()
        .or_else(|| user.username.clone())
        .or_else(|| user.email.clone())
        .unwrap_or_else(|| format!("user {}", user.id));
    match &user.email {
        Some(email) if Some(email) != user.name.as_ref() => format!("{name} <{email}>"),
        _ => name,
    }
}

/// `GET /projects/{project}/access`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Path(project): Path<String>,
) -> Response {
    let access = match ui.admin.project_access(signed.caller(), &project).await {
        Ok(a) => a,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    match directory(&ui, &signed).await {
        Ok(dir) => render(&ui, &signed, &project, &dir, &access, None, StatusCode::OK),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST /projects/{project}/access`: save the whole assignment.
pub(crate) async fn save(
    State(ui): State<Ui>,
    signed: Signed,
    Path(project): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let dir = match directory(&ui, &signed).await {
        Ok(dir) => dir,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let ids = |name: String| -> Vec<i64> {
        let set: BTreeSet<i64> = fields.all(&name).filter_map(|v| v.parse().ok()).collect();
        set.into_iter().collect()
    };
    let wanted = ProjectAccessConfiguration {
        roles: dir
            .roles
            .iter()
            .map(|r| RoleAccess {
                id: r.id,
                users: ids(format!("role.{}.user", r.id)),
                groups: ids(format!("role.{}.group", r.id)),
            })
            .filter(|r| !r.users.is_empty() || !r.groups.is_empty())
            .collect(),
    };
    match ui
        .admin
        .set_project_access(signed.caller(), &project, &wanted)
        .await
    {
        Ok(()) => {
            ui.sessions.flash(
                &signed.id,
                format!("Saved the access of project {project}."),
            );
            Redirect::to(&ui.url(&format!("/projects/{}/access", seg(&project)))).into_response()
        }
        Err(Error::AuthenticationRequired { .. })
        | Err(Error::Store(_))
        | Err(Error::Internal { .. }) => {
            layout::failure(&ui, Some(&signed), "The access could not be saved.")
        }
        Err(error) => {
            let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
            let problem = html! {
                div.error role="alert" {
                    p { strong { "Not saved. " } (error) }
                    @for d in layout::error_details(&error) {
                        p { @if let Some(p) = &d.path { code { (p) } ": " } (d.message) }
                    }
                }
            };
            render(&ui, &signed, &project, &dir, &wanted, Some(problem), status)
        }
    }
}

fn render(
    ui: &Ui,
    signed: &Signed,
    project: &str,
    dir: &Directory,
    access: &ProjectAccessConfiguration,
    problem: Option<Markup>,
    status: StatusCode,
) -> Response {
    let held = |role: i64| access.roles.iter().find(|r| r.id == role);
    let body = html! {
        p { a href=(ui.url(&format!("/projects/{}", seg(project)))) { "← project " (project) } }
        @if let Some(problem) = problem { (problem) }
        p.hint { "Tick who holds each role in this project, then save: the whole assignment is saved at once." }
        form method="post" action=(ui.url(&format!("/projects/{}/access", seg(project)))) {
            (csrf::input(signed))
            @for role in &dir.roles {
                @let current = held(role.id);
                fieldset {
                    legend { (role.name) }
                    @if let Some(d) = &role.description { p.hint { (d) } }
                    @if !dir.users.is_empty() {
                        p { strong { "Users" } }
                        div.grid {
                            @for user in &dir.users {
                                @let id = format!("role.{}.user.{}", role.id, user.id);
                                div {
                                    input type="checkbox" id=(id) name=(format!("role.{}.user", role.id)) value=(user.id)
                                        checked[current.is_some_and(|r| r.users.contains(&user.id))];
                                    " "
                                    label.inline for=(id) { (user_label(user)) }
                                }
                            }
                        }
                    }
                    @if !dir.groups.is_empty() {
                        p { strong { "Groups" } }
                        div.grid {
                            @for group in &dir.groups {
                                @let id = format!("role.{}.group.{}", role.id, group.id);
                                div {
                                    input type="checkbox" id=(id) name=(format!("role.{}.group", role.id)) value=(group.id)
                                        checked[current.is_some_and(|r| r.groups.contains(&group.id))];
                                    " "
                                    label.inline for=(id) { (group.name) " (" (group.users.len()) " users)" }
                                }
                            }
                        }
                    }
                    @if dir.users.is_empty() && dir.groups.is_empty() {
                        p.muted { "There are no users or groups yet." }
                    }
                }
            }
            div.actions { button type="submit" { "Save access" } }
        }
    };
    let title = format!("Access to project {project}");
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}
