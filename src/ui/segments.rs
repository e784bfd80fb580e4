//! Segments: the list, a new one, one's form (name, description, project, constraints) with
//! the flags' strategies that use it. Strategies attach segments on the strategy form.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::html;

use super::constraints::{self, ConstraintRow, describe};
use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::problems::{self, Problems};
use super::session::Signed;
use super::{Ui, csrf};
use crate::admin::Need;
use crate::error::Error;
use crate::model::{Constraint, NewSegment, Permission, Segment, StrategyUse};

/// A segment as typed.
#[derive(Debug, Clone, Default)]
struct Draft {
    name: String,
    description: String,
    project: String,
    constraints: Vec<ConstraintRow>,
}

impl Draft {
    fn of(segment: &Segment) -> Self {
        Draft {
            name: segment.name.clone(),
            description: segment.description.clone().unwrap_or_default(),
            project: segment.project.clone().unwrap_or_default(),
            constraints: segment.constraints.iter().map(ConstraintRow::of).collect(),
        }
    }

    fn from_form(fields: &Fields) -> Self {
        Draft {
            name: fields.get("name").unwrap_or_default().trim().to_owned(),
            description: fields
                .get("description")
                .unwrap_or_default()
                .trim()
                .to_owned(),
            project: fields.get("project").unwrap_or_default().to_owned(),
            constraints: constraints::with_added(constraints::rows_of(fields), fields),
        }
    }

    /// The segment the facade takes, and the rows its constraints came from.
    fn to_segment(&self) -> Result<(NewSegment, Vec<usize>), Error> {
        let (list, from) = constraints::kept(&self.constraints);
        let constraints: Vec<Constraint> = serde_json::from_value(serde_json::Value::Array(list))
            .map_err(|e| {
            Error::invalid_at(
                "constraints",
                format!("the constraints cannot be read: {e}"),
            )
        })?;
        let segment = NewSegment {
            name: self.name.clone(),
            description: Some(self.description.clone()).filter(|d| !d.is_empty()),
            project: Some(self.project.clone()).filter(|p| !p.is_empty()),
            constraints,
        };
        Ok((segment, from))
    }

    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = ["name", "description", "project"]
            .iter()
            .map(|k| (*k).to_owned())
            .collect();
        keys.extend(constraints::field_keys(&self.constraints));
        keys
    }
}

/// `GET /segments`.
pub(crate) async fn list(State(ui): State<Ui>, signed: Signed) -> Response {
    let segments = match ui.admin.segments(signed.caller()).await {
        Ok(s) => s,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        p.hint { "A segment is a named set of constraints that strategies attach: change it here, and every strategy using it follows." }
        p { a href=(ui.url("/segments/new")) { "New segment" } }
        @if segments.is_empty() { p { "There are no segments yet." } }
        @else {
            table {
                caption.visually-hidden { "Segments" }
                thead { tr { th scope="col" { "Segment" } th scope="col" { "Project" } th scope="col" { "Constraints" } th scope="col" { "Description" } } }
                tbody {
                    @for s in &segments {
                        tr {
                            td { a href=(ui.url(&format!("/segments/{}", s.id))) { (s.name) } }
                            td { (s.project.as_deref().unwrap_or("every project")) }
                            td { @for c in &s.constraints { div { (describe(c)) } } }
                            td { (s.description.as_deref().unwrap_or("")) }
                        }
                    }
                }
            }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Segments", body),
        StatusCode::OK,
    )
}

/// The segment form, new (`id` none) or of segment `id` with the strategies using it.
async fn form(
    ui: &Ui,
    signed: &Signed,
    id: Option<i64>,
    draft: &Draft,
    problems: &Problems,
    status: StatusCode,
) -> Response {
    let caller = signed.caller();
    let (context_fields, projects) =
        match tokio::try_join!(ui.admin.context_fields(caller), ui.admin.projects(caller)) {
            Ok(both) => both,
            Err(error) => return layout::error(ui, signed, &error),
        };
    let uses: Vec<StrategyUse> = match id {
        Some(id) => ui
            .admin
            .segment_strategies(caller, id)
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let need = match (id, draft.project.as_str()) {
        (Some(_), _) => Need::root(Permission::UpdateSegment),
        (None, "") => Need::root(Permission::CreateSegment),
        (None, project) => Need::project(Permission::CreateSegment, project),
    };
    let notice = problems::read_only(ui, signed, &[need]).await;
    let action = match id {
        Some(id) => format!("/segments/{id}"),
        None => "/segments/new".to_owned(),
    };
    let invalid = |key: &str| problems.invalid(key);
    let body = html! {
        p { a href=(ui.url("/segments")) { "← segments" } }
        @if let Some(n) = notice { (n) }
        (problems.summary())
        form.editor method="post" action=(ui.url(&action)) novalidate {
            (csrf::input(signed))
            div.grid {
                div {
                    label for="name" { "Name" }
                    input #name type="text" name="name" value=(draft.name)
                        class=[invalid("name").then_some("invalid")] aria-invalid=[invalid("name").then_some("true")]
                        aria-describedby=[problems.described("name")];
                    (problems.at("name"))
                }
                div {
                    label for="project" { "Project" }
                    select #project name="project" aria-describedby=[problems.described("project")] {
                        option value="" selected[draft.project.is_empty()] { "every project" }
                        @for p in &projects { option value=(p.id) selected[p.id == draft.project] { (p.name) } }
                    }
                    (problems.at("project"))
                }
            }
            label for="description" { "Description" }
            textarea #description name="description" rows="2" aria-describedby=[problems.described("description")] { (draft.description) }
            (problems.at("description"))
            (constraints::editor(&draft.constraints, &context_fields, problems))
            div.actions {
                button type="submit" name="action" value="save" { "Save the segment" }
                a href=(ui.url("/segments")) { "Cancel" }
            }
        }
        @if id.is_some() {
            section aria-labelledby="uses" {
                h2 #uses { "Where it is used" }
                @if uses.is_empty() { p.muted { "No strategy uses this segment." } }
                @else {
                    table {
                        caption.visually-hidden { "Strategies using this segment" }
                        thead { tr { th scope="col" { "Feature" } th scope="col" { "Project" } th scope="col" { "Environment" } th scope="col" { "Strategy" } } }
                        tbody {
                            @for u in &uses {
                                tr {
                                    td { a href=(ui.url(&format!("/projects/{}/features/{}#env-{}", seg(&u.project_id), seg(&u.feature_name), u.environment))) { (u.feature_name) } }
                                    td { (u.project_id) }
                                    td { (u.environment) }
                                    td {
                                        a href=(ui.url(&format!("/projects/{}/features/{}/environments/{}/strategies/{}", seg(&u.project_id), seg(&u.feature_name), seg(&u.environment), seg(&u.id)))) {
                                            (u.strategy_name)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let title = match id {
        Some(_) => format!("Segment {}", draft.name),
        None => "New segment".to_owned(),
    };
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}

/// `GET /segments/new`.
pub(crate) async fn new_page(State(ui): State<Ui>, signed: Signed) -> Response {
    form(
        &ui,
        &signed,
        None,
        &Draft::default(),
        &Problems::none(),
        StatusCode::OK,
    )
    .await
}

/// `GET /segments/{id}`.
pub(crate) async fn edit_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path(id): Path<i64>,
) -> Response {
    match ui.admin.segment(signed.caller(), id).await {
        Ok(segment) => {
            form(
                &ui,
                &signed,
                Some(id),
                &Draft::of(&segment),
                &Problems::none(),
                StatusCode::OK,
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST /segments/new`.
pub(crate) async fn create(
    State(ui): State<Ui>,
    signed: Signed,
    parts: Parts,
    fields: Fields,
) -> Response {
    save_form(ui, signed, None, parts, fields).await
}

/// `POST /segments/{id}`.
pub(crate) async fn update(
    State(ui): State<Ui>,
    signed: Signed,
    Path(id): Path<i64>,
    parts: Parts,
    fields: Fields,
) -> Response {
    save_form(ui, signed, Some(id), parts, fields).await
}

async fn save_form(
    ui: Ui,
    signed: Signed,
    id: Option<i64>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let draft = Draft::from_form(&fields);
    if matches!(fields.get("action"), Some("add-constraint" | "refresh")) {
        return form(&ui, &signed, id, &draft, &Problems::none(), StatusCode::OK).await;
    }
    let caller = signed.caller();
    let (result, from) = match draft.to_segment() {
        Ok((segment, from)) => {
            let result = match id {
                Some(id) => ui
                    .admin
                    .update_segment(caller, id, &segment)
                    .await
                    .map(|()| id),
                None => ui
                    .admin
                    .create_segment(caller, &segment)
                    .await
                    .map(|s| s.id),
            };
            (result, from)
        }
        Err(error) => (Err(error), Vec::new()),
    };
    match result {
        Ok(saved) => layout::done(
            &ui,
            &signed,
            format!("Saved the segment {}.", draft.name),
            &format!("/segments/{saved}"),
        ),
        Err(error) if problems::belongs_on_form(&error) => {
            let problems = Problems::of_rows(
                &error,
                &draft.keys(),
                Some("name"),
                &[("constraints", &from)],
            );
            let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
            form(&ui, &signed, id, &draft, &problems, status).await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
