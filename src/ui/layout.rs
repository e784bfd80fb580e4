//! The frame every page shares (head, navigation, sign-out), error pages, and the small
//! helpers the pages build links and forms with.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};

use super::fields::Fields;
use super::session::Signed;
use super::{Ui, assets, csrf};
use crate::error::{Error, ErrorDetail};

/// A page's title and content.
pub(crate) struct Page {
    pub title: String,
    pub body: Markup,
}

impl Page {
    pub(crate) fn new(title: impl Into<String>, body: Markup) -> Self {
        Self {
            title: title.into(),
            body,
        }
    }
}

/// The page in its frame, with `status`.
pub(crate) fn render(
    ui: &Ui,
    signed: Option<&Signed>,
    page: &Page,
    status: StatusCode,
) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (page.title) " · toggle-admin" }
                link rel="stylesheet" href=(assets::url(ui, "ui.css"));
                script src=(assets::url(ui, "ui.js")) defer {}
            }
            body {
                header.top {
                    a.brand href=(ui.url("")) { "toggle-admin" }
                    @if let Some(signed) = signed {
                        nav aria-label="Main" {
                            a href=(ui.url("")) { "Projects" }
                            a href=(ui.url("/search")) { "Search" }
                            a href=(ui.url("/archive")) { "Archive" }
                            a href=(ui.url("/segments")) { "Segments" }
                            a href=(ui.url("/context")) { "Context fields" }
                            a href=(ui.url("/playground")) { "Playground" }
                            a href=(ui.url("/applications")) { "Applications" }
                            a href=(ui.url("/import")) { "Import" }
                            a href=(ui.url("/export")) { "Export" }
                            a href=(ui.url("/keys")) { "API keys" }
                            a href=(ui.url("/events")) { "Event log" }
                        }
                        form.signout method="post" action=(ui.url("/sign-out")) {
                            span.who { "Signed in as " strong { (signed.caller().key().name) } }
                            (csrf::input(signed))
                            button.link type="submit" { "Sign out" }
                        }
                    }
                }
                main {
                    h1 { (page.title) }
                    @if let Some(message) = signed.and_then(|s| s.session.flash.as_deref()) {
                        p.flash role="status" { (message) }
                    }
                    (page.body)
                }
            }
        }
    };
    (status, Html(markup.into_string())).into_response()
}

/// The 403 page of a form that must be refused (see [`csrf::refusal_reason`]), if it must.
pub(crate) fn csrf_check(
    ui: &Ui,
    signed: &Signed,
    headers: &axum::http::HeaderMap,
    fields: &Fields,
) -> Option<Response> {
    csrf_check_token(ui, signed, headers, fields.get(csrf::FIELD))
}

/// [`csrf_check`] for a form read another way (a file upload).
pub(crate) fn csrf_check_token(
    ui: &Ui,
    signed: &Signed,
    headers: &axum::http::HeaderMap,
    token: Option<&str>,
) -> Option<Response> {
    csrf::refusal_reason(signed, headers, token).map(|reason| refusal(ui, Some(signed), reason))
}

/// Say `message` on the next page, and go to `to` (a path under the base path).
pub(crate) fn done(ui: &Ui, signed: &Signed, message: impl Into<String>, to: &str) -> Response {
    ui.sessions.flash(&signed.id, message.into());
    Redirect::to(&ui.url(to)).into_response()
}

/// A confirmation step: `question`, then a form that POSTs to `action` (a path under the base
/// path) with the danger button `button`, or a way back to `cancel`.
pub(crate) fn confirm(
    ui: &Ui,
    signed: &Signed,
    title: String,
    question: Markup,
    action: &str,
    button: &str,
    cancel: &str,
) -> Response {
    let body = html! {
        (question)
        form method="post" action=(ui.url(action)) {
            (csrf::input(signed))
            div.actions {
                button.danger type="submit" { (button) }
                a href=(ui.url(cancel)) { "Cancel" }
            }
        }
    };
    render(ui, Some(signed), &Page::new(title, body), StatusCode::OK)
}

/// A 403 page saying why.
pub(crate) fn refusal(ui: &Ui, signed: Option<&Signed>, reason: &str) -> Response {
    let page = Page::new("Not allowed", html! { p.error role="alert" { (reason) } });
    render(ui, signed, &page, StatusCode::FORBIDDEN)
}

/// A 500 page that says no more than that.
pub(crate) fn failure(ui: &Ui, signed: Option<&Signed>, what: &str) -> Response {
    let page = Page::new(
        "Something went wrong",
        html! { p.error role="alert" { (what) " Nothing was changed; try again later." } },
    );
    render(ui, signed, &page, StatusCode::INTERNAL_SERVER_ERROR)
}

/// The page for a facade error: a key that no longer works is sent to sign in again, a
/// refusal is shown with the 403's reason, and so on.
pub(crate) fn error(ui: &Ui, signed: &Signed, error: &Error) -> Response {
    if matches!(error, Error::AuthenticationRequired { .. }) {
        ui.sessions.end(&signed.id);
        return Redirect::to(&ui.url("/sign-in")).into_response();
    }
    let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    // Maintenance is said as it is: nothing went wrong, changes wait until it ends.
    if matches!(error, Error::Maintenance { .. }) {
        let page = Page::new("In maintenance", error_box(error));
        return render(ui, Some(signed), &page, status);
    }
    if status.is_server_error() {
        tracing::error!(%error, "admin page");
        return failure(ui, Some(signed), "The server could not do that.");
    }
    let title = match status {
        StatusCode::FORBIDDEN => "Not allowed",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::CONFLICT => "Conflict",
        _ => "That did not work",
    };
    let page = Page::new(title, error_box(error));
    render(ui, Some(signed), &page, status)
}

/// An error's message and its details, for the top of a form.
pub(crate) fn error_box(error: &Error) -> Markup {
    let details = error_details(error);
    html! {
        div.error role="alert" {
            p { (error) }
            @if !details.is_empty() {
                ul {
                    @for detail in details {
                        li {
                            @if let Some(path) = &detail.path { code { (path) } ": " }
                            (detail.message)
                        }
                    }
                }
            }
        }
    }
}

/// The details of a validation error (none for other errors).
pub(crate) fn error_details(error: &Error) -> &[ErrorDetail] {
    match error {
        Error::Validation { details, .. } => details,
        _ => &[],
    }
}

/// `text` as one URL path segment: everything but unreserved characters percent-encoded.
pub(crate) fn seg(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `pairs` as a query string (with its `?`; empty values left out).
pub(crate) fn query(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}={}", seg(k), seg(v)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// Links to the previous and next page of a list of `total` items, `per_page` a page, at
/// zero-based page `page`; `link` makes a page's URL.
pub(crate) fn pager(
    page: usize,
    per_page: usize,
    total: usize,
    link: impl Fn(usize) -> String,
) -> Markup {
    let pages = total.div_ceil(per_page.max(1)).max(1);
    html! {
        nav.pager aria-label="Pages" {
            @if page > 0 {
                a rel="prev" href=(link(page - 1)) { "← Previous" }
            }
            span { "Page " (page + 1) " of " (pages) " (" (total) " in all)" }
            @if page + 1 < pages {
                a rel="next" href=(link(page + 1)) { "Next →" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_queries_are_encoded() {
        assert_eq!(seg("a b/c?d"), "a%20b%2Fc%3Fd");
        assert_eq!(seg("é"), "%C3%A9");
        assert_eq!(query(&[("q", "x&y"), ("page", "")]), "?q=x%26y");
        assert_eq!(query(&[("q", "")]), "");
    }
}
