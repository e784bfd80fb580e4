//! Sign-in and sign-out: the pages that start and end a session.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::fields::Fields;
use super::layout::{self, Page};
use super::session::{Signed, cookie, secure};
use super::{Ui, csrf};
use crate::model::KeyAccess;

/// `GET /sign-in`.
pub(crate) async fn sign_in_page(State(ui): State<Ui>) -> Response {
    layout::render(&ui, None, &sign_in_form(&ui, None), StatusCode::OK)
}

fn sign_in_form(ui: &Ui, problem: Option<&str>) -> Page {
    Page::new(
        "Sign in",
        html! {
            @if let Some(problem) = problem {
                p.error role="alert" { (problem) }
            }
            form.narrow method="post" action=(ui.url("/sign-in")) {
                label for="key" { "API key or user key" }
                input #key type="password" name="key" required autocomplete="off" autofocus;
                p.hint { "An admin key, a key with grants, or a key that acts as a user. It is checked once and kept only on the server." }
                button type="submit" { "Sign in" }
            }
        },
    )
}

/// `POST /sign-in`: check the key, start a session, set its cookie.
pub(crate) async fn sign_in(
    State(ui): State<Ui>,
    parts: axum::http::request::Parts,
    fields: Fields,
) -> Response {
    if csrf::cross_site(&parts.headers) {
        return layout::refusal(&ui, None, csrf::CROSS_SITE);
    }
    let key = fields.get("key").unwrap_or_default().trim().to_owned();
    let problem = match ui.admin.authenticate(Some(&key)).await {
        Ok(caller) if matches!(caller.key().access, KeyAccess::Client { .. }) => {
            "A client key cannot sign in here: use an admin key, a key with grants or a user key."
        }
        Ok(caller) => {
            let Some(id) = ui.sessions.start(caller) else {
                return layout::failure(&ui, None, "No random session id could be made.");
            };
            let secure = secure(&ui, parts.uri.scheme_str(), &parts.headers);
            let mut response = Redirect::to(&ui.url("")).into_response();
            if let Some(value) = cookie(&ui, &id, None, secure) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            return response;
        }
        Err(_) => "That key is unknown, revoked or expired.",
    };
    layout::render(
        &ui,
        None,
        &sign_in_form(&ui, Some(problem)),
        StatusCode::UNAUTHORIZED,
    )
}

/// `POST /sign-out`: end the session, clear its cookie.
pub(crate) async fn sign_out(
    State(ui): State<Ui>,
    signed: Signed,
    parts: axum::http::request::Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    ui.sessions.end(&signed.id);
    let secure = secure(&ui, parts.uri.scheme_str(), &parts.headers);
    let mut response = Redirect::to(&ui.url("/sign-in")).into_response();
    if let Some(value) = cookie(&ui, "", Some(0), secure) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
