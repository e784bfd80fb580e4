//! The variants of a feature in an environment: the list as a form (name, weight and share,
//! fixed or variable, stickiness, payload, overrides), saved as the JSON Patch of the
//! difference through [`ToggleAdmin::patch_variants`](crate::ToggleAdmin::patch_variants).
//!
//! Weights are entered in percent with one decimal (Unleash's 0–1000 scale divided by ten).
//! A value that is not a number is sent as it was typed, so the facade's validation names it
//! (`/2/weight`) and the page shows the message next to that field. The form carries the
//! list it was made from; if someone saved meanwhile, the page says so and keeps the edits.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde_json::{Value, json};

use super::fields::Fields;
use super::layout::{self, Page, seg};
use super::session::Signed;
use super::{Ui, csrf};
use crate::error::{Error, ErrorDetail};
use crate::model::{Variant, WeightType};

/// At most this many rows are read from a form.
const MAX_ROWS: usize = 1000;

/// The payload types a variant may have, as the form offers them.
const PAYLOAD_TYPES: [&str; 4] = ["string", "json", "csv", "number"];

/// One row of the form, as typed.
#[derive(Debug, Clone, Default)]
struct Row {
    name: String,
    weight_type: String,
    weight: String,
    stickiness: String,
    payload_type: String,
    payload_value: String,
    overrides: String,
    remove: bool,
}

impl Row {
    fn blank() -> Self {
        Row {
            weight_type: "variable".to_owned(),
            stickiness: "default".to_owned(),
            ..Row::default()
        }
    }

    fn of(variant: &Variant) -> Self {
        Row {
            name: variant.name.clone(),
            weight_type: variant
                .weight_type
                .unwrap_or(WeightType::Variable)
                .as_str()
                .to_owned(),
            weight: percent(variant.weight),
            stickiness: variant
                .stickiness
                .clone()
                .unwrap_or_else(|| "default".to_owned()),
            payload_type: variant
                .payload
                .as_ref()
                .map(|p| p.payload_type.as_str().to_owned())
                .unwrap_or_default(),
            payload_value: variant
                .payload
                .as_ref()
                .map(|p| p.value.clone())
                .unwrap_or_default(),
            overrides: variant
                .overrides
                .iter()
                .flatten()
                .map(|o| format!("{}: {}", o.context_name, o.values.join(", ")))
                .collect::<Vec<_>>()
                .join("\n"),
            remove: false,
        }
    }

    /// Nothing typed but defaults: not a variant.
    fn is_blank(&self) -> bool {
        self.name.trim().is_empty()
            && self.weight.trim().is_empty()
            && self.payload_value.trim().is_empty()
            && self.overrides.trim().is_empty()
    }

    /// The variant the row describes, as the JSON the facade validates.
    fn to_json(&self) -> Value {
        let mut variant = serde_json::Map::new();
        variant.insert("name".into(), Value::String(self.name.trim().to_owned()));
        let fixed = self.weight_type == "fix";
        variant.insert("weight".into(), weight_json(&self.weight, fixed));
        variant.insert("weightType".into(), Value::String(self.weight_type.clone()));
        let stickiness = self.stickiness.trim();
        variant.insert(
            "stickiness".into(),
            Value::String(
                if stickiness.is_empty() {
                    "default"
                } else {
                    stickiness
                }
                .to_owned(),
            ),
        );
        if !self.payload_type.is_empty() || !self.payload_value.is_empty() {
            variant.insert(
                "payload".into(),
                json!({ "type": self.payload_type, "value": self.payload_value }),
            );
        }
        let overrides: Vec<Value> = self
            .overrides
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|line| {
                let (name, values) = line.split_once(':').unwrap_or((line, ""));
                let values: Vec<&str> = values
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .collect();
                json!({ "contextName": name.trim(), "values": values })
            })
            .collect();
        if !overrides.is_empty() {
            variant.insert("overrides".into(), Value::Array(overrides));
        }
        Value::Object(variant)
    }
}

/// A weight on the 0–1000 scale in percent, one decimal.
pub(crate) fn percent(weight: u32) -> String {
    format!("{}.{}", weight / 10, weight % 10)
}

/// The weight typed in percent on the 0–1000 scale; text that is not a number stays text,
/// for the facade to name. A variable variant's weight is computed, so a blank one is 0.
pub(crate) fn weight_json(typed: &str, fixed: bool) -> Value {
    let typed = typed.trim().trim_end_matches('%').trim();
    if typed.is_empty() {
        return if fixed { Value::Null } else { json!(0) };
    }
    match typed.replace(',', ".").parse::<f64>() {
        Ok(p) if p.is_finite() && (p * 10.0).abs() < 1e12 => {
            // A whole number in a range an i64 holds: the cast is exact.
            #[allow(clippy::cast_possible_truncation)]
            let permille = (p * 10.0).round() as i64;
            json!(permille)
        }
        _ => Value::String(typed.to_owned()),
    }
}

/// What a form posted: its rows, and the list it was made from.
fn rows_of(fields: &Fields) -> Vec<Row> {
    let count = fields
        .get("rows")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_ROWS);
    (0..count)
        .map(|i| {
            let get = |what: &str| {
                fields
                    .get(&format!("v{i}.{what}"))
                    .unwrap_or_default()
                    .to_owned()
            };
            Row {
                name: get("name"),
                weight_type: if get("weightType") == "fix" {
                    "fix"
                } else {
                    "variable"
                }
                .to_owned(),
                weight: get("weight"),
                stickiness: get("stickiness"),
                payload_type: get("payloadType"),
                payload_value: get("payloadValue"),
                overrides: get("overrides"),
                remove: fields.get(&format!("v{i}.remove")).is_some(),
            }
        })
        .collect()
}

/// The list the rows describe, and for each of its variants the row it came from.
fn desired(rows: &[Row]) -> (Vec<Value>, Vec<usize>) {
    rows.iter()
        .enumerate()
        .filter(|(_, row)| !row.remove && !row.is_blank())
        .map(|(i, row)| (row.to_json(), i))
        .unzip()
}

/// The share of 100 % each row would get, as the facade distributes weights; `None` for a
/// row that is removed or blank, or for all when the weights cannot be distributed.
fn shares(rows: &[Row]) -> Vec<Option<u32>> {
    let (list, from) = desired(rows);
    let variants: Option<Vec<Variant>> = list
        .into_iter()
        .map(|v| serde_json::from_value::<Variant>(v).ok())
        .collect();
    let mut out = vec![None; rows.len()];
    if let Some(Ok(weighted)) = variants.map(crate::variants::distribute_weights) {
        for (variant, row) in weighted.iter().zip(from) {
            if let Some(slot) = out.get_mut(row) {
                *slot = Some(variant.weight);
            }
        }
    }
    out
}

/// Where the variants page of a feature environment is.
struct Target {
    project: String,
    feature: String,
    environment: String,
}

impl Target {
    fn path(&self, ui: &Ui) -> String {
        ui.url(&format!(
            "/projects/{}/features/{}/environments/{}/variants",
            seg(&self.project),
            seg(&self.feature),
            seg(&self.environment)
        ))
    }
}

/// `GET …/variants`.
pub(crate) async fn page(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment)): Path<(String, String, String)>,
) -> Response {
    let target = Target {
        project,
        feature,
        environment,
    };
    match ui
        .admin
        .variants(
            signed.caller(),
            &target.project,
            &target.feature,
            &target.environment,
        )
        .await
    {
        Ok(current) => {
            let rows: Vec<Row> = current.variants.iter().map(Row::of).collect();
            let original = serde_json::to_string(&current.variants).unwrap_or_default();
            let form = Form {
                target: &target,
                rows,
                original: &original,
                problem: None,
                errors: BTreeMap::new(),
            };
            layout::render(&ui, Some(&signed), &form.page(&ui, &signed), StatusCode::OK)
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// `POST …/variants`: add a row, or save.
pub(crate) async fn save(
    State(ui): State<Ui>,
    signed: Signed,
    Path((project, feature, environment)): Path<(String, String, String)>,
    parts: Parts,
    fields: Fields,
) -> Response {
    if let Some(refused) = layout::csrf_check(&ui, &signed, &parts.headers, &fields) {
        return refused;
    }
    let target = Target {
        project,
        feature,
        environment,
    };
    let caller = signed.caller();
    let rows = rows_of(&fields);
    let original = fields.get("original").unwrap_or_default().to_owned();
    let form = |rows, original: &str, problem: Option<Markup>, errors, status| {
        let form = Form {
            target: &target,
            rows,
            original,
            problem,
            errors,
        };
        layout::render(&ui, Some(&signed), &form.page(&ui, &signed), status)
    };
    if fields.get("action") == Some("add-row") {
        return form(rows, &original, None, BTreeMap::new(), StatusCode::OK);
    }
    let current = match ui
        .admin
        .variants(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
        )
        .await
    {
        Ok(current) => current,
        Err(error) => return layout::error(&ui, &signed, &error),
    };
    let current_json = serde_json::to_value(&current.variants).unwrap_or(Value::Null);
    let seen: Value = serde_json::from_str(&original).unwrap_or(Value::Null);
    if seen != current_json {
        let latest = serde_json::to_string(&current.variants).unwrap_or_default();
        let problem = html! {
            div.warning role="alert" {
                p { "Someone changed these variants while you were editing them. Your edits are kept below; the current variants are:" }
                ul {
                    @for v in &current.variants {
                        li { code { (v.name) } " – " (percent(v.weight)) " %" }
                    }
                }
                p { "Save again to replace them with yours." }
            }
        };
        return form(
            rows,
            &latest,
            Some(problem),
            BTreeMap::new(),
            StatusCode::CONFLICT,
        );
    }
    let (list, from) = desired(&rows);
    let patch = json_patch::diff(&current_json, &Value::Array(list));
    if patch.0.is_empty() {
        ui.sessions.flash(&signed.id, "Nothing changed.".to_owned());
        return Redirect::to(&target.path(&ui)).into_response();
    }
    match ui
        .admin
        .patch_variants(
            caller,
            &target.project,
            &target.feature,
            &target.environment,
            &patch,
        )
        .await
    {
        Ok(saved) => {
            let summary: Vec<String> = saved
                .variants
                .iter()
                .map(|v| format!("{} {} %", v.name, percent(v.weight)))
                .collect();
            let message = if summary.is_empty() {
                "Saved: no variants.".to_owned()
            } else {
                format!("Saved: {}.", summary.join(", "))
            };
            ui.sessions.flash(&signed.id, message);
            Redirect::to(&target.path(&ui)).into_response()
        }
        Err(error @ Error::Validation { .. }) => {
            let (errors, general) = place(layout::error_details(&error), &from);
            let problem = html! {
                div.error role="alert" {
                    p { "Not saved: " (error) }
                    @if !general.is_empty() {
                        ul { @for d in &general { li { (d) } } }
                    }
                    p { "The problems are shown next to their fields." }
                }
            };
            form(
                rows,
                &original,
                Some(problem),
                errors,
                StatusCode::BAD_REQUEST,
            )
        }
        Err(error) => layout::error(&ui, &signed, &error),
    }
}

/// The messages of `details` by (row, field) where their path names one (`/2/weight` is the
/// field `weight` of the row the list's third variant came from), and the others.
fn place(details: &[ErrorDetail], from: &[usize]) -> (Placed, Vec<String>) {
    let mut placed: BTreeMap<(usize, String), Vec<String>> = BTreeMap::new();
    let mut general = Vec::new();
    for detail in details {
        let target = detail.path.as_deref().and_then(|path| {
            let mut parts = path.trim_start_matches('/').split('/');
            let index: usize = parts.next()?.parse().ok()?;
            let row = *from.get(index)?;
            let field = match parts.next() {
                Some("payload") => "payload",
                Some(f @ ("name" | "weight" | "weightType" | "stickiness" | "overrides")) => f,
                _ => "name",
            };
            Some((row, field.to_owned()))
        });
        match target {
            // The facade speaks of the 0–1000 scale; the form is in percent.
            Some(key) if key.1 == "weight" => placed
                .entry(key)
                .or_default()
                .push(format!("{} (1000 is 100 %)", detail.message)),
            Some(key) => placed.entry(key).or_default().push(detail.message.clone()),
            None => general.push(detail.to_string()),
        }
    }
    (placed, general)
}

/// Error messages by (row, field).
type Placed = BTreeMap<(usize, String), Vec<String>>;

/// The form as shown.
struct Form<'a> {
    target: &'a Target,
    rows: Vec<Row>,
    original: &'a str,
    problem: Option<Markup>,
    errors: Placed,
}

impl Form<'_> {
    fn page(mut self, ui: &Ui, signed: &Signed) -> Page {
        // Always one blank row to add a variant in, with or without the script.
        if self.rows.last().is_none_or(|r| !r.is_blank()) {
            self.rows.push(Row::blank());
        }
        let shares = shares(&self.rows);
        let t = self.target;
        let feature_url = ui.url(&format!(
            "/projects/{}/features/{}",
            seg(&t.project),
            seg(&t.feature)
        ));
        let title = format!("Variants of {} in {}", t.feature, t.environment);
        let body = html! {
            p {
                a href=(feature_url) { "← " (t.feature) }
                " · project " (t.project) " · environment " (t.environment)
            }
            @if let Some(problem) = &self.problem { (problem) }
            p.hint {
                "Weights are in percent. Fixed variants keep their weight; the variable ones share what is left evenly. "
                "The server sorts the variants by name. Overrides: one line per context field, as "
                code { "userId: alice, bob" } "."
            }
            form method="post" action=(t.path(ui)) novalidate {
                (csrf::input(signed))
                input type="hidden" name="original" value=(self.original);
                input type="hidden" name="rows" value=(self.rows.len());
                table.variants {
                    caption.visually-hidden { "Variants" }
                    thead { tr {
                        th scope="col" { "Name" }
                        th scope="col" { "Weight type" }
                        th scope="col" { "Weight %" }
                        th scope="col" { "Share" }
                        th scope="col" { "Stickiness" }
                        th scope="col" { "Payload" }
                        th scope="col" { "Overrides" }
                        th scope="col" { "Remove" }
                    } }
                    tbody {
                        @for (i, row) in self.rows.iter().enumerate() {
                            (self.row(i, row, shares.get(i).copied().flatten()))
                        }
                    }
                }
                p #share-total.error aria-live="polite" {}
                div.actions {
                    button type="submit" name="action" value="save" { "Save variants" }
                    button #add-row.secondary type="submit" name="action" value="add-row" { "Add a variant" }
                    a href=(t.path(ui)) { "Discard changes" }
                }
            }
        };
        Page::new(title, body)
    }

    fn field_errors(&self, i: usize, field: &str) -> Option<Markup> {
        let messages = self.errors.get(&(i, field.to_owned()))?;
        Some(html! {
            @for m in messages { span.field-error id=(format!("v{i}.{field}.error")) { (m) } }
        })
    }

    fn row(&self, i: usize, row: &Row, share: Option<u32>) -> Markup {
        let id = |f: &str| format!("v{i}.{f}");
        let invalid = |f: &str| self.errors.contains_key(&(i, f.to_owned()));
        let described = |f: &str| invalid(f).then(|| format!("v{i}.{f}.error"));
        html! {
            tr.variant {
                td {
                    label.visually-hidden for=(id("name")) { "Name of variant " (i + 1) }
                    input type="text" id=(id("name")) name=(id("name")) value=(row.name)
                        data-role="name" class=[invalid("name").then_some("invalid")]
                        aria-invalid=[invalid("name").then_some("true")]
                        aria-describedby=[described("name")];
                    @if let Some(e) = self.field_errors(i, "name") { (e) }
                }
                td {
                    label.visually-hidden for=(id("weightType")) { "Weight type of variant " (i + 1) }
                    select id=(id("weightType")) name=(id("weightType")) data-role="weightType" {
                        option value="variable" selected[row.weight_type != "fix"] { "variable" }
                        option value="fix" selected[row.weight_type == "fix"] { "fixed" }
                    }
                    @if let Some(e) = self.field_errors(i, "weightType") { (e) }
                }
                td {
                    label.visually-hidden for=(id("weight")) { "Weight in percent of variant " (i + 1) }
                    input.weight type="text" inputmode="decimal" id=(id("weight")) name=(id("weight"))
                        value=(row.weight) data-role="weight"
                        class=[invalid("weight").then_some("invalid")]
                        aria-invalid=[invalid("weight").then_some("true")]
                        aria-describedby=[described("weight")];
                    @if let Some(e) = self.field_errors(i, "weight") { (e) }
                }
                td.num {
                    output.share for=(id("weight")) {
                        @match share { Some(w) => { (percent(w)) " %" } None => "–" }
                    }
                }
                td {
                    label.visually-hidden for=(id("stickiness")) { "Stickiness of variant " (i + 1) }
                    input type="text" id=(id("stickiness")) name=(id("stickiness")) value=(row.stickiness)
                        aria-describedby=[described("stickiness")];
                    @if let Some(e) = self.field_errors(i, "stickiness") { (e) }
                }
                td {
                    label.visually-hidden for=(id("payloadType")) { "Payload type of variant " (i + 1) }
                    select id=(id("payloadType")) name=(id("payloadType")) {
                        option value="" selected[row.payload_type.is_empty()] { "no payload" }
                        @for t in PAYLOAD_TYPES {
                            option value=(t) selected[row.payload_type == t] { (t) }
                        }
                    }
                    label.visually-hidden for=(id("payloadValue")) { "Payload value of variant " (i + 1) }
                    textarea id=(id("payloadValue")) name=(id("payloadValue")) rows="2"
                        class=[invalid("payload").then_some("invalid")]
                        aria-describedby=[described("payload")] { (row.payload_value) }
                    @if let Some(e) = self.field_errors(i, "payload") { (e) }
                }
                td {
                    label.visually-hidden for=(id("overrides")) { "Overrides of variant " (i + 1) }
                    textarea id=(id("overrides")) name=(id("overrides")) rows="2"
                        class=[invalid("overrides").then_some("invalid")]
                        aria-describedby=[described("overrides")] { (row.overrides) }
                    @if let Some(e) = self.field_errors(i, "overrides") { (e) }
                }
                td {
                    input type="checkbox" id=(id("remove")) name=(id("remove")) value="1"
                        data-role="remove" checked[row.remove];
                    label.inline for=(id("remove")) { span.visually-hidden { "Remove variant " (i + 1) } "remove" }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_typed_in_percent_become_the_thousand_scale() {
        assert_eq!(weight_json("33.3", true), json!(333));
        assert_eq!(weight_json("50 %", true), json!(500));
        assert_eq!(weight_json("12,5", true), json!(125));
        assert_eq!(weight_json("", false), json!(0));
        assert_eq!(weight_json("", true), Value::Null);
        assert_eq!(weight_json("lots", true), json!("lots"));
        assert_eq!(percent(333), "33.3");
    }

    #[test]
    fn errors_land_on_the_row_their_path_names() {
        let details = [
            ErrorDetail::at("/1/weight", "too heavy"),
            ErrorDetail::at("/0/payload/value", "not JSON"),
            ErrorDetail::general("whole"),
        ];
        // The list's variants came from rows 0 and 2 (row 1 was removed).
        let (placed, general) = place(&details, &[0, 2]);
        assert_eq!(
            placed[&(2, "weight".to_owned())],
            ["too heavy (1000 is 100 %)"]
        );
        assert_eq!(placed[&(0, "payload".to_owned())], ["not JSON"]);
        assert_eq!(general, ["whole"]);
    }

    #[test]
    fn overrides_are_read_one_context_field_a_line() {
        let row = Row {
            name: "blue".into(),
            weight_type: "variable".into(),
            overrides: "userId: a, b\n\n country:se".into(),
            ..Row::blank()
        };
        assert_eq!(
            row.to_json()["overrides"],
            json!([
                { "contextName": "userId", "values": ["a", "b"] },
                { "contextName": "country", "values": ["se"] }
            ])
        );
    }
}
