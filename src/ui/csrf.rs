//! Cross-site request forgery: every state-changing form carries its session's token, and a
//! POST whose browser says it came from another site is refused before the token is looked at.

use axum::http::{HeaderMap, header};

use super::session::Signed;

/// The name of the token's hidden form field.
pub(crate) const FIELD: &str = "csrf";

/// The hidden field with the session's CSRF token, for every form that changes something.
pub(crate) fn input(signed: &Signed) -> maud::Markup {
    maud::html! { input type="hidden" name=(FIELD) value=(signed.session.csrf); }
}

/// What a refused form is told.
pub(crate) const REFUSED: &str = "This form has expired or did not come from this page (its security token does not match your session). Reload the page and try again.";

/// What a cross-site POST is told.
pub(crate) const CROSS_SITE: &str =
    "This request came from another site, so it was refused. Use the form on this page.";

/// Whether the browser says the request came from another site: `Sec-Fetch-Site:
/// cross-site`, or an `Origin` whose host is not the `Host` the request was sent to.
pub(crate) fn cross_site(headers: &HeaderMap) -> bool {
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("cross-site"));
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let foreign_origin = match (origin, host) {
        // `null` says nothing (a privacy setting may send it for any origin): the token decides.
        (Some("null"), _) => false,
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .map(|(_, rest)| rest)
            .is_none_or(|authority| !authority.eq_ignore_ascii_case(host)),
        _ => false,
    };
    fetch_site || foreign_origin
}

/// Why a form must be refused, if it must: it came from another site, or its token is not
/// the session's. `token` is the form's `csrf` field.
pub(crate) fn refusal_reason(
    signed: &Signed,
    headers: &HeaderMap,
    token: Option<&str>,
) -> Option<&'static str> {
    if cross_site(headers) {
        return Some(CROSS_SITE);
    }
    match token {
        Some(token) if equal(token.as_bytes(), signed.session.csrf.as_bytes()) => None,
        _ => Some(REFUSED),
    }
}

/// Compare in time that depends on the lengths only.
fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (
            super::super::session::random_token().unwrap(),
            super::super::session::random_token().unwrap(),
        );
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(equal(a.as_bytes(), a.as_bytes()));
        assert!(!equal(a.as_bytes(), b.as_bytes()));
        assert!(!equal(a.as_bytes(), &a.as_bytes()[..63]));
    }

    #[test]
    fn another_origin_is_cross_site() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("flags.example:8080"));
        assert!(!cross_site(&headers));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://flags.example:8080"),
        );
        assert!(!cross_site(&headers));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(cross_site(&headers));
        headers.insert(header::ORIGIN, HeaderValue::from_static("null"));
        assert!(!cross_site(&headers));
        headers.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(cross_site(&headers));
    }
}
