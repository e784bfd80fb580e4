//! What a request leaves in the log: its tracing span, with secrets kept out.

/// The tracing span of a request: method and path, as tower-http's default, except that the
/// `{token}` of `/api/admin/api-tokens/{token}` is shown only when it is a key's public id
/// (a UUID). A key may be revoked by its secret there, and secrets stay out of logs.
pub(crate) fn request_span<B>(request: &axum::http::Request<B>) -> tracing::Span {
    const PREFIX: &str = "/api/admin/api-tokens/";
    let path = request.uri().path();
    let shown = match path.strip_prefix(PREFIX) {
        Some(token) if uuid::Uuid::parse_str(token).is_err() => format!("{PREFIX}<secret>"),
        _ => request.uri().to_string(),
    };
    tracing::debug_span!(
        "request",
        method = %request.method(),
        uri = %shown,
        version = ?request.version(),
    )
}
