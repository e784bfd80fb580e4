//! A feature's own edits: create one in a project (name, type, description, impression
//! data; the name is checked by the facade on submit and a refusal shown next to it), change
//! its description, type and impression data, and mark it stale or not. Archiving is in
//! `feature_archive.rs`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::{Markup, html};
use serde_json::json;

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::problems::{self, Problems};
use super::session::Signed;
use super::{Ui, csrf};
use crate::admin::{FEATURE_TYPES, Need};
use crate::error::Error;
use crate::model::{NewFeature, Permission};

/// The fields of both forms.
#[derive(Debug, Clone, Default)]
struct Settings {
    name: String,
    feature_type: String,
    description: String,
    impression_data: bool,
}

impl Settings {
    fn from_form(fields: &Fields) -> Self {
        Settings {
            name: fields.get("name").unwrap_or_default().trim().to_owned(),
            feature_type: fields.get("type").unwrap_or("release").to_owned(),
            description: fields.get("description").unwrap_or_default().to_owned(),
            impression_data: fields.get("impressionData").is_some(),
        }
    }

    /// The form's fields; the name only when creating (a feature is not renamed).
    fn markup(&self, creating: bool, problems: &Problems) -> Markup {
        let invalid = |key: &str| problems.invalid(key);
        html! {
            @if creating {
                label for="name" { "Name" }
                p.hint id="name.hint" { "1–100 characters: letters, digits and - _ . ~; unique across all projects (archived features included)." }
                input #name type="text" name="name" value=(self.name) required
                    class=[invalid("name").then_some("invalid")] aria-invalid=[invalid("name").then_some("true")]
                    aria-describedby=(problems.described("name").map_or_else(|| "name.hint".to_owned(), |e| format!("name.hint {e}")));
                (problems.at("name"))
            }
            label for="type" { "Type" }
            select #type name="type" aria-describedby=[problems.described("type")] {
                @for t in FEATURE_TYPES { option value=(t) selected[t == self.feature_type] { (t) } }
            }
            (problems.at("type"))
            label for="description" { "Description" }
            textarea #description name="description" rows="3"
                class=[invalid("description").then_some("invalid")]
                aria-describedby=[problems.described("description")] { (self.description) }
            (problems.at("description"))
            p {
                input #impressionData type="checkbox" name="impressionData" value="true" checked[self.impression_data];
                label.inline for="impressionData" { "Impression data (SDKs emit an event each time it is evaluated)" }
            }
        }
    }
}

fn keys() -> Vec<String> {
    ["name", "type", "description", "impressionData"]
        .iter()
        .map(|k| (*k).to_owned())
        .collect()
}

fn project_path(project: &str) -> String {
    format!("/projects/{}", seg(project))
}

fn feature_path(project: &str, feature: &str) -> String {
    format!("/projects/{}/features/{}", seg(project), seg(feature))
}

/// The status a refused form is shown with.
fn status_of(error: &Error) -> StatusCode {
    StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST)
}

/// `GET /projects/{project}/new-feature`.
pub(crate) async fn new_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path(project): Path<String>,
) -> Response {
    if let Err(error) = ui.admin.project(signed.caller(), &project).await {
        return layout::error(&ui, &signed, &error);
    }
    let settings = Settings {
        feature_type: "release".to_owned(),
        ..Settings::default()
    };
    new_form(
        &ui,
        &signed,
        &project,
        &settings,
        &Problems::none(),
        StatusCode::OK,
    )
    .await
}

async fn new_form(
    ui: &Ui,
    signed: &Signed,
    project: &str,
    settings: &Settings,
    problems: &Problems,
    status: StatusCode,
) -> Response {
    let notice = problems::read_only(
        ui,
        signed,
        &[Need::project(Permission::CreateFeature, project)],
    )
    .await;
    let body = html! {
        p { a href=(ui.url(&project_path(project))) { "← project " (project) } }
        @if let Some(n) = notice { (n) }
        (problems.summary())
        form.narrow method="post" action=(ui.url(&format!("{}/new-feature", project_path(project)))) novalidate {
            (csrf::input(signed))
            (settings.markup(true, problems))
            div.actions {
                button type="submit" { "Create the feature" }
                a href=(ui.url(&project_path(project))) { "Cancel" }
            }
        }
    };
    let title = format!("New feature in {project}");
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}

/// `POST /projects/{project}/new-feature`.
pub(crate) async fn create(
    State(ui): State<Ui>,
    signed: Signed,
    Path(project): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let settings = Settings::from_form(&fields);
    let feature = NewFeature {
        name: settings.name.clone(),
        feature_type: Some(settings.feature_type.clone()),
        description: Some(settings.description.clone()).filter(|d| !d.trim().is_empty()),
        impression_data: Some(settings.impression_data),
        ..NewFeature::default()
    };
    match ui
        .admin
        .create_feature(signed.caller(), &project, &feature)
        .await
    {
        Ok(created) => layout::done(
            &ui,
            &signed,
            format!(
                "Created the feature {}. It is off in every environment.",
                created.name
            ),
            &feature_path(&project, &created.name),
        ),
        Err(error) if problems::belongs_on_form(&error) => {
            let problems = Problems::of(&error, &keys(), Some("name"));
            new_form(
                &ui,
                &signed,
                &project,
                &settings,
                &problems,
                status_of(&error),
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `GET /projects/{project}/features/{feature}/settings`.
pub(crate) async fn settings_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
) -> Response {
    let feature = match ui.admin.feature(signed.caller(), &project, &name).await {
        Ok(f) => f,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let settings = Settings {
        name: feature.name.clone(),
        feature_type: feature
            .feature_type
            .clone()
            .unwrap_or_else(|| "release".to_owned()),
        description: feature.description.clone().flatten().unwrap_or_default(),
        impression_data: feature.impression_data.unwrap_or(false),
    };
    settings_form(
        &ui,
        &signed,
        &project,
        &settings,
        &Problems::none(),
        StatusCode::OK,
    )
    .await
}

async fn settings_form(
    ui: &Ui,
    signed: &Signed,
    project: &str,
    settings: &Settings,
    problems: &Problems,
    status: StatusCode,
) -> Response {
    let notice = problems::read_only(
        ui,
        signed,
        &[Need::project(Permission::UpdateFeature, project)],
    )
    .await;
    let back = feature_path(project, &settings.name);
    let body = html! {
        p { a href=(ui.url(&back)) { "← " (settings.name) } }
        @if let Some(n) = notice { (n) }
        (problems.summary())
        form.narrow method="post" action=(ui.url(&format!("{back}/settings"))) novalidate {
            (csrf::input(signed))
            (settings.markup(false, problems))
            div.actions {
                button type="submit" { "Save the settings" }
                a href=(ui.url(&back)) { "Cancel" }
            }
        }
    };
    let title = format!("Settings of {}", settings.name);
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}

/// `POST /projects/{project}/features/{feature}/settings`: description, type and impression
/// data as a patch, so that what the form does not show (stale) is left as it is.
pub(crate) async fn save_settings(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let settings = Settings {
        name: name.clone(),
        ..Settings::from_form(&fields)
    };
    let description = if settings.description.trim().is_empty() {
        serde_json::Value::Null
    } else {
        json!(settings.description)
    };
    let patch = crate::variants::decode_patch(&json!([
        { "op": "replace", "path": "/description", "value": description },
        { "op": "replace", "path": "/type", "value": settings.feature_type },
        { "op": "replace", "path": "/impressionData", "value": settings.impression_data },
    ]));
    let result = match patch {
        Ok(patch) => {
            ui.admin
                .patch_feature(signed.caller(), &project, &name, &patch)
                .await
        }
        Err(error) => Err(error),
    };
    match result {
        Ok(_) => layout::done(
            &ui,
            &signed,
            format!("Saved the settings of {name}."),
            &feature_path(&project, &name),
        ),
        Err(error) if problems::belongs_on_form(&error) => {
            let problems = Problems::of(&error, &keys(), None);
            settings_form(
                &ui,
                &signed,
                &project,
                &settings,
                &problems,
                status_of(&error),
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST /projects/{project}/features/{feature}/stale`: mark it stale (`stale=true`) or not.
pub(crate) async fn set_stale(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let stale = fields.get("stale") == Some("true");
    match ui
        .admin
        .set_features_stale(
            signed.caller(),
            &project,
            std::slice::from_ref(&name),
            stale,
        )
        .await
    {
        Ok(()) => {
            let said = if stale { "stale" } else { "no longer stale" };
            layout::done(
                &ui,
                &signed,
                format!("{name} is marked {said}."),
                &feature_path(&project, &name),
            )
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
