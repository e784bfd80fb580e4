//! The page's static files, compiled into the binary: served with an ETag (a hash of the
//! content) and a year-long `immutable` cache, at URLs that carry the ETag, so a new build's
//! files are fetched anew and an old one's never again.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::Ui;

/// One static file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
    etag: String,
}

static ASSETS: LazyLock<Vec<Asset>> = LazyLock::new(|| {
    [
        (
            "ui.css",
            "text/css; charset=utf-8",
            include_str!("static/ui.css"),
        ),
        (
            "ui.js",
            "text/javascript; charset=utf-8",
            include_str!("static/ui.js"),
        ),
    ]
    .into_iter()
    .map(|(name, content_type, body)| {
        let digest = Sha256::digest(body.as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        Asset {
            name,
            content_type,
            body,
            etag: format!("\"{hex}\""),
        }
    })
    .collect()
});

fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The URL of the static file `name`, with its ETag as version.
pub(crate) fn url(ui: &Ui, name: &str) -> String {
    let version = find(name).map_or("", |a| a.etag.trim_matches('"'));
    ui.url(&format!("/static/{name}?v={version}"))
}

/// `GET /static/{file}`.
pub(crate) async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = find(&file) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let cache = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ),
        (
            header::ETAG,
            HeaderValue::from_str(&asset.etag).unwrap_or(HeaderValue::from_static("\"\"")),
        ),
    ];
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|tag| tag.trim() == asset.etag || tag.trim() == "*")
        });
    if unchanged {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        cache,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        )],
        asset.body,
    )
        .into_response()
}
