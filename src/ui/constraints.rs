//! The constraints editor, shared by the strategy form and the segment form: per constraint
//! the context field (a select among the context fields), the operator (a select with the
//! specification's names), case-insensitive and inverted checkboxes, and the values: a
//! checkbox per legal value where the field has legal values, else a text area (comma
//! separated or one per line); an operator that takes one value gets one value field.
//!
//! Which widget a row shows depends on its field and operator, so changing either is applied
//! by "Update the form" (the script presses it on change); adding a constraint is a control
//! of its own that names the field first.

use maud::{Markup, html};
use serde_json::{Value, json};

use super::fields::Fields;
use super::problems::Problems;
use crate::model::{Constraint, ContextField, Operator};

/// At most this many constraints are read from a form.
const MAX_ROWS: usize = 200;

/// One constraint as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConstraintRow {
    pub context_name: String,
    pub operator: String,
    pub case_insensitive: bool,
    pub inverted: bool,
    pub values: Vec<String>,
    pub value: String,
    pub remove: bool,
}

impl ConstraintRow {
    /// A new constraint on `field`: `IN`, no value yet.
    pub(crate) fn on(field: &str) -> Self {
        ConstraintRow {
            context_name: field.to_owned(),
            operator: Operator::In.as_str().to_owned(),
            case_insensitive: false,
            inverted: false,
            values: Vec::new(),
            value: String::new(),
            remove: false,
        }
    }

    pub(crate) fn of(constraint: &Constraint) -> Self {
        ConstraintRow {
            context_name: constraint.context_name.clone(),
            operator: constraint.operator.as_str().to_owned(),
            case_insensitive: constraint.is_case_insensitive(),
            inverted: constraint.is_inverted(),
            values: constraint.values.clone().unwrap_or_default(),
            value: constraint.value.clone().unwrap_or_default(),
            remove: false,
        }
    }

    fn single(&self) -> bool {
        Operator::from_name(&self.operator).is_some_and(Operator::takes_single_value)
    }

    /// The constraint as the facade takes it: the operand the operator uses, as typed (an
    /// empty one included, so the facade names it).
    pub(crate) fn to_json(&self) -> Value {
        let mut constraint = json!({
            "contextName": self.context_name,
            "operator": self.operator,
            "caseInsensitive": self.case_insensitive,
            "inverted": self.inverted,
        });
        if self.single() {
            constraint["value"] = Value::String(self.value.trim().to_owned());
        } else {
            constraint["values"] = json!(self.values);
        }
        constraint
    }
}

/// The constraints a form holds under `constraints.*`, in order (removed ones included, so
/// a re-shown form keeps them as typed).
pub(crate) fn rows_of(fields: &Fields) -> Vec<ConstraintRow> {
    let count = fields
        .get("constraints.count")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_ROWS);
    (0..count)
        .map(|i| {
            let key = |what: &str| format!("constraints.{i}.{what}");
            let get = |what: &str| fields.get(&key(what)).unwrap_or_default().to_owned();
            let mut values: Vec<String> = fields
                .all(&key("values"))
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
                .collect();
            values.extend(split_values(&get("valuesText")));
            ConstraintRow {
                context_name: get("contextName"),
                operator: Some(get("operator"))
                    .filter(|op| Operator::from_name(op).is_some())
                    .unwrap_or_else(|| Operator::In.as_str().to_owned()),
                case_insensitive: fields.get(&key("caseInsensitive")).is_some(),
                inverted: fields.get(&key("inverted")).is_some(),
                values,
                value: get("value"),
                remove: fields.get(&key("remove")).is_some(),
            }
        })
        .collect()
}

/// Values typed in a text area: comma separated or one per line, blanks dropped.
pub(crate) fn split_values(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The constraints that are kept, as the facade takes them, and for each the row it came
/// from (the facade's `constraints[i]` is row `from[i]`).
pub(crate) fn kept(rows: &[ConstraintRow]) -> (Vec<Value>, Vec<usize>) {
    rows.iter()
        .enumerate()
        .filter(|(_, row)| !row.remove)
        .map(|(i, row)| (row.to_json(), i))
        .unzip()
}

/// The rows after the form's own buttons: "add a constraint" adds one on the chosen field.
pub(crate) fn with_added(mut rows: Vec<ConstraintRow>, fields: &Fields) -> Vec<ConstraintRow> {
    if fields.get("action") == Some("add-constraint")
        && let Some(field) = fields.get("constraints.add").filter(|f| !f.is_empty())
    {
        rows.push(ConstraintRow::on(field));
    }
    rows
}

/// The field keys of the rows, for placing the facade's problems (`constraints.0.values`…;
/// the facade counts only kept constraints, see [`kept`] and
/// [`Problems::of_rows`](super::problems::Problems::of_rows)).
pub(crate) fn field_keys(rows: &[ConstraintRow]) -> Vec<String> {
    let mut keys = vec!["constraints".to_owned()];
    for i in 0..rows.len() {
        for what in ["", ".contextName", ".operator", ".values", ".value"] {
            keys.push(format!("constraints.{i}{what}"));
        }
    }
    keys
}

/// The editor: every row, then "add a constraint" and "update the form".
pub(crate) fn editor(
    rows: &[ConstraintRow],
    context_fields: &[ContextField],
    problems: &Problems,
) -> Markup {
    html! {
        fieldset.constraints aria-describedby=[problems.described("constraints")] {
            legend { "Constraints" }
            p.hint { "All constraints must hold. Values are compared as text unless the operator says otherwise." }
            (problems.at("constraints"))
            input type="hidden" name="constraints.count" value=(rows.len());
            @if rows.is_empty() { p.muted { "No constraints: everyone the rest of the rule lets in." } }
            @for (i, row) in rows.iter().enumerate() {
                (row_markup(i, row, context_fields, problems))
            }
            div.actions {
                label.inline for="constraints.add" { "Add a constraint on" }
                select id="constraints.add" name="constraints.add" {
                    @for f in context_fields { option value=(f.name) { (f.name) } }
                }
                button.secondary type="submit" name="action" value="add-constraint" { "Add a constraint" }
                button.secondary #refresh type="submit" name="action" value="refresh" { "Update the form" }
            }
            p.hint { "Changed a field or an operator? " em { "Update the form" } " shows the values it takes (nothing is saved)." }
        }
    }
}

fn row_markup(
    i: usize,
    row: &ConstraintRow,
    context_fields: &[ContextField],
    problems: &Problems,
) -> Markup {
    let key = |what: &str| format!("constraints.{i}.{what}");
    let legal: Vec<&str> = context_fields
        .iter()
        .find(|f| f.name == row.context_name)
        .and_then(|f| f.legal_values.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|l| l.value.as_str())
        .collect();
    let known = context_fields.iter().any(|f| f.name == row.context_name);
    let number = i + 1;
    let values_key = key("values");
    html! {
        fieldset.constraint aria-describedby=[problems.described(&format!("constraints.{i}"))] {
            legend { "Constraint " (number) }
            (problems.at(&format!("constraints.{i}")))
            div.grid {
                div {
                    label for=(key("contextName")) { "Context field" }
                    select id=(key("contextName")) name=(key("contextName")) data-role="refresh"
                        aria-describedby=[problems.described(&key("contextName"))] {
                        @if !known { option value=(row.context_name) selected { (row.context_name) } }
                        @for f in context_fields {
                            option value=(f.name) selected[f.name == row.context_name] { (f.name) }
                        }
                    }
                    (problems.at(&key("contextName")))
                }
                div {
                    label for=(key("operator")) { "Operator" }
                    select id=(key("operator")) name=(key("operator")) data-role="refresh"
                        aria-describedby=[problems.described(&key("operator"))] {
                        @for op in Operator::ALL {
                            option value=(op.as_str()) selected[op.as_str() == row.operator] { (op.as_str()) }
                        }
                    }
                    (problems.at(&key("operator")))
                }
                div {
                    input type="checkbox" id=(key("caseInsensitive")) name=(key("caseInsensitive")) value="true" checked[row.case_insensitive];
                    label.inline for=(key("caseInsensitive")) { "Case-insensitive" }
                    br;
                    input type="checkbox" id=(key("inverted")) name=(key("inverted")) value="true" checked[row.inverted];
                    label.inline for=(key("inverted")) { "Inverted (NOT)" }
                    br;
                    input type="checkbox" id=(key("remove")) name=(key("remove")) value="true" checked[row.remove];
                    label.inline for=(key("remove")) { "Remove constraint " (number) }
                }
            }
            @if row.single() {
                label for=(key("value")) { "Value" }
                input type="text" id=(key("value")) name=(key("value")) value=(row.value)
                    class=[problems.invalid(&key("value")).then_some("invalid")]
                    aria-invalid=[problems.invalid(&key("value")).then_some("true")]
                    aria-describedby=[problems.described(&key("value"))];
                (problems.at(&key("value")))
            } @else if !legal.is_empty() {
                fieldset.values id=(values_key) aria-describedby=[problems.described(&values_key)] {
                    legend { "Values (the legal values of " (row.context_name) ")" }
                    div.grid {
                        @for (j, v) in legal.iter().enumerate() {
                            div {
                                input type="checkbox" id=(format!("{values_key}.{j}")) name=(values_key) value=(v)
                                    checked[row.values.iter().any(|x| x == v)];
                                label.inline for=(format!("{values_key}.{j}")) { (v) }
                            }
                        }
                        // Values that are not legal stay as typed, for the facade to name.
                        @for (j, v) in row.values.iter().filter(|v| !legal.contains(&v.as_str())).enumerate() {
                            div {
                                input type="checkbox" id=(format!("{values_key}.other.{j}")) name=(values_key) value=(v) checked;
                                label.inline for=(format!("{values_key}.other.{j}")) { (v) " (not a legal value)" }
                            }
                        }
                    }
                    (problems.at(&values_key))
                }
            } @else {
                label for=(values_key) { "Values (comma separated or one per line)" }
                textarea id=(values_key) name=(key("valuesText")) rows="2"
                    class=[problems.invalid(&values_key).then_some("invalid")]
                    aria-invalid=[problems.invalid(&values_key).then_some("true")]
                    aria-describedby=[problems.described(&values_key)] { (row.values.join("\n")) }
                (problems.at(&values_key))
            }
        }
    }
}

/// A constraint in words, for summaries: `country is NO or SE`.
pub(crate) fn describe(constraint: &Constraint) -> String {
    let values = constraint.values.clone().unwrap_or_default();
    let any = |joiner: &str| values.join(joiner);
    let value = constraint.value.clone().unwrap_or_default();
    let name = &constraint.context_name;
    let not = if constraint.is_inverted() { "not " } else { "" };
    let text = match constraint.operator {
        Operator::In => format!("{name} is {not}{}", any(" or ")),
        Operator::NotIn => {
            let negation = if constraint.is_inverted() { "" } else { "not " };
            format!("{name} is {negation}{}", any(" or "))
        }
        Operator::StrContains => format!("{name} does {not}contain {}", any(" or ")),
        Operator::StrStartsWith => format!("{name} does {not}start with {}", any(" or ")),
        Operator::StrEndsWith => format!("{name} does {not}end with {}", any(" or ")),
        Operator::NumEq => format!("{name} {not}= {value}"),
        Operator::NumGt => format!("{name} {not}> {value}"),
        Operator::NumGte => format!("{name} {not}≥ {value}"),
        Operator::NumLt => format!("{name} {not}< {value}"),
        Operator::NumLte => format!("{name} {not}≤ {value}"),
        Operator::DateAfter => format!("{name} is {not}after {value}"),
        Operator::DateBefore => format!("{name} is {not}before {value}"),
        Operator::SemverEq => format!("{name} is {not}version {value}"),
        Operator::SemverGt => format!("{name} is {not}a version above {value}"),
        Operator::SemverLt => format!("{name} is {not}a version below {value}"),
    };
    if constraint.is_case_insensitive() && constraint.operator.takes_values() {
        format!("{text} (any case)")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Fields {
        Fields(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn rows_are_read_with_their_values_from_checkboxes_or_text() {
        let form = fields(&[
            ("constraints.count", "2"),
            ("constraints.0.contextName", "country"),
            ("constraints.0.operator", "IN"),
            ("constraints.0.values", "NO"),
            ("constraints.0.values", "SE"),
            ("constraints.1.contextName", "userId"),
            ("constraints.1.operator", "STR_CONTAINS"),
            ("constraints.1.valuesText", "a, b\nc\n\n"),
            ("constraints.1.inverted", "true"),
        ]);
        let rows = rows_of(&form);
        assert_eq!(rows[0].values, ["NO", "SE"]);
        assert_eq!(rows[1].values, ["a", "b", "c"]);
        assert!(rows[1].inverted && !rows[1].case_insensitive);
        assert_eq!(
            rows[0].to_json(),
            json!({"contextName": "country", "operator": "IN", "caseInsensitive": false, "inverted": false, "values": ["NO", "SE"]})
        );
        let single = ConstraintRow {
            operator: "NUM_GT".into(),
            value: " 3 ".into(),
            ..ConstraintRow::on("age")
        };
        assert_eq!(single.to_json()["value"], json!("3"));
        assert!(single.to_json().get("values").is_none());
    }

    #[test]
    fn constraints_read_as_words() {
        let c = Constraint {
            context_name: "country".into(),
            operator: Operator::In,
            case_insensitive: None,
            inverted: None,
            values: Some(vec!["NO".into(), "SE".into()]),
            value: None,
        };
        assert_eq!(describe(&c), "country is NO or SE");
        let c = Constraint {
            operator: Operator::NumGte,
            values: None,
            value: Some("18".into()),
            inverted: Some(true),
            ..c
        };
        assert_eq!(describe(&c), "country not ≥ 18");
    }
}
