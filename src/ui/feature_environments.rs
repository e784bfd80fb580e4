//! A feature's strategies in one environment: add one (its kind chosen first) and edit one,
//! through the facade's strategy operations; the form is `strategy_form.rs`. Removing,
//! moving and copying them are in `strategy_moves.rs`.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::html;
use serde::Deserialize;

use super::fields::Fields;
use super::layout::{self, Page, query, seg};
use super::problems::{self, Problems};
use super::session::Signed;
use super::strategy_form::{self, Catalogue, Draft};
use super::{Ui, csrf, rollout};
use crate::admin::Need;
use crate::model::{FeatureStrategy, Permission};

/// A feature in an environment, as the path names it.
pub(crate) struct Target {
    pub project: String,
    pub feature: String,
    pub environment: String,
}

impl Target {
    pub(crate) fn of((project, feature, environment): (String, String, String)) -> Self {
        Target {
            project,
            feature,
            environment,
        }
    }

    pub(crate) fn feature_path(&self) -> String {
        format!(
            "/projects/{}/features/{}",
            seg(&self.project),
            seg(&self.feature)
        )
    }

    /// The feature's page at this environment's section.
    pub(crate) fn back(&self) -> String {
        format!("{}#env-{}", self.feature_path(), self.environment)
    }

    pub(crate) fn strategies_path(&self) -> String {
        format!(
            "{}/environments/{}/strategies",
            self.feature_path(),
            seg(&self.environment)
        )
    }
}

/// The query of the new-strategy page: its kind.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct NewQuery {
    #[serde(default, rename = "type")]
    kind: String,
}

/// `GET …/environments/{environment}/strategies/new?type=`: the kinds to choose from, then
/// the form for the one chosen.
pub(crate) async fn new_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path(path): Path<(String, String, String)>,
    Query(params): Query<NewQuery>,
) -> Response {
    let target = Target::of(path);
    let caller = signed.caller();
    if let Err(error) = ui
        .admin
        .strategies(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
        )
        .await
    {
        return layout::error(&ui, &signed, &error);
    }
    if params.kind.is_empty() {
        return kinds(&ui, &signed, &target).await;
    }
    let draft = Draft::new(&params.kind, &target.feature);
    form(
        &ui,
        &signed,
        &target,
        None,
        &draft,
        &Problems::none(),
        StatusCode::OK,
    )
    .await
}

/// The strategy kinds, each a link to its form.
async fn kinds(ui: &Ui, signed: &Signed, target: &Target) -> Response {
    let definitions = match ui.admin.strategy_definitions(signed.caller()).await {
        Ok(d) => d,
        Err(error) => return layout::error(ui, signed, &error),
    };
    let new = ui.url(&format!("{}/new", target.strategies_path()));
    let body = html! {
        p { a href=(ui.url(&target.back())) { "← " (target.feature) } }
        p { "Which kind of strategy?" }
        ul {
            @for d in definitions.iter().filter(|d| !d.deprecated) {
                li {
                    a href=(format!("{new}{}", query(&[("type", &d.name)]))) {
                        (d.display_name.as_deref().unwrap_or(&d.name)) " (" code { (d.name) } ")"
                    }
                    @if let Some(description) = &d.description { " — " span.muted { (description) } }
                }
            }
        }
    };
    let title = format!(
        "New strategy for {} in {}",
        target.feature, target.environment
    );
    layout::render(ui, Some(signed), &Page::new(title, body), StatusCode::OK)
}

/// The strategy form, new (`id` none) or of the strategy `id`.
async fn form(
    ui: &Ui,
    signed: &Signed,
    target: &Target,
    id: Option<&str>,
    draft: &Draft,
    problems: &Problems,
    status: StatusCode,
) -> Response {
    let caller = signed.caller();
    let catalogue = tokio::try_join!(
        ui.admin.strategy_definitions(caller),
        ui.admin.context_fields(caller),
        ui.admin.segments(caller),
    );
    let (definitions, context_fields, segments) = match catalogue {
        Ok(all) => all,
        Err(error) => return layout::error(ui, signed, &error),
    };
    let usable: Vec<_> = segments
        .into_iter()
        .filter(|s| s.project.as_deref().is_none_or(|p| p == target.project))
        .collect();
    let catalogue = Catalogue {
        definition: definitions.iter().find(|d| d.name == draft.kind),
        context_fields: &context_fields,
        segments: &usable,
    };
    let permission = if id.is_some() {
        Permission::UpdateFeatureStrategy
    } else {
        Permission::CreateFeatureStrategy
    };
    let notice = problems::read_only(
        ui,
        signed,
        &[Need::environment(
            permission,
            &target.project,
            &target.environment,
        )],
    )
    .await;
    let action = match id {
        Some(id) => format!("{}/{}", target.strategies_path(), seg(id)),
        None => format!("{}/new", target.strategies_path()),
    };
    let body = html! {
        p {
            a href=(ui.url(&target.back())) { "← " (target.feature) }
            " · project " (target.project) " · environment " (target.environment)
            " · kind " code { (draft.kind) }
        }
        @if let Some(n) = notice { (n) }
        (problems.summary())
        form.strategy.editor method="post" action=(ui.url(&action)) novalidate {
            (csrf::input(signed))
            (strategy_form::fields(draft, &catalogue, problems))
            div.actions {
                button type="submit" name="action" value="save" { "Save the strategy" }
                a href=(ui.url(&target.back())) { "Cancel" }
            }
        }
    };
    let title = match id {
        Some(_) => format!("Strategy of {} in {}", target.feature, target.environment),
        None => format!(
            "New strategy for {} in {}",
            target.feature, target.environment
        ),
    };
    layout::render(ui, Some(signed), &Page::new(title, body), status)
}

/// Whether the form's button only changes the form (adds a row, shows the widgets of a
/// changed field): nothing is saved.
fn only_the_form(fields: &Fields) -> bool {
    matches!(
        fields.get("action"),
        Some("add-constraint" | "add-variant" | "refresh")
    )
}

/// `POST …/strategies/new`.
pub(crate) async fn add(
    State(ui): State<Ui>,
    signed: Signed,
    Path(path): Path<(String, String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let target = Target::of(path);
    let draft = Draft::from_form(&fields);
    if only_the_form(&fields) {
        return form(
            &ui,
            &signed,
            &target,
            None,
            &draft,
            &Problems::none(),
            StatusCode::OK,
        )
        .await;
    }
    let (json, from_constraints, from_variants) = draft.to_json(true);
    let result = ui
        .admin
        .add_strategy_json(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
            &json,
        )
        .await;
    finish(
        &ui,
        &signed,
        &target,
        None,
        &draft,
        result,
        (from_constraints, from_variants),
    )
    .await
}

/// `GET …/strategies/{id}`.
pub(crate) async fn edit_page(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment, id)): Path<(String, String, String, String)>,
) -> Response {
    let target = Target::of((project, feature, environment));
    match ui
        .admin
        .strategy(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
            &id,
        )
        .await
    {
        Ok(strategy) => {
            let draft = Draft::of(&strategy);
            form(
                &ui,
                &signed,
                &target,
                Some(&id),
                &draft,
                &Problems::none(),
                StatusCode::OK,
            )
            .await
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST …/strategies/{id}`.
pub(crate) async fn save(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment, id)): Path<(String, String, String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let target = Target::of((project, feature, environment));
    let draft = Draft::from_form(&fields);
    if only_the_form(&fields) {
        return form(
            &ui,
            &signed,
            &target,
            Some(&id),
            &draft,
            &Problems::none(),
            StatusCode::OK,
        )
        .await;
    }
    let (json, from_constraints, from_variants) = draft.to_json(false);
    let result = ui
        .admin
        .update_strategy_json(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
            &id,
            &json,
        )
        .await;
    finish(
        &ui,
        &signed,
        &target,
        Some(&id),
        &draft,
        result,
        (from_constraints, from_variants),
    )
    .await
}

/// After a save: back to the feature, saying what the strategy does now; or the form again
/// with the problems next to their fields.
async fn finish(
    ui: &Ui,
    signed: &Signed,
    target: &Target,
    id: Option<&str>,
    draft: &Draft,
    result: crate::Result<FeatureStrategy>,
    from: (Vec<usize>, Vec<usize>),
) -> Response {
    match result {
        Ok(saved) => {
            let segments = ui.admin.segments(signed.caller()).await.unwrap_or_default();
            let verb = if id.is_some() { "Saved" } else { "Added" };
            layout::done(
                ui,
                signed,
                format!(
                    "{verb} the strategy {} in {}: {}.",
                    saved.name,
                    target.environment,
                    rollout::strategy(&saved, &segments)
                ),
                &target.back(),
            )
        }
        Err(error) if problems::belongs_on_form(&error) => {
            let definitions = ui
                .admin
                .strategy_definitions(signed.caller())
                .await
                .unwrap_or_default();
            let keys = draft.field_keys(definitions.iter().find(|d| d.name == draft.kind));
            let problems = Problems::of_rows(
                &error,
                &keys,
                None,
                &[("constraints", &from.0), ("variants", &from.1)],
            );
            let status = StatusCode::from_u16(error.status()).unwrap_or(StatusCode::BAD_REQUEST);
            form(ui, signed, target, id, draft, &problems, status).await
        }
        Err(error) => layout::error(ui, signed, &error),
    }
}
