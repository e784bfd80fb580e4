//! Import and export: paste or upload an export document, choose the project, the
//! environment and the mode, see its plan first (errors, warnings and missing permissions,
//! each with the items or paths it concerns; then what will be created, changed with the old
//! and new values, left unchanged and skipped), then import exactly that plan; export
//! features by project, tag or name in an environment and download the file.
//!
//! The Import button imports only when it carries the fingerprint of the plan shown and the
//! plan computed at that moment is the same; otherwise (no plan seen yet, or the document,
//! the target or the store changed since) the current plan is shown and nothing is written.

use axum::extract::{Multipart, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;

use super::layout::{self, Page, error_box};
use super::session::Signed;
use super::{Ui, csrf, plan};
use crate::model::ValidationItem;
use crate::model::{Environment, ExportQuery, ImportMode, ImportReport, Project};

/// What the import form holds.
#[derive(Debug, Default)]
struct ImportForm {
    project: String,
    environment: String,
    mode: String,
    document: String,
    action: String,
    /// The fingerprint of the plan shown, sent back by the Import button.
    plan: Option<String>,
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
        Ok(choices) => {
            let form = ImportForm::default();
            render(&ui, &signed, &choices, &form, None, None, StatusCode::OK)
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
            "mode" => form.mode = text,
            "plan" => form.plan = Some(text),
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

/// `POST /import`: plan, or (with the fingerprint of the plan shown) import.
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
    let choices = match choices(&ui, &signed).await {
        Ok(c) => c,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let show_planned = |outcome: Markup, fingerprint: Option<&str>, status| {
        render(
            &ui,
            &signed,
            &choices,
            &form,
            Some(outcome),
            fingerprint,
            status,
        )
    };
    let show = |outcome: Markup, status| show_planned(outcome, None, status);
    let mode = match form.mode.as_str() {
        "" => ImportMode::default(),
        text => match text.parse::<ImportMode>() {
            Ok(mode) => mode,
            Err(error) => return show(error_box(&error), StatusCode::BAD_REQUEST),
        },
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
    if blocked {
        let outcome = html! {
            p.error role="alert" { "This document cannot be imported as it is: fix the errors below." }
            (findings)
        };
        return show(outcome, StatusCode::BAD_REQUEST);
    }
    let planned = match ui.admin.plan_import_json(caller, &body, mode).await {
        Ok(planned) => planned,
        Err(error) if error.status() < 500 && error.status() != 401 => {
            return show(
                error_box(&error),
                StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST),
            );
        }
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let fingerprint = plan::fingerprint(&planned);
    let confirmed = form.action == "import" && form.plan.as_deref() == Some(fingerprint.as_str());
    if !confirmed {
        let outcome = html! {
            @if form.action == "import" && form.plan.is_some() {
                p.error role="alert" { "The plan changed since you saw it (the document, the target or the store changed). Nothing was written: check the plan below, then press Import again." }
            } @else if form.action == "import" {
                p.flash role="status" { "Nothing was written yet: this is what Import will do. Check the plan below, then press Import again." }
            } @else {
                p.flash role="status" { "The document is valid" @if !validation.warnings.is_empty() { ", with warnings" } ". Nothing was written yet: check the plan below, then press Import to apply it." }
            }
            (findings)
            (plan::view(&planned))
        };
        return show_planned(outcome, Some(&fingerprint), StatusCode::OK);
    }
    match ui.admin.import_toggles_json_with(caller, &body, mode).await {
        Ok(report) => show(summary(&form, &report), StatusCode::OK),
        Err(error) if error.status() < 500 && error.status() != 401 => show(
            error_box(&error),
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// What the import did, by the plan's actions.
fn summary(form: &ImportForm, report: &ImportReport) -> Markup {
    let skipped = report.skipped_archived.len() + report.skipped_existing.len();
    html! {
        p.flash role="status" {
            "Imported into project " strong { (form.project) } ", environment " strong { (form.environment) } ": "
            (report.created.len()) " created, " (report.updated.len()) " updated, "
            (report.unchanged.len()) " unchanged, " (skipped) " skipped."
        }
        (names("Created", &report.created))
        (names("Updated", &report.updated))
        (names("Unchanged", &report.unchanged))
        (names("Skipped (archived)", &report.skipped_archived))
        (names("Skipped (exists)", &report.skipped_existing))
        @if !report.warnings.is_empty() {
            div.warning { ul { @for w in &report.warnings { li { (w) } } } }
        }
    }
}

fn names(title: &str, names: &[String]) -> Markup {
    html! {
        @if !names.is_empty() {
            p { (title) ": " @for f in names.iter().take(100) { span.tag { (f) } } @if names.len() > 100 { "…" } }
        }
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
    (projects, environments): &(Vec<Project>, Vec<Environment>),
    form: &ImportForm,
    outcome: Option<Markup>,
    fingerprint: Option<&str>,
    status: StatusCode,
) -> Response {
    let body = html! {
        @if let Some(outcome) = outcome { (outcome) }
        form method="post" action=(ui.url("/import")) enctype="multipart/form-data" {
            (csrf::input(signed))
            @if let Some(fingerprint) = fingerprint { input type="hidden" name="plan" value=(fingerprint); }
            label for="project" { "Project" }
            select #project name="project" required {
                @for p in projects { option value=(p.id) selected[p.id == form.project] { (p.name) " (" (p.id) ")" } }
            }
            label for="environment" { "Environment" }
            select #environment name="environment" required {
                @for e in environments { option value=(e.name) selected[e.name == form.environment] { (e.name) } }
            }
            label for="mode" { "Mode" }
            select #mode name="mode" {
                option value="replace" selected[form.mode != "create-missing"] { "replace: make every feature as the document says" }
                option value="create-missing" selected[form.mode == "create-missing"] { "create-missing: only create the features that do not exist" }
            }
            label for="file" { "Export file" }
            input #file type="file" name="file" accept=".json,application/json";
            label for="document" { "… or paste the export document" }
            textarea.document #document name="document" spellcheck="false" { (form.document) }
            p.hint { "An export from this service or from Unleash. Plan first: Import applies only the plan you saw, and shows the plan instead when there is none or it changed." }
            div.actions {
                button type="submit" name="action" value="plan" { "Plan" }
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
