//! A feature's strategies in one environment, rearranged: remove one (after a confirmation
//! step), move one up or down, and copy them all to another environment.

use axum::extract::{Path, State};
use axum::http::request::Parts;
use axum::response::Response;
use maud::html;

use super::feature_environments::Target;
use super::fields::Fields;
use super::layout::{self, seg};
use super::session::Signed;
use super::{Ui, rollout};
use crate::admin::Need;
use crate::error::Error;
use crate::model::{Permission, StrategySortOrder};

/// `GET …/strategies/{id}/remove`: the confirmation.
pub(crate) async fn confirm_remove(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment, id)): Path<(String, String, String, String)>,
) -> Response {
    let target = Target::of((project, feature, environment));
    let caller = signed.caller();
    let strategy = match ui
        .admin
        .strategy(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
            &id,
        )
        .await
    {
        Ok(s) => s,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let segments = ui.admin.segments(caller).await.unwrap_or_default();
    let question = html! {
        p {
            "Remove the strategy " code { (strategy.name) } " from " strong { (target.feature) }
            " in " (target.environment) "? It lets in " (rollout::strategy(&strategy, &segments)) "."
        }
    };
    layout::confirm(
        &ui,
        &signed,
        format!("Remove a strategy of {}?", target.feature),
        question,
        &format!("{}/{}/remove", target.strategies_path(), seg(&id)),
        "Remove the strategy",
        &target.back(),
    )
}

/// `POST …/strategies/{id}/remove`.
pub(crate) async fn remove(
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
    match ui
        .admin
        .remove_strategy(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
            &id,
        )
        .await
    {
        Ok(()) => layout::done(
            &ui,
            &signed,
            format!(
                "Removed a strategy of {} in {}.",
                target.feature, target.environment
            ),
            &target.back(),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST …/strategies/{id}/move`: one place up (`direction=up`) or down, as new sort orders
/// for the whole list (so equal sort orders become distinct).
pub(crate) async fn move_strategy(
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
    let caller = signed.caller();
    // Decided first, so that a move to where the strategy already is is refused alike.
    let need = Need::environment(
        Permission::UpdateFeatureStrategy,
        &target.project,
        &target.environment,
    );
    if let Err(error) = ui.admin.permit(caller, &[need]).await {
        return layout::error(&ui, &signed, &error);
    }
    let mut list = match ui
        .admin
        .strategies(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
        )
        .await
    {
        Ok(l) => l,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let Some(at) = list
        .iter()
        .position(|s| s.id.as_deref() == Some(id.as_str()))
    else {
        let error = Error::not_found(format!("There's no strategy with id \"{id}\" here."));
        return layout::error(&ui, &signed, &error);
    };
    let up = fields.get("direction") == Some("up");
    let other = if up { at.checked_sub(1) } else { Some(at + 1) };
    let Some(other) = other.filter(|o| *o < list.len()) else {
        let place = if up { "first" } else { "last" };
        return layout::done(
            &ui,
            &signed,
            format!("The strategy is {place} already."),
            &target.back(),
        );
    };
    list.swap(at, other);
    let orders: Vec<StrategySortOrder> = list
        .iter()
        .zip(0i64..)
        .filter_map(|(s, order)| {
            s.id.clone().map(|id| StrategySortOrder {
                id,
                sort_order: order,
            })
        })
        .collect();
    match ui
        .admin
        .set_strategy_sort_order(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
            &orders,
        )
        .await
    {
        Ok(()) => layout::done(
            &ui,
            &signed,
            format!(
                "Moved the strategy {} to place {} in {}.",
                list.get(other).map_or("", |s| s.name.as_str()),
                other + 1,
                target.environment
            ),
            &target.back(),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST …/environments/{environment}/copy`: copy this environment's strategies to the
/// environment `to`, in order, as new strategies after those there
/// ([`copy_strategies`](crate::ToggleAdmin::copy_strategies)): all of them in one commit, so a
/// refusal (a permission, the limit of strategies, an archived feature) shows the error and
/// copies none.
pub(crate) async fn copy(
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
    let Some(to) = fields.get("to").filter(|to| !to.is_empty()) else {
        let error = Error::invalid_at("to", "choose the environment to copy the strategies to");
        return layout::error(&ui, &signed, &error);
    };
    match ui
        .admin
        .copy_strategies(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
            to,
        )
        .await
    {
        Ok(copies) => layout::done(
            &ui,
            &signed,
            format!(
                "Copied {} of {} from {} to {to}.",
                match copies.len() {
                    1 => "1 strategy".to_owned(),
                    n => format!("{n} strategies"),
                },
                target.feature,
                target.environment
            ),
            &format!("{}#env-{to}", target.feature_path()),
        ),
        Err(error) => layout::error(&ui, &signed, &error),
    }
}
