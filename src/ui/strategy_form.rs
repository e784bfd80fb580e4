//! The strategy form: its kind's parameters (for `flexibleRollout` the rollout as a number
//! with its share shown, stickiness and group id), title and disabled state, constraints,
//! segments and strategy variants. What it sends is the strategy as the admin API takes it;
//! the facade checks it (rollout 0–100, constraint values, variant weights) and the page
//! shows each problem next to its field.

use std::collections::BTreeMap;

use maud::{Markup, html};
use serde_json::{Value, json};

use super::constraints::{self, ConstraintRow};
use super::fields::Fields;
use super::problems::Problems;
use super::strategy_variants::{self, VariantRow};
use crate::model::{ContextField, FeatureStrategy, Segment, StrategyDefinition};

/// The kind Unleash adds by default, with its own widgets.
pub(crate) const FLEXIBLE_ROLLOUT: &str = "flexibleRollout";

/// The stickiness every installation offers; context fields marked for stickiness follow.
const STICKINESS: [&str; 4] = ["default", "userId", "sessionId", "random"];

/// A strategy as typed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub kind: String,
    pub title: String,
    pub disabled: bool,
    pub parameters: BTreeMap<String, String>,
    pub constraints: Vec<ConstraintRow>,
    pub segments: Vec<i64>,
    pub variants: Vec<VariantRow>,
}

impl Draft {
    /// A new strategy of `kind` for `feature`: a `flexibleRollout` starts at 100 % of
    /// everyone, grouped by the feature (what the facade would default to).
    pub(crate) fn new(kind: &str, feature: &str) -> Self {
        let mut parameters = BTreeMap::new();
        if kind == FLEXIBLE_ROLLOUT {
            parameters.insert("rollout".to_owned(), "100".to_owned());
            parameters.insert("stickiness".to_owned(), "default".to_owned());
            parameters.insert("groupId".to_owned(), feature.to_owned());
        }
        Draft {
            kind: kind.to_owned(),
            parameters,
            ..Draft::default()
        }
    }

    pub(crate) fn of(strategy: &FeatureStrategy) -> Self {
        Draft {
            kind: strategy.name.clone(),
            title: strategy.title.clone().flatten().unwrap_or_default(),
            disabled: strategy.is_disabled(),
            parameters: strategy.parameters.clone(),
            constraints: strategy.constraints.iter().map(ConstraintRow::of).collect(),
            segments: strategy.segments.clone(),
            variants: strategy.variants.iter().map(VariantRow::of).collect(),
        }
    }

    /// The draft a form posted, with the rows its "add" buttons asked for.
    pub(crate) fn from_form(fields: &Fields) -> Self {
        let mut parameters = BTreeMap::new();
        for (name, value) in &fields.0 {
            if let Some(parameter) = name.strip_prefix("parameters.") {
                let list = fields.get(&format!("list.{parameter}")).is_some();
                let value = if list {
                    constraints::split_values(value).join(",")
                } else {
                    value.trim().to_owned()
                };
                parameters.insert(parameter.to_owned(), value);
            }
        }
        // An unchecked boolean parameter sends nothing: it is false.
        for name in fields.all("boolean") {
            parameters
                .entry(name.to_owned())
                .or_insert_with(|| "false".to_owned());
        }
        Draft {
            kind: fields.get("kind").unwrap_or_default().to_owned(),
            title: fields.get("title").unwrap_or_default().trim().to_owned(),
            disabled: fields.get("disabled").is_some(),
            parameters,
            constraints: constraints::with_added(constraints::rows_of(fields), fields),
            segments: fields
                .all("segments")
                .filter_map(|s| s.parse().ok())
                .collect(),
            variants: strategy_variants::rows_of(fields),
        }
    }

    /// The strategy as the admin API takes it, with the rows its constraints and variants
    /// came from. A new strategy without a title has none; an edited one's title is what
    /// was typed (an update keeps a `null` title as it was).
    pub(crate) fn to_json(&self, new: bool) -> (Value, Vec<usize>, Vec<usize>) {
        let (constraints, from_constraints) = constraints::kept(&self.constraints);
        let (variants, from_variants) = strategy_variants::kept(&self.variants);
        let title = if new && self.title.is_empty() {
            Value::Null
        } else {
            Value::String(self.title.clone())
        };
        let strategy = json!({
            "name": self.kind,
            "title": title,
            "disabled": self.disabled,
            "parameters": self.parameters,
            "constraints": constraints,
            "segments": self.segments,
            "variants": variants,
        });
        (strategy, from_constraints, from_variants)
    }

    /// The field keys the facade's problems may name.
    pub(crate) fn field_keys(&self, definition: Option<&StrategyDefinition>) -> Vec<String> {
        let mut keys = vec![
            "name".to_owned(),
            "title".to_owned(),
            "disabled".to_owned(),
            "parameters".to_owned(),
            "segments".to_owned(),
        ];
        keys.extend(self.parameters.keys().map(|p| format!("parameters.{p}")));
        keys.extend(
            definition
                .iter()
                .flat_map(|d| &d.parameters)
                .map(|p| format!("parameters.{}", p.name)),
        );
        keys.extend(constraints::field_keys(&self.constraints));
        keys.extend(strategy_variants::field_keys(&self.variants));
        keys
    }
}

/// What the form draws on besides the draft.
pub(crate) struct Catalogue<'a> {
    pub definition: Option<&'a StrategyDefinition>,
    pub context_fields: &'a [ContextField],
    /// The segments this feature's project may use.
    pub segments: &'a [Segment],
}

impl Catalogue<'_> {
    fn stickiness(&self) -> Vec<String> {
        let mut all: Vec<String> = STICKINESS.iter().map(|s| (*s).to_owned()).collect();
        for field in self.context_fields {
            if field.stickiness == Some(true) && !all.contains(&field.name) {
                all.push(field.name.clone());
            }
        }
        all
    }
}

/// The share a rollout percentage gives, in words: `25 % of users`.
pub(crate) fn share(rollout: &str, stickiness: &str) -> String {
    let who = match stickiness {
        "sessionId" => "of sessions",
        "random" => "of requests, at random",
        "default" | "userId" | "" => "of users",
        _ => "by",
    };
    match rollout.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) && who == "by" => format!("{p} % by {stickiness}"),
        Ok(p) if (0.0..=100.0).contains(&p) => format!("{p} % {who}"),
        _ => "not a percentage 0–100".to_owned(),
    }
}

/// The form's fields (the caller wraps them in its `<form>` with the CSRF token and buttons).
pub(crate) fn fields(draft: &Draft, catalogue: &Catalogue<'_>, problems: &Problems) -> Markup {
    let stickiness = catalogue.stickiness();
    html! {
        input type="hidden" name="kind" value=(draft.kind);
        div.grid {
            div {
                label for="title" { "Title (optional)" }
                input #title type="text" name="title" value=(draft.title) aria-describedby=[problems.described("title")];
                (problems.at("title"))
            }
            div {
                label for="disabled" { "State" }
                input #disabled type="checkbox" name="disabled" value="true" checked[draft.disabled];
                label.inline for="disabled" { "Disabled (kept, but not evaluated)" }
            }
        }
        (problems.at("name"))
        (parameters(draft, catalogue, &stickiness, problems))
        (constraints::editor(&draft.constraints, catalogue.context_fields, problems))
        (segments(draft, catalogue.segments, problems))
        (strategy_variants::editor(&draft.variants, &stickiness, problems))
    }
}

fn parameters(
    draft: &Draft,
    catalogue: &Catalogue<'_>,
    stickiness: &[String],
    problems: &Problems,
) -> Markup {
    let value = |name: &str| draft.parameters.get(name).cloned().unwrap_or_default();
    let declared: Vec<&str> = catalogue
        .definition
        .map(|d| d.parameters.iter().map(|p| p.name.as_str()).collect())
        .unwrap_or_default();
    let undeclared: Vec<&String> = draft
        .parameters
        .keys()
        .filter(|k| !declared.contains(&k.as_str()))
        .collect();
    html! {
        fieldset aria-describedby=[problems.described("parameters")] {
            legend { "Parameters" }
            (problems.at("parameters"))
            @if draft.kind == FLEXIBLE_ROLLOUT {
                div.grid {
                    div {
                        label for="parameters.rollout" { "Rollout (%)" }
                        (percentage("rollout", &value("rollout"), &value("stickiness"), problems))
                    }
                    div {
                        label for="parameters.stickiness" { "Stickiness" }
                        select id="parameters.stickiness" name="parameters.stickiness" data-role="stickiness"
                            aria-describedby=[problems.described("parameters.stickiness")] {
                            @let current = value("stickiness");
                            @if !stickiness.contains(&current) && !current.is_empty() {
                                option value=(current) selected { (current) }
                            }
                            @for s in stickiness { option value=(s) selected[*s == current] { (s) } }
                        }
                        (problems.at("parameters.stickiness"))
                    }
                    div {
                        label for="parameters.groupId" { "Group id" }
                        input type="text" id="parameters.groupId" name="parameters.groupId" value=(value("groupId"))
                            aria-describedby=[problems.described("parameters.groupId")];
                        (problems.at("parameters.groupId"))
                    }
                }
            } @else if let Some(definition) = catalogue.definition {
                @if definition.parameters.is_empty() { p.muted { "This strategy takes no parameters." } }
                div.grid {
                    @for p in &definition.parameters {
                        div { (parameter(&p.name, &p.parameter_type, p.required, &value(&p.name), p.description.as_deref(), problems)) }
                    }
                }
            }
            @for name in undeclared {
                @if draft.kind != FLEXIBLE_ROLLOUT || !["rollout", "stickiness", "groupId"].contains(&name.as_str()) {
                    div { (parameter(name, "string", false, &value(name), None, problems)) }
                }
            }
        }
    }
}

/// A percentage as a number input with its share next to it (the script updates it live).
fn percentage(name: &str, value: &str, stickiness: &str, problems: &Problems) -> Markup {
    let key = format!("parameters.{name}");
    let invalid = problems.invalid(&key);
    let share_id = format!("{key}.share");
    let described = match problems.described(&key) {
        Some(error) => format!("{share_id} {error}"),
        None => share_id.clone(),
    };
    html! {
        input.weight type="number" min="0" max="100" step="1" id=(key) name=(key) value=(value)
            data-role="rollout" class=[invalid.then_some("invalid")]
            aria-invalid=[invalid.then_some("true")] aria-describedby=(described);
        " "
        output.share id=(share_id) for=(key) data-role="share" { (share(value, stickiness)) }
        (problems.at(&key))
    }
}

/// One parameter by its declared type: percentage, list, boolean, number or string.
fn parameter(
    name: &str,
    kind: &str,
    required: bool,
    value: &str,
    description: Option<&str>,
    problems: &Problems,
) -> Markup {
    let key = format!("parameters.{name}");
    let invalid = problems.invalid(&key);
    let hint_id = format!("{key}.hint");
    let has_hint = description.is_some_and(|d| !d.is_empty());
    let described: Vec<String> = [has_hint.then(|| hint_id.clone()), problems.described(&key)]
        .into_iter()
        .flatten()
        .collect();
    let described = (!described.is_empty()).then(|| described.join(" "));
    html! {
        label for=(key) { (name) @if required { " (required)" } @if kind == "list" { " — comma separated or one per line" } }
        @match kind {
            "percentage" => { (percentage(name, value, "default", problems)) }
            "list" => {
                input type="hidden" name=(format!("list.{name}")) value="1";
                textarea id=(key) name=(key) rows="2" class=[invalid.then_some("invalid")]
                    aria-invalid=[invalid.then_some("true")] aria-describedby=[described] { (value.split(',').collect::<Vec<_>>().join("\n")) }
            }
            "boolean" => {
                input type="hidden" name="boolean" value=(name);
                input type="checkbox" id=(key) name=(key) value="true" checked[value == "true"] aria-describedby=[described];
            }
            "number" => {
                input type="text" inputmode="decimal" id=(key) name=(key) value=(value) class=[invalid.then_some("invalid")]
                    aria-invalid=[invalid.then_some("true")] aria-describedby=[described];
            }
            _ => {
                input type="text" id=(key) name=(key) value=(value) class=[invalid.then_some("invalid")]
                    aria-invalid=[invalid.then_some("true")] aria-describedby=[described];
            }
        }
        @if let Some(d) = description.filter(|d| !d.is_empty()) { span.hint id=(hint_id) { (d) } }
        @if kind != "percentage" { (problems.at(&key)) }
    }
}

fn segments(draft: &Draft, available: &[Segment], problems: &Problems) -> Markup {
    html! {
        fieldset aria-describedby=[problems.described("segments")] {
            legend { "Segments" }
            p.hint { "Who is in every attached segment (and passes the constraints) is let in." }
            (problems.at("segments"))
            @if available.is_empty() { p.muted { "There are no segments this project may use." } }
            div.grid {
                @for s in available {
                    div {
                        input type="checkbox" id=(format!("segments.{}", s.id)) name="segments" value=(s.id)
                            checked[draft.segments.contains(&s.id)];
                        label.inline for=(format!("segments.{}", s.id)) { (s.name) }
                    }
                }
                // An attached segment the project may no longer use stays, for the facade to name.
                @for id in draft.segments.iter().filter(|id| !available.iter().any(|s| s.id == **id)) {
                    div {
                        input type="checkbox" id=(format!("segments.{id}")) name="segments" value=(id) checked;
                        label.inline for=(format!("segments.{id}")) { "segment " (id) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posted_form_is_the_strategy_the_api_takes() {
        let form = Fields(
            [
                ("kind", "flexibleRollout"),
                ("title", " Nordics "),
                ("parameters.rollout", "25"),
                ("parameters.stickiness", "userId"),
                ("parameters.groupId", "checkout"),
                ("constraints.count", "1"),
                ("constraints.0.contextName", "country"),
                ("constraints.0.operator", "IN"),
                ("constraints.0.values", "NO"),
                ("constraints.0.values", "SE"),
                ("segments", "3"),
                ("variants.count", "1"),
                ("variants.0.name", "blue"),
                ("variants.0.weightType", "variable"),
                ("variants.0.stickiness", "default"),
                ("variants.0.payloadType", "json"),
                ("variants.0.payloadValue", "{}"),
            ]
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        );
        let draft = Draft::from_form(&form);
        let (json, from_c, from_v) = draft.to_json(true);
        assert_eq!(json["title"], "Nordics");
        assert_eq!(json["parameters"]["rollout"], "25");
        assert_eq!(json["constraints"][0]["values"], json!(["NO", "SE"]));
        assert_eq!(json["segments"], json!([3]));
        assert_eq!(json["variants"][0]["payload"]["type"], "json");
        assert_eq!((from_c, from_v), (vec![0], vec![0]));
        assert_eq!(share("25", "userId"), "25 % of users");
        assert_eq!(share("150", "default"), "not a percentage 0–100");
    }

    #[test]
    fn list_parameters_are_joined_with_commas() {
        let form = Fields(
            [
                ("kind", "userWithId"),
                ("parameters.userIds", "alice\nbob, carol"),
                ("list.userIds", "1"),
            ]
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        );
        let draft = Draft::from_form(&form);
        assert_eq!(draft.parameters["userIds"], "alice,bob,carol");
    }
}
