//! Context fields: the list (built-ins included), a new one, and one's form (description,
//! stickiness, sort order, legal values with their descriptions) with the flags' strategies
//! whose constraints use it. Built-in fields are shown, not edited (the facade refuses).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::{Markup, html};

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::problems::{self, Problems};
use super::session::Signed;
use super::{Ui, csrf};
use crate::admin::Need;
use crate::import::is_builtin_context_field;
use crate::model::{ContextField, ContextFieldUpdate, LegalValue, Permission};

/// At most this many legal values are read from a form.
const MAX_VALUES: usize = 1000;

/// A context field as typed.
#[derive(Debug, Clone, Default)]
struct Draft {
    name: String,
    description: String,
    stickiness: bool,
    sort_order: String,
    /// (value, description, remove)
    legal: Vec<(String, String, bool)>,
}

impl Draft {
    fn of(field: &ContextField) -> Self {
        Draft {
            name: field.name.clone(),
            description: field.description.clone().flatten().unwrap_or_default(),
            stickiness: field.stickiness == Some(true),
            sort_order: field.sort_order.unwrap_or(0).to_string(),
            legal: field
                .legal_values
                .iter()
                .flatten()
                .map(|l| {
                    (
                        l.value.clone(),
                        l.description.clone().unwrap_or_default(),
                        false,
                    )
                })
                .collect(),
        }
    }

    fn from_form(fields: &Fields) -> Self {
        let count = fields
            .get("legalValues.count")
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
            .min(MAX_VALUES);
        let mut legal: Vec<(String, String, bool)> = (0..count)
            .map(|i| {
                let get = |what: &str| {
                    fields
                        .get(&format!("legalValues.{i}.{what}"))
                        .unwrap_or_default()
                        .trim()
                        .to_owned()
                };
                (get("value"), get("description"), !get("remove").is_empty())
            })
            .collect();
        if fields.get("action") == Some("add-value") {
            legal.push(Default::default());
        }
        Draft {
            name: fields.get("name").unwrap_or_default().trim().to_owned(),
            description: fields
                .get("description")
                .unwrap_or_default()
                .trim()
                .to_owned(),
            stickiness: fields.get("stickiness").is_some(),
            sort_order: fields.get("sortOrder").unwrap_or("0").trim().to_owned(),
            legal,
        }
    }

    /// The legal values kept (neither removed nor blank), and the rows they came from.
    fn legal_values(&self) -> (Vec<LegalValue>, Vec<usize>) {
        self.legal
            .iter()
            .enumerate()
            .filter(|(_, (value, description, remove))| {
                let blank = value.is_empty() && description.is_empty();
                !(*remove || blank)
            })
            .map(|(i, (value, description, _))| {
                let legal = LegalValue {
                    value: value.clone(),
                    description: Some(description.clone()).filter(|d| !d.is_empty()),
                };
                (legal, i)
            })
            .unzip()
    }

    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = [
            "name",
            "description",
            "stickiness",
            "sortOrder",
            "legalValues",
        ]
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
        for i in 0..self.legal.len() {
            keys.push(format!("legalValues.{i}.value"));
            keys.push(format!("legalValues.{i}.description"));
        }
        keys
    }
}

/// `GET /context`.
pub(crate) async fn list(State(ui): State<Ui>, signed: Signed) -> Response {
    let fields = match ui.admin.context_fields(signed.caller()).await {
        Ok(f) => f,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        p.hint { "What constraints test and stickiness follows. Fields with legal values offer them as checkboxes on the constraint editor." }
        p { a href=(ui.url("/context/new")) { "New context field" } }
        table {
            caption.visually-hidden { "Context fields" }
            thead { tr {
                th scope="col" { "Field" } th scope="col" { "Description" } th scope="col" { "Stickiness" } th scope="col" { "Legal values" }
            } }
            tbody {
                @for f in &fields {
                    tr {
                        td {
                            a href=(ui.url(&format!("/context/{}", seg(&f.name)))) { (f.name) }
                            @if is_builtin_context_field(&f.name) { " " span.tag { "built-in" } }
                        }
                        td { (f.description.clone().flatten().unwrap_or_default()) }
                        td { @if f.stickiness == Some(true) { "yes" } @else { "no" } }
                        td { @for l in f.legal_values.iter().flatten() { span.tag { (l.value) } } }
                    }
                }
            }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Context fields", body),
        StatusCode::OK,
    )
}

/// The context field form, new or of the field `existing`.
async fn form(
    ui: &Ui,
    signed: &Signed,
    existing: Option<&str>,
    draft: &Draft,
    problems: &Problems,
    status: StatusCode,
) -> Response {
    let caller = signed.caller();
    let need = if existing.is_some() {
        Permission::UpdateContextField
    } else {
        Permission::CreateContextField
    };
    let notice = problems::read_only(ui, signed, &[Need::root(need)]).await;
    let uses = match existing {
        Some(name) => ui
            .admin
            .context_field_strategies(caller, name)
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let built_in = existing.is_some_and(is_builtin_context_field);
    let action = match existing {
        Some(name) => format!("/context/{}", seg(name)),
        None => "/context/new".to_owned(),
    };
    let invalid = |key: &str| problems.invalid(key);
    let body = html! {
        p { a href=(ui.url("/context")) { "← context fields" } }
        @if let Some(n) = notice { (n) }
        @if built_in { p.warning role="note" { "A built-in field: it cannot be changed." } }
        (problems.summary())
        form method="post" action=(ui.url(&action)) novalidate {
            (csrf::input(signed))
            div.grid {
                div {
                    label for="name" { "Name" }
                    @if existing.is_some() {
                        input #name type="text" name="name" value=(draft.name) readonly;
                    } @else {
                        input #name type="text" name="name" value=(draft.name)
                            class=[invalid("name").then_some("invalid")] aria-invalid=[invalid("name").then_some("true")]
                            aria-describedby=[problems.described("name")];
                    }
                    (problems.at("name"))
                }
                div {
                    label for="sortOrder" { "Sort order" }
                    input #sortOrder type="number" step="1" name="sortOrder" value=(draft.sort_order)
                        aria-describedby=[problems.described("sortOrder")];
                    (problems.at("sortOrder"))
                }
                div {
                    label for="stickiness" { "Stickiness" }
                    input #stickiness type="checkbox" name="stickiness" value="true" checked[draft.stickiness];
                    label.inline for="stickiness" { "Can be used for stickiness" }
                }
            }
            label for="description" { "Description" }
            textarea #description name="description" rows="2"
                class=[invalid("description").then_some("invalid")]
                aria-describedby=[problems.described("description")] { (draft.description) }
            (problems.at("description"))
            (legal_values(draft, problems))
            div.actions {
                button type="submit" name="action" value="save" { "Save the context field" }
                a href=(ui.url("/context")) { "Cancel" }
            }
        }
        @if existing.is_some() {
            section aria-labelledby="uses" {
                h2 #uses { "Constraints using it" }
                @if uses.is_empty() { p.muted { "No strategy has a constraint on this field." } }
                @else {
                    ul {
                        @for u in &uses {
                            li {
                                a href=(ui.url(&format!("/projects/{}/features/{}/environments/{}/strategies/{}", seg(&u.project_id), seg(&u.feature_name), seg(&u.environment), seg(&u.id)))) {
                                    (u.feature_name) " in " (u.environment) " (" (u.strategy_name) ")"
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    let title = match existing {
        Some(name) => format!("Context field {name}"),
        None => "New context field".to_owned(),
    };
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}

fn legal_values(draft: &Draft, problems: &Problems) -> Markup {
    let mut rows = draft.legal.clone();
    if rows
        .last()
        .is_none_or(|(v, d, _)| !v.is_empty() || !d.is_empty())
    {
        rows.push(Default::default());
    }
    html! {
        fieldset aria-describedby=[problems.described("legalValues")] {
            legend { "Legal values" }
            p.hint { "When a field has legal values, constraints on it may use only those." }
            (problems.at("legalValues"))
            input type="hidden" name="legalValues.count" value=(rows.len());
            table {
                caption.visually-hidden { "Legal values" }
                thead { tr { th scope="col" { "Value" } th scope="col" { "What it means" } th scope="col" { "Remove" } } }
                tbody {
                    @for (i, (value, description, remove)) in rows.iter().enumerate() {
                        @let key = |what: &str| format!("legalValues.{i}.{what}");
                        tr {
                            td {
                                label.visually-hidden for=(key("value")) { "Legal value " (i + 1) }
                                input type="text" id=(key("value")) name=(key("value")) value=(value)
                                    class=[problems.invalid(&key("value")).then_some("invalid")]
                                    aria-invalid=[problems.invalid(&key("value")).then_some("true")]
                                    aria-describedby=[problems.described(&key("value"))];
                                (problems.at(&key("value")))
                            }
                            td {
                                label.visually-hidden for=(key("description")) { "Description of legal value " (i + 1) }
                                input type="text" id=(key("description")) name=(key("description")) value=(description);
                            }
                            td {
                                input type="checkbox" id=(key("remove")) name=(key("remove")) value="true" checked[*remove];
                                label.inline for=(key("remove")) { span.visually-hidden { "Remove legal value " (i + 1) } "remove" }
                            }
                        }
                    }
                }
            }
            button.secondary type="submit" name="action" value="add-value" { "Add a legal value" }
        }
    }
}

/// `GET /context/new`.
pub(crate) async fn new_page(State(ui): State<Ui>, signed: Signed) -> Response {
    let draft = Draft {
        sort_order: "0".to_owned(),
        ..Draft::default()
    };
    form(
        &ui,
        &signed,
        None,
        &draft,
        &Problems::none(),
        StatusCode::OK,
    )
    .await
}

/// `GET /context/{name}`.
pub(crate) async fn edit_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
) -> Response {
    match ui.admin.context_field(signed.caller(), &name).await {
        Ok(field) => {
            form(
                &ui,
                &signed,
                Some(&name),
                &Draft::of(&field),
                &Problems::none(),
                StatusCode::OK,
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST /context/new`.
pub(crate) async fn create(
    State(ui): State<Ui>,
    signed: Signed,
    parts: Parts,
    fields: Fields,
) -> Response {
    save_form(ui, signed, None, parts, fields).await
}

/// `POST /context/{name}`.
pub(crate) async fn update(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    save_form(ui, signed, Some(name), parts, fields).await
}

async fn save_form(
    ui: Ui,
    signed: Signed,
    existing: Option<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let mut draft = Draft::from_form(&fields);
    if let Some(name) = &existing {
        draft.name.clone_from(name);
    }
    if fields.get("action") == Some("add-value") {
        return form(
            &ui,
            &signed,
            existing.as_deref(),
            &draft,
            &Problems::none(),
            StatusCode::OK,
        )
        .await;
    }
    let Ok(sort_order) = draft.sort_order.parse::<i64>() else {
        let problems = Problems::field("sortOrder", "the sort order is a whole number");
        return form(
            &ui,
            &signed,
            existing.as_deref(),
            &draft,
            &problems,
            StatusCode::BAD_REQUEST,
        )
        .await;
    };
    let (legal, from) = draft.legal_values();
    let description = Some(draft.description.clone()).filter(|d| !d.is_empty());
    let caller = signed.caller();
    let result = match &existing {
        Some(name) => {
            let update = ContextFieldUpdate {
                name: None,
                description: Some(description),
                stickiness: Some(draft.stickiness),
                sort_order: Some(sort_order),
                legal_values: Some(legal),
            };
            ui.admin.update_context_field(caller, name, &update).await
        }
        None => {
            let field = ContextField {
                name: draft.name.clone(),
                description: Some(description),
                stickiness: Some(draft.stickiness),
                sort_order: Some(sort_order),
                legal_values: Some(legal),
                ..ContextField::default()
            };
            ui.admin
                .create_context_field(caller, &field)
                .await
                .map(|_| ())
        }
    };
    match result {
        Ok(()) => layout::done(
            &ui,
            &signed,
            format!("Saved the context field {}.", draft.name),
            &format!("/context/{}", seg(&draft.name)),
        ),
        Err(error) if problems::belongs_on_form(&error) => {
            let problems = Problems::of_rows(
                &error,
                &draft.keys(),
                Some("name"),
                &[("legalValues", &from)],
            );
            let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
            form(&ui, &signed, existing.as_deref(), &draft, &problems, status).await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
