//! The playground: a context (app name, user id, session id, remote address, properties as
//! `key=value` lines) and an environment, and for every flag whether it is enabled, which
//! variant it gives, and why: off in the environment, a parent not satisfied, or which
//! strategy let the context in, or each strategy's failing constraint or segment. The
//! answers are the facade's [`playground_page`](crate::ToggleAdmin::playground_page) (the
//! frontend API's engine; the name filter applied and only the shown page explained there);
//! the page only shows them. It changes nothing, so its form is a `GET`.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::constraints::describe;
use super::layout::{self, Page, pager, query};
use super::problems::Problems;
use super::session::Signed;
use super::{Ui, problems};
use crate::model::{
    Outcome, PlaygroundFeature, PlaygroundPage, PlaygroundPageQuery, PlaygroundProjects,
    PlaygroundRequest, PlaygroundStrategy,
};

/// Flags a page.
const PER_PAGE: usize = 50;

/// The page's query: the context, and which flags to show.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct PlaygroundQuery {
    #[serde(default)]
    environment: String,
    #[serde(default)]
    project: String,
    #[serde(default, rename = "appName")]
    app_name: Option<String>,
    #[serde(default, rename = "userId")]
    user_id: String,
    #[serde(default, rename = "sessionId")]
    session_id: String,
    #[serde(default, rename = "remoteAddress")]
    remote_address: String,
    #[serde(default)]
    properties: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<String>,
}

/// The facade's fields, by the keys its paths give (`/context/properties/country`).
fn keys() -> Vec<String> {
    [
        "environment",
        "projects",
        "context",
        "context.appName",
        "context.userId",
        "context.sessionId",
        "context.remoteAddress",
        "context.properties",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect()
}

impl PlaygroundQuery {
    fn app_name(&self) -> &str {
        self.app_name.as_deref().unwrap_or("playground")
    }

    /// The page asked for, from 0.
    fn page(&self) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1)
            - 1
    }

    /// The flags the query shows: those whose name holds `q`, its page of them.
    fn window(&self) -> PlaygroundPageQuery {
        PlaygroundPageQuery {
            search: Some(self.q.clone()),
            offset: self.page().saturating_mul(PER_PAGE),
            limit: PER_PAGE,
        }
    }

    /// The request the query describes, or the problem of its properties.
    fn request(&self) -> Result<PlaygroundRequest, Problems> {
        let mut context = Map::new();
        let mut put = |name: &str, value: &str| {
            if !value.trim().is_empty() {
                context.insert(name.to_owned(), Value::String(value.trim().to_owned()));
            }
        };
        put("appName", self.app_name());
        put("userId", &self.user_id);
        put("sessionId", &self.session_id);
        put("remoteAddress", &self.remote_address);
        let mut properties = Map::new();
        for (number, line) in self.properties.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            match line.split_once('=') {
                Some((name, value)) if !name.trim().is_empty() => {
                    properties.insert(
                        name.trim().to_owned(),
                        Value::String(value.trim().to_owned()),
                    );
                }
                _ => {
                    return Err(Problems::field(
                        "context.properties",
                        format!("line {} is not key=value: “{line}”", number + 1),
                    ));
                }
            }
        }
        if !properties.is_empty() {
            context.insert("properties".to_owned(), Value::Object(properties));
        }
        let projects = if self.project.is_empty() {
            PlaygroundProjects::All
        } else {
            PlaygroundProjects::Only(vec![self.project.clone()])
        };
        Ok(PlaygroundRequest {
            environment: self.environment.clone(),
            projects: Some(projects),
            context,
        })
    }
}

/// `GET /playground`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Query(params): Query<PlaygroundQuery>,
) -> Response {
    let caller = signed.caller();
    let (environments, projects) =
        match tokio::try_join!(ui.admin.environments(caller), ui.admin.projects(caller)) {
            Ok(both) => both,
            Err(error) => return layout::error(&ui, &signed, &error),
        };
    let mut status = StatusCode::OK;
    let mut problems = Problems::none();
    let mut answer = None;
    if !params.environment.is_empty() {
        match params.request() {
            Err(found) => {
                problems = found;
                status = StatusCode::BAD_REQUEST;
            }
            Ok(request) => match ui
                .admin
                .playground_page(caller, &request, &params.window())
                .await
            {
                Ok(found) => answer = Some(found),
                Err(error) if problems::belongs_on_form(&error) => {
                    problems = Problems::of(&error, &keys(), None);
                    status =
                        StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
                }
                Err(error) => return layout::error(&ui, &signed, &error),
            },
        }
    }
    let field = |key: &str, name: &str, label: &str, value: &str| {
        html! {
            div {
                label for=(key) { (label) }
                input type="text" id=(key) name=(name) value=(value)
                    class=[problems.invalid(key).then_some("invalid")]
                    aria-invalid=[problems.invalid(key).then_some("true")]
                    aria-describedby=[problems.described(key)];
                (problems.at(key))
            }
        }
    };
    let base = ui.url("/playground");
    let body = html! {
        p.hint { "What every flag gives a context, as SDKs would see it, and why. Nothing is changed." }
        (problems.summary())
        form method="get" action=(base) {
            div.grid {
                div {
                    label for="environment" { "Environment" }
                    select #environment name="environment" aria-describedby=[problems.described("environment")] {
                        @for e in &environments {
                            option value=(e.name) selected[e.name == params.environment] { (e.name) }
                        }
                    }
                    (problems.at("environment"))
                }
                div {
                    label for="projects" { "Project" }
                    select #projects name="project" aria-describedby=[problems.described("projects")] {
                        option value="" selected[params.project.is_empty()] { "every project" }
                        @for p in &projects { option value=(p.id) selected[p.id == params.project] { (p.name) } }
                    }
                    (problems.at("projects"))
                }
                (field("context.appName", "appName", "App name", params.app_name()))
                (field("context.userId", "userId", "User id", &params.user_id))
                (field("context.sessionId", "sessionId", "Session id", &params.session_id))
                (field("context.remoteAddress", "remoteAddress", "Remote address", &params.remote_address))
            }
            label for="context.properties" { "Properties (one key=value a line)" }
            textarea id="context.properties" name="properties" rows="3"
                class=[problems.invalid("context.properties").then_some("invalid")]
                aria-invalid=[problems.invalid("context.properties").then_some("true")]
                aria-describedby=[problems.described("context.properties")] { (params.properties) }
            (problems.at("context.properties"))
            div.search {
                div {
                    label for="q" { "Only flags whose name holds" }
                    input #q type="search" name="q" value=(params.q);
                }
                button type="submit" { "Evaluate" }
            }
        }
        @if let Some(answer) = &answer { (results(&params, &base, answer)) }
    };
    layout::render(&ui, Some(&signed), &Page::new("Playground", body), status)
}

fn results(params: &PlaygroundQuery, base: &str, answer: &PlaygroundPage) -> Markup {
    let page = params.page();
    let link = |p: usize| {
        format!(
            "{base}{}",
            query(&[
                ("environment", &params.environment),
                ("project", &params.project),
                ("appName", params.app_name()),
                ("userId", &params.user_id),
                ("sessionId", &params.session_id),
                ("remoteAddress", &params.remote_address),
                ("properties", &params.properties),
                ("q", &params.q),
                ("page", &(p + 1).to_string()),
            ])
        )
    };
    html! {
        h2 #results { "In " (params.environment) ": " (answer.enabled) " of " (answer.total) " flags enabled" }
        (pager(page, PER_PAGE, answer.total, link))
        table.playground {
            caption.visually-hidden { "Flags evaluated for the context" }
            thead { tr {
                th scope="col" { "Flag" } th scope="col" { "Project" } th scope="col" { "Enabled" }
                th scope="col" { "Variant" } th scope="col" { "Why" }
            } }
            tbody {
                @for f in &answer.features {
                    tr data-flag=(f.name) {
                        td { (f.name) }
                        td { (f.project_id) }
                        td.verdict { @if f.is_enabled { strong { "enabled" } } @else { "disabled" } }
                        td.variant {
                            (f.variant.name)
                            @if let Some(payload) = &f.variant.payload {
                                br; code { (payload.payload_type) ": " (payload.value) }
                            }
                        }
                        td { (why(f)) }
                    }
                }
            }
        }
        (pager(page, PER_PAGE, answer.total, link))
    }
}

/// Why the flag gives what it gives: in a line, then each strategy's result.
fn why(f: &PlaygroundFeature) -> Markup {
    let decided = f
        .strategies
        .data
        .iter()
        .position(|s| !s.disabled && s.result.enabled == Outcome::Decided(true));
    let line = if !f.is_enabled_in_current_environment {
        "It is off in this environment.".to_owned()
    } else if f.has_unsatisfied_dependency {
        "A flag it depends on does not give what it needs.".to_owned()
    } else if let Some(i) = decided {
        let s = f.strategies.data.get(i);
        format!(
            "Strategy {} ({}) lets this context in.",
            i + 1,
            s.map_or("", |s| s.name.as_str())
        )
    } else if f.strategies.data.iter().all(|s| s.disabled) {
        "It has no active strategy.".to_owned()
    } else if f.strategies.result == Outcome::Unknown {
        "A custom strategy might let it in; the server cannot tell.".to_owned()
    } else {
        let reasons: Vec<String> = f
            .strategies
            .data
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.disabled)
            .map(|(i, s)| format!("strategy {}: {}", i + 1, left_out_by(s)))
            .collect();
        format!("No strategy lets this context in ({}).", reasons.join("; "))
    };
    html! {
        p.why { (line) }
        @if !f.strategies.data.is_empty() {
            details {
                summary { "Each strategy" }
                ol { @for s in &f.strategies.data { li { (strategy(s)) } } }
            }
        }
    }
}

/// What keeps a strategy from letting the context in: its first failing constraint or
/// segment, else its own rule.
fn left_out_by(s: &PlaygroundStrategy) -> String {
    if let Some(c) = s.constraints.iter().find(|c| !c.result) {
        return format!("{} fails", describe(&c.constraint));
    }
    if let Some(g) = s.segments.iter().find(|g| !g.result) {
        return format!("not in segment {}", g.name);
    }
    format!("its {} rule leaves it out", s.name)
}

fn strategy(s: &PlaygroundStrategy) -> Markup {
    let verdict = match (s.disabled, s.result.enabled) {
        (true, _) => "disabled, not evaluated",
        (false, Outcome::Decided(true)) => "lets it in",
        (false, Outcome::Decided(false)) => "does not let it in",
        (false, Outcome::Unknown) => "unknown (a custom strategy)",
    };
    let mark = |held: bool| if held { "✓ holds" } else { "✗ fails" };
    html! {
        (s.name) @if let Some(title) = s.title.as_ref().filter(|t| !t.is_empty()) { " “" (title) "”" }
        ": " (verdict)
        ul {
            @for c in &s.constraints { li { (describe(&c.constraint)) " — " (mark(c.result)) } }
            @for g in &s.segments {
                li { "segment " (g.name) " — " (mark(g.result)) }
            }
            @if let Some(v) = &s.result.variant { li { "variant " (v.name) } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_key_value_lines() {
        let params = PlaygroundQuery {
            environment: "production".into(),
            user_id: " u1 ".into(),
            properties: "country = NO\n\nplan=pro".into(),
            ..PlaygroundQuery::default()
        };
        let request = params.request().unwrap();
        assert_eq!(request.context["userId"], "u1");
        assert_eq!(request.context["appName"], "playground");
        assert_eq!(request.context["properties"]["country"], "NO");
        assert_eq!(request.context["properties"]["plan"], "pro");
        let bad = PlaygroundQuery {
            properties: "country".into(),
            ..params
        };
        assert!(bad.request().is_err());
    }
}
