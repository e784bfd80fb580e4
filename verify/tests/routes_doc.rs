//! `docs/routes.md` lists every route the server serves, and nothing else.
//!
//! The routes served are taken from the router itself:
//!
//! * every operation of the OpenAPI document (`toggle_admin::http::openapi()`), which the
//!   handlers' `utoipa::path` annotations declare for both the router and the document;
//! * the routes declared outside it, found in the library's source: every `.route("…", …)`
//!   call under `src/` (those of `src/ui/` under the admin page's default base path,
//!   `/admin`), plus the Prometheus endpoint (`http::PROMETHEUS_PATH`). Which methods each
//!   such path answers is asked of the router (the `Allow` header of a 405), built as the
//!   server builds it: health routes, metrics and the admin page included.
//!
//! Every line of `docs/routes.md` is checked against the same router, so a route removed
//! or renamed fails here too. `HEAD` (answered wherever `GET` is) and `OPTIONS` (the
//! frontend API's CORS preflights) are no routes of their own; catch-alls that answer the
//! JSON 404 (`/api/{*rest}`) serve no method.
//!
//! The document's format, one route a line in any of its tables:
//!
//! ```text
//! | GET | `/api/admin/events` | The event log, newest first. |
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use metrics_exporter_prometheus::PrometheusBuilder;
use serde_json::Value;
use toggle_admin::http::RouterConfig;
use toggle_admin::{MemoryStore, ToggleAdmin};
use tower::ServiceExt;

/// The methods a route may be listed with.
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// A route: method and path, the path in OpenAPI's `{param}` form.
type Route = (String, String);

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("verify/ has a parent")
        .to_path_buf()
}

/// The router as the server serves it: the admin API with `/health`, `/ready` and the
/// Prometheus endpoint, and the admin page at its default path.
fn app() -> Router {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let handle = PrometheusBuilder::new().build_recorder().handle();
    RouterConfig::new()
        .health_routes(true)
        .prometheus(handle)
        .merge(toggle_admin::ui::router(admin.clone()))
        .router(admin)
}

/// `path` with every `{param}` replaced by a value that routes (`1`).
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "1"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The methods the router answers at `path`: the `Allow` header of the 405 that a method no
/// route uses (`TRACE`) gets; none when nothing is routed there (a 404).
async fn methods_at(app: &Router, path: &str) -> BTreeSet<String> {
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::TRACE)
                .uri(concrete(path))
                .body(Body::empty())
                .expect("a request"),
        )
        .await
        .expect("the router answers");
    if response.status() != StatusCode::METHOD_NOT_ALLOWED {
        return BTreeSet::new();
    }
    let allow = response
        .headers()
        .get(header::ALLOW)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    allow
        .split(',')
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| METHODS.contains(&m.as_str()))
        .collect()
}

/// Every operation of the OpenAPI document, with its summary (for the line to add).
fn openapi_routes() -> BTreeMap<Route, String> {
    let document = serde_json::to_value(toggle_admin::http::openapi()).expect("the document");
    let mut routes = BTreeMap::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("a path item") {
            let method = method.to_ascii_uppercase();
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            routes.insert((method, path.clone()), first_sentence(operation));
        }
    }
    routes
}

/// The first sentence of an operation's documentation (its handler's rustdoc: utoipa takes
/// the first line as the summary, the rest as the description), for its line in the table.
fn first_sentence(operation: &Value) -> String {
    let summary = operation["summary"].as_str().unwrap_or_default();
    let description = operation["description"].as_str().unwrap_or_default();
    let rest = description.strip_prefix(summary).unwrap_or(description);
    let text = format!("{summary} {rest}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let sentence = match text.find(". ") {
        Some(end) => &text[..=end],
        None => text.as_str(),
    };
    if sentence.is_empty() {
        "…".to_owned()
    } else {
        sentence.replace('|', "\\|")
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The paths of the `.route("…", …)` calls in the library's source (comments skipped), each
/// with the file that declares it; those of the admin page under its default base path.
fn source_route_paths() -> BTreeMap<String, String> {
    let root = repository();
    let mut paths = BTreeMap::new();
    for file in rust_files(&root.join("src")) {
        let relative = file
            .strip_prefix(&root)
            .expect("under the repository")
            .display()
            .to_string();
        let prefix = if relative.starts_with("src/ui/") {
            toggle_admin::ui::DEFAULT_BASE_PATH
        } else {
            ""
        };
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let code: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut rest = code.as_str();
        while let Some(at) = rest.find(".route(") {
            rest = &rest[at + ".route(".len()..];
            let literal = rest.trim_start();
            if let Some(literal) = literal.strip_prefix('"')
                && let Some(end) = literal.find('"')
            {
                let path = match &literal[..end] {
                    "/" if !prefix.is_empty() => prefix.to_owned(),
                    path => format!("{prefix}{path}"),
                };
                paths.entry(path).or_insert_with(|| relative.clone());
            }
        }
    }
    paths.insert(
        toggle_admin::http::PROMETHEUS_PATH.to_owned(),
        "src/http/operations.rs".to_owned(),
    );
    paths
}

/// The routes `docs/routes.md` lists (`| METHOD | `/path` | … |`), in its order, with the
/// line each is on.
fn documented_routes(text: &str) -> Vec<(Route, usize)> {
    let mut routes = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line.trim().split('|').map(str::trim).collect();
        // `| a | b | c |` splits into ["", a, b, c, ""].
        if cells.len() < 4 || !cells[0].is_empty() {
            continue;
        }
        let method = cells[1];
        if !METHODS.contains(&method) {
            continue;
        }
        let path = cells[2].trim_matches('`').to_owned();
        routes.push(((method.to_owned(), path), number + 1));
    }
    routes
}

fn line_for((method, path): &Route, what: &str) -> String {
    format!("| {method} | `{path}` | {what} |")
}

#[tokio::test]
async fn docs_routes_md_lists_every_route_the_router_serves() {
    let doc_path = repository().join("docs/routes.md");
    let text = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    let documented = documented_routes(&text);
    assert!(
        !documented.is_empty(),
        "docs/routes.md lists no route (a line is `| GET | `/path` | what it does |`)"
    );

    let app = app();
    let openapi = openapi_routes();
    let in_source = source_route_paths();

    // What the router serves: the document's operations, and the methods the router
    // answers at every path declared outside it or listed in docs/routes.md.
    let mut served: BTreeMap<Route, String> = openapi.clone();
    let mut candidates: BTreeMap<String, String> = in_source
        .iter()
        .map(|(path, file)| (path.clone(), format!("declared in {file}")))
        .collect();
    for ((_, path), _) in &documented {
        candidates
            .entry(path.clone())
            .or_insert_with(|| "listed in docs/routes.md".to_owned());
    }
    for (path, origin) in &candidates {
        for method in methods_at(&app, path).await {
            served
                .entry((method, path.clone()))
                .or_insert_with(|| format!("… (outside the OpenAPI document, {origin})"));
        }
    }

    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (route, line) in &documented {
        if !seen.insert(route.clone()) {
            problems.push(format!(
                "docs/routes.md line {line} lists {} {} a second time: remove the line `{}`",
                route.0,
                route.1,
                line_for(route, "…")
            ));
        }
    }
    for (route, line) in &documented {
        if !served.contains_key(route) {
            problems.push(format!(
                "docs/routes.md line {line} lists {} {}, which the router does not serve: \
                 remove the line `{}` (or correct its method or path; paths are written \
                 with OpenAPI's `{{param}}`)",
                route.0,
                route.1,
                line_for(route, "…")
            ));
        }
    }
    for (route, what) in &served {
        if !seen.contains(route) {
            problems.push(format!(
                "docs/routes.md lacks {} {}, which the router serves: add the line\n    {}\n  \
                 to the table of its area (with what the route does)",
                route.0,
                route.1,
                line_for(route, what)
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/routes.md does not match the routes the router serves ({} routes served, {} \
         listed):\n{}",
        served.len(),
        documented.len(),
        problems.join("\n")
    );
}
