//! Archiving a feature (after a confirmation step that says which features depend on it),
//! the archive of every project (searched and paged), reviving a feature, and deleting one
//! for good (after a confirmation step).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::html;
use serde::Deserialize;

use super::fields::Fields;
use super::layout::{self, Page, pager, query, seg};
use super::session::Signed;
use super::{Ui, csrf};

/// Archived features a page.
const PER_PAGE: usize = 50;

fn feature_path(project: &str, feature: &str) -> String {
    format!("/projects/{}/features/{}", seg(project), seg(feature))
}

/// `GET /projects/{project}/features/{feature}/archive`: the confirmation.
pub(crate) async fn confirm(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
) -> Response {
    let caller = signed.caller();
    if let Err(error) = ui.admin.feature(caller, &project, &name).await {
        return layout::error(&ui, &signed, &error);
    }
    // Which features would be left with an archived parent: asked of the facade, which
    // also refuses a reader who may not archive (told why, before the button).
    let check = ui
        .admin
        .validate_archive(caller, &project, std::slice::from_ref(&name))
        .await;
    let path = feature_path(&project, &name);
    let question = html! {
        p {
            "Archive " strong { (name) } "? SDKs stop getting it at once (it is off everywhere). "
            "It stays in the archive, where it can be revived or deleted for good; its name stays taken until then."
        }
        @match &check {
            Ok(check) if !check.parents_with_child_features.is_empty() => {
                p.warning role="note" { "Other features depend on it; they will be left with an archived parent." }
            }
            Ok(_) => {}
            Err(error) => { p.warning role="note" { "You cannot archive it: " (error) } }
        }
    };
    layout::confirm(
        &ui,
        &signed,
        format!("Archive {name}?"),
        question,
        &format!("{path}/archive"),
        &format!("Archive {name}"),
        &path,
    )
}

/// `POST /projects/{project}/features/{feature}/archive`.
pub(crate) async fn archive(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, name)): Path<(String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    match ui
        .admin
        .archive_feature(signed.caller(), &project, &name)
        .await
    {
        Ok(()) => layout::done(
            &ui,
            &signed,
            format!("Archived {name}. It can be revived from the archive."),
            &format!("/projects/{}", seg(&project)),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// The archive page's query.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct ArchiveQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    page: Option<String>,
}

/// `GET /archive`: every archived feature, of every project, `?q=` by name.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Query(params): Query<ArchiveQuery>,
) -> Response {
    let page = params
        .page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(1)
        .max(1)
        - 1;
    let archived = match ui.admin.all_archived_features(signed.caller()).await {
        Ok(a) => a,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let wanted = params.q.trim().to_lowercase();
    let matching: Vec<_> = archived
        .features
        .iter()
        .filter(|f| wanted.is_empty() || f.name.to_lowercase().contains(&wanted))
        .collect();
    let total = matching.len();
    let base = ui.url("/archive");
    let link = |p: usize| {
        format!(
            "{base}{}",
            query(&[("q", &params.q), ("page", &(p + 1).to_string())])
        )
    };
    let body = html! {
        p.hint { "Archived features are off everywhere and not sent to SDKs. Revive one to use it again (it comes back off), or delete it for good to free its name." }
        form.search method="get" action=(base) role="search" {
            div {
                label for="q" { "Search the archive" }
                input #q type="search" name="q" value=(params.q) placeholder="name";
            }
            button type="submit" { "Search" }
        }
        (pager(page, PER_PAGE, total, link))
        table {
            caption.visually-hidden { "Archived features" }
            thead { tr {
                th scope="col" { "Feature" } th scope="col" { "Project" } th scope="col" { "Type" }
                th scope="col" { "Archived" } th scope="col" { "Actions" }
            } }
            tbody {
                @for f in matching.iter().skip(page.saturating_mul(PER_PAGE)).take(PER_PAGE) {
                    tr {
                        td { (f.name) }
                        td { (f.project.as_deref().unwrap_or("")) }
                        td { (f.feature_type.as_deref().unwrap_or("")) }
                        td { @if let Some(Some(at)) = &f.archived_at { (at.format("%Y-%m-%d %H:%M")) } }
                        td {
                            form.inline method="post" action=(ui.url(&format!("/archive/{}/revive", seg(&f.name)))) {
                                (csrf::input(&signed))
                                button.secondary type="submit" aria-label=(format!("Revive {}", f.name)) { "Revive" }
                            }
                            " "
                            a href=(ui.url(&format!("/archive/{}/delete", seg(&f.name)))) {
                                "Delete for good…" span.visually-hidden { " " (f.name) }
                            }
                        }
                    }
                }
            }
        }
        @if matching.is_empty() { p { "No archived features match." } }
        (pager(page, PER_PAGE, total, link))
    };
    layout::render(
        &ui,
        Some(&signed),
        &Page::new("Archive", body),
        StatusCode::OK,
    )
}

/// `POST /archive/{feature}/revive`.
pub(crate) async fn revive(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let caller = signed.caller();
    match ui.admin.revive_feature(caller, &name).await {
        Ok(()) => {
            // The facade answers where it lives, for the link back to it.
            let to = match ui.admin.feature_project(caller, &name).await {
                Ok(project) => feature_path(&project, &name),
                Err(_) => "/archive".to_owned(),
            };
            layout::done(
                &ui,
                &signed,
                format!("Revived {name}. It is off in every environment."),
                &to,
            )
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `GET /archive/{feature}/delete`: the confirmation.
pub(crate) async fn confirm_delete(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
) -> Response {
    let project = match ui.admin.feature_project(signed.caller(), &name).await {
        Ok(p) => p,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let question = html! {
        p {
            "Delete " strong { (name) } " of project " (project) " for good? "
            "Its strategies, variants and tags go with it, and cannot be brought back. Its name becomes free."
        }
    };
    layout::confirm(
        &ui,
        &signed,
        format!("Delete {name} for good?"),
        question,
        &format!("/archive/{}/delete", seg(&name)),
        &format!("Delete {name} for good"),
        "/archive",
    )
}

/// `POST /archive/{feature}/delete`.
pub(crate) async fn delete(
    State(ui): State<Ui>,
    signed: Signed,
    Path(name): Path<String>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    match ui.admin.delete_feature(signed.caller(), &name).await {
        Ok(()) => layout::done(
            &ui,
            &signed,
            format!("Deleted {name} for good."),
            "/archive",
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
