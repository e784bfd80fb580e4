//! Import and export: paste or upload an export document, choose the project and the
//! environment, validate it first (errors, warnings and missing permissions, each with the
//! items or paths it concerns), then import; export features by project, tag or name in an
//! environment and download the file.

use axum::extract::{Multipart, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;

use super::layout::{self, Page, error_box};
use super::session::Signed;
use super::{Ui, csrf};
use crate::model::ValidationItem;
use crate::model::{Environment, ExportQuery, Project};

/// What the import form holds.
#[derive(Debug, Default)]
struct ImportForm {
    project: String,
    environment: String,
    document: String,
    action: String,
    csrf: Option<String>,
}

async fn choices(
    ui: &Ui,
    signed: &Signed,
) -> Result<(Vec<Project>, Vec<Environment>), crate::Error> {
    Ok((
        ui.admin.projects(signed.caller()).await?,
        ui.admin.environments(signed.caller()).await?,
    ))
}

/// `GET /import`.
pub(crate) async fn page(State(ui): State<Ui>, signed: Signed) -> Response {
    match choices(&ui, &signed).await {
        Ok((projects, environments)) => {
            let form = ImportForm::default();
            render(
                &ui,
                &signed,
                &projects,
                &environments,
                &form,
                None,
                StatusCode::OK,
            )
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// Read the multipart form: the uploaded file, when one was chosen, wins over the text.
async fn read_form(mut multipart: Multipart) -> Result<ImportForm, String> {
    let mut form = ImportForm::default();
    let mut uploaded: Option<String> = None;
    while let Some(field) = multipart.next_field().await.map_err(|e| e.to_string())? {
        let name = field.name().unwrap_or_default().to_owned();
        let is_file = field.file_name().is_some_and(|f| !f.is_empty());
        let text = field.text().await.map_err(|e| e.to_string())?;
        match name.as_str() {
            "project" => form.project = text,
            "environment" => form.environment = text,
            "document" => form.document = text,
            "action" => form.action = text,
            "csrf" => form.csrf = Some(text),
            "file" if is_file && !text.trim().is_empty() => uploaded = Some(text),
            _ => {}
        }
    }
    if let Some(file) = uploaded {
        form.document = file;
    }
    Ok(form)
}

/// `POST /import`: validate, or validate and import.
pub(crate) async fn submit(
    State(ui): State<Ui>,
    signed: Signed,
    parts: Parts,
    multipart: Multipart,
) -> Response {
    let form = match read_form(multipart).await {
        Ok(form) => form,
        Err(e) => {
            return layout::refusal(
                &ui,
                Some(&signed),
                &format!("The form could not be read: {e}"),
            );
        }
    };
    if let Some(refused) =
        layout::csrf_check_token(&ui, &signed, &parts.headers, form.csrf.as_deref())
    {
        return refused;
    }
    let (projects, environments) = match choices(&ui, &signed).await {
        Ok(c) => c,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let show = |outcome: Markup, status| {
        render(
            &ui,
            &signed,
            &projects,
            &environments,
            &form,
            Some(outcome),
            status,
        )
    };
    let data: Value = match serde_json::from_str(&form.document) {
        Ok(v) => v,
        Err(e) => {
            let outcome = html! {
                div.error role="alert" {
                    p { "The document is not JSON: " (e) }
                }
            };
            return show(outcome, StatusCode::BAD_REQUEST);
        }
    };
    // A whole import body (`{project, environment, data}`) is taken for its data: the
    // target is what the form says.
    let data = match data {
        Value::Object(mut map) if map.contains_key("data") && map.contains_key("project") => {
            map.remove("data").unwrap_or(Value::Null)
        }
        other => other,
    };
    let body = serde_json::json!({
        "project": form.project,
        "environment": form.environment,
        "data": data,
    });
    let caller = signed.caller();
    let validation = match ui.admin.validate_import_json(caller, &body).await {
        Ok(v) => v,
        Err(error) if error.status() < 500 && error.status() != 401 => {
            return show(
                error_box(&error),
                StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST),
            );
        }
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let blocked = !validation.errors.is_empty() || !validation.permissions.is_empty();
    let findings = html! {
        (items("Errors", "error", &validation.errors))
        (items("Missing permissions", "error", &validation.permissions))
        (items("Warnings", "warning", &validation.warnings))
    };
    if form.action != "import" || blocked {
        let outcome = html! {
            @if blocked {
                p.error role="alert" { "This document cannot be imported as it is: fix the errors below." }
            } @else {
                p.flash role="status" { "The document is valid" @if !validation.warnings.is_empty() { ", with warnings" } ". Nothing was written yet: press Import to import it." }
            }
            (findings)
        };
        let status = if blocked {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        };
        return show(outcome, status);
    }
    match ui.admin.import_toggles_json(caller, &body).await {
        Ok(report) => {
            let outcome = html! {
                p.flash role="status" {
                    "Imported into project " strong { (form.project) } ", environment " strong { (form.environment) } ": "
                    (report.created.len()) " created, " (report.updated.len()) " updated, "
                    (report.skipped_archived.len()) " skipped (archived)."
                }
                @if !report.created.is_empty() { p { "Created: " @for f in &report.created { span.tag { (f) } } } }
                @if !report.updated.is_empty() { p { "Updated: " @for f in &report.updated { span.tag { (f) } } } }
                @if !report.skipped_archived.is_empty() { p { "Skipped: " @for f in &report.skipped_archived { span.tag { (f) } } } }
                @if !report.warnings.is_empty() {
                    div.warning { ul { @for w in &report.warnings { li { (w) } } } }
                }
            };
            show(outcome, StatusCode::OK)
        }
        Err(error) if error.status() < 500 && error.status() != 401 => show(
            error_box(&error),
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

fn items(title: &str, class: &str, list: &[ValidationItem]) -> Markup {
    html! {
        @if !list.is_empty() {
            section class=(class) {
                h2 { (title) " (" (list.len()) ")" }
                ul {
                    @for item in list {
                        li {
                            (item.message)
                            @if !item.affected_items.is_empty() {
                                " — " @for a in &item.affected_items { code.tag { (a) } " " }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn render(
    ui: &Ui,
    signed: &Signed,
    projects: &[Project],
    environments: &[Environment],
    form: &ImportForm,
    outcome: Option<Markup>,
    status: StatusCode,
) -> Response {
    let body = html! {
        @if let Some(outcome) = outcome { (outcome) }
        form method="post" action=(ui.url("/import")) enctype="multipart/form-data" {
            (csrf::input(signed))
            label for="project" { "Project" }
            select #project name="project" required {
                @for p in projects { option value=(p.id) selected[p.id == form.project] { (p.name) " (" (p.id) ")" } }
            }
            label for="environment" { "Environment" }
            select #environment name="environment" required {
                @for e in environments { option value=(e.name) selected[e.name == form.environment] { (e.name) } }
            }
            label for="file" { "Export file" }
            input #file type="file" name="file" accept=".json,application/json";
            label for="document" { "… or paste the export document" }
            textarea.document #document name="document" spellcheck="false" { (form.document) }
            p.hint { "An export from this service or from Unleash. Validate first: nothing is written until you press Import." }
            div.actions {
                button type="submit" name="action" value="validate" { "Validate" }
                button.secondary type="submit" name="action" value="import" { "Import" }
            }
        }
    };
    layout::render(ui, Some(signed), &Page::new("Import", body), status)
}

/// The export form's query.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct ExportForm {
    #[serde(default)]
    environment: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    features: String,
}

impl ExportForm {
    fn query(&self) -> ExportQuery {
        let features: Vec<String> = self
            .features
            .split([',', '\n', ' '])
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned)
            .collect();
        ExportQuery {
            environment: self.environment.clone(),
            features,
            tag: Some(self.tag.trim().to_owned()).filter(|t| !t.is_empty()),
            project: Some(self.project.clone()).filter(|p| !p.is_empty()),
            ..ExportQuery::default()
        }
    }
}

/// `GET /export`.
pub(crate) async fn export_page(
    State(ui): State<Ui>,
    signed: Signed,
    Query(form): Query<ExportForm>,
) -> Response {
    let (projects, environments) = match choices(&ui, &signed).await {
        Ok(c) => c,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let body = html! {
        p.hint { "Choose the features by project, by tag (" code { "type:value" } ") or by name; the file holds their configuration in one environment." }
        form method="get" action=(ui.url("/export/download")) {
            label for="environment" { "Environment" }
            select #environment name="environment" required {
                @for e in &environments { option value=(e.name) selected[e.name == form.environment] { (e.name) } }
            }
            label for="project" { "Project" }
            select #project name="project" {
                option value="" { "(any)" }
                @for p in &projects { option value=(p.id) selected[p.id == form.project] { (p.name) " (" (p.id) ")" } }
            }
            label for="tag" { "Tag" }
            input #tag type="text" name="tag" value=(form.tag) placeholder="simple:checkout";
            label for="features" { "Feature names" }
            textarea #features name="features" placeholder="one per line, or comma-separated" { (form.features) }
            div.actions { button type="submit" { "Download export" } }
        }
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Export", body),
        StatusCode::OK,
    )
}

/// `GET /export/download`: the export document as a file.
pub(crate) async fn download(
    State(ui): State<Ui>,
    signed: Signed,
    Query(form): Query<ExportForm>,
) -> Response {
    match ui.admin.export_query(signed.caller(), &form.query()).await {
        Ok(data) => {
            let body = serde_json::to_string_pretty(&data).unwrap_or_default();
            let safe: String = form
                .environment
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .collect();
            let disposition = format!("attachment; filename=\"export-{safe}.json\"");
            (
                [
                    (
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    ),
                    (
                        header::CONTENT_DISPOSITION,
                        HeaderValue::from_str(&disposition)
                            .unwrap_or(HeaderValue::from_static("attachment")),
                    ),
                ],
                body,
            )
                .into_response()
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
