//! API keys: the list (never a secret), creating one (its secret shown once, on the page
//! that answers the form, never in a URL), revoking one.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::session::Signed;
use super::{Ui, csrf};
use crate::auth::NewApiKey;
use crate::error::Error;
use crate::model::KeyAccess;

fn access_text(access: &KeyAccess) -> String {
    match access {
        KeyAccess::Admin => "admin".to_owned(),
        KeyAccess::Grants { grants } => format!("{} grant(s)", grants.len()),
        KeyAccess::User { user_id } => format!("acts as user {user_id}"),
        KeyAccess::Client {
            token_type,
            projects,
            environment,
        } => format!(
            "{} · {} · {}",
            token_type.as_str(),
            projects.join(", "),
            environment
        ),
    }
}

/// `GET /keys`.
pub(crate) async fn page(State(ui): State<Ui>, signed: Signed) -> Response {
    render(&ui, &signed, None, StatusCode::OK).await
}

async fn render(ui: &Ui, signed: &Signed, outcome: Option<Markup>, status: StatusCode) -> Response {
    let keys = match ui.admin.api_keys(signed.caller()).await {
        Ok(k) => k,
        Err(error) => return layout::error(ui, signed, &error),
    };
    let own = signed.caller().key().id;
    let body = html! {
        @if let Some(outcome) = outcome { (outcome) }
        h2 { "Create a key" }
        form.narrow method="post" action=(ui.url("/keys")) {
            (csrf::input(signed))
            label for="name" { "Name" }
            input #name type="text" name="name" required maxlength="255";
            label for="kind" { "Kind" }
            select #kind name="kind" {
                option value="admin" { "Admin: every permission" }
                option value="user" { "Acts as a user (their roles)" }
                option value="client" { "Client (SDK) key" }
            }
            label for="user" { "User id (for a key that acts as a user)" }
            input #user type="text" inputmode="numeric" name="user";
            label for="environment" { "Environment (for a client key)" }
            input #environment type="text" name="environment" value="development";
            label for="projects" { "Projects (for a client key; * for all)" }
            input #projects type="text" name="projects" value="*";
            div.actions { button type="submit" { "Create key" } }
        }
        h2 { "Keys" }
        table {
            thead { tr { th scope="col" { "Name" } th scope="col" { "Access" } th scope="col" { "Created" } th scope="col" { "Expires" } th scope="col" { span.visually-hidden { "Actions" } } } }
            tbody {
                @for key in &keys {
                    tr {
                        td { (key.name) @if key.id == own { " " span.tag { "this session's key" } } }
                        td { (access_text(&key.access)) }
                        td { (key.created_at.format("%Y-%m-%d %H:%M UTC")) }
                        td { @match &key.expires_at { Some(at) => { (at.format("%Y-%m-%d %H:%M UTC")) } None => "never" } }
                        td {
                            form.inline method="post" action=(ui.url(&format!("/keys/{}/revoke", seg(&key.id.to_string())))) {
                                (csrf::input(signed))
                                button.danger type="submit" aria-label=(format!("Revoke {}", key.name)) { "Revoke" }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::render(ui, Some(signed), &Page::new("API keys", body), status)
}

/// `POST /keys`: create a key and show its secret, once.
pub(crate) async fn create(
    State(ui): State<Ui>,
    signed: Signed,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let name = fields.get("name").unwrap_or_default().trim().to_owned();
    let access = match fields.get("kind") {
        Some("user") => match fields.get("user").unwrap_or_default().trim().parse::<i64>() {
            Ok(user_id) => KeyAccess::User { user_id },
            Err(_) => {
                let error = Error::invalid_at(
                    "user",
                    "A key that acts as a user needs the user's id (a number).",
                );
                return render(
                    &ui,
                    &signed,
                    Some(layout::error_box(&error)),
                    StatusCode::BAD_REQUEST,
                )
                .await;
            }
        },
        Some("client") => KeyAccess::client(
            fields
                .get("projects")
                .unwrap_or("*")
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect(),
            fields.get("environment").unwrap_or_default().trim(),
        ),
        _ => KeyAccess::Admin,
    };
    match ui
        .admin
        .create_api_key(signed.caller(), &name, access)
        .await
    {
        Ok(NewApiKey { info, secret }) => {
            let outcome = html! {
                div.flash role="status" {
                    p { "Created the key " strong { (info.name) } ". Copy its secret now: it is shown only this once." }
                    p { label for="secret" { "Secret" } }
                    input #secret.secret type="text" readonly value=(secret) size="80";
                }
            };
            render(&ui, &signed, Some(outcome), StatusCode::CREATED).await
        }
        Err(error) if error.status() == 400 || error.status() == 404 => {
            render(
                &ui,
                &signed,
                Some(layout::error_box(&error)),
                StatusCode::BAD_REQUEST,
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST /keys/{id}/revoke`.
pub(crate) async fn revoke(
    State(ui): State<Ui>,
    signed: Signed,
    Path(id): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let Ok(id) = uuid::Uuid::parse_str(&id) else {
        let error = Error::invalid_at("id", "Not a key id.");
        return layout::error(&ui, &signed, &error);
    };
    match ui.admin.revoke_api_key(signed.caller(), id).await {
        Ok(()) => {
            ui.sessions.flash(&signed.id, "Revoked the key.".to_owned());
            Redirect::to(&ui.url("/keys")).into_response()
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
