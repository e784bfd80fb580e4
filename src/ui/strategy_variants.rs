//! A strategy's variants on the strategy form: name, fixed or variable weight (in percent),
//! stickiness and a payload (type and value). The facade validates and weighs them; a
//! problem is shown next to its field (`variants.2.weight`).

use maud::{Markup, html};
use serde_json::{Value, json};

use super::fields::Fields;
use super::problems::Problems;
use super::variants::{percent, weight_json};
use crate::model::StrategyVariant;

/// At most this many rows are read from a form.
const MAX_ROWS: usize = 1000;

/// The payload types a variant may have, as the form offers them.
const PAYLOAD_TYPES: [&str; 4] = ["string", "json", "csv", "number"];

/// One strategy variant as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct VariantRow {
    pub name: String,
    pub fixed: bool,
    pub weight: String,
    pub stickiness: String,
    pub payload_type: String,
    pub payload_value: String,
    pub remove: bool,
}

impl VariantRow {
    pub(crate) fn blank() -> Self {
        VariantRow {
            stickiness: "default".to_owned(),
            ..VariantRow::default()
        }
    }

    pub(crate) fn of(variant: &StrategyVariant) -> Self {
        VariantRow {
            name: variant.name.clone(),
            fixed: variant.weight_type == crate::model::WeightType::Fix,
            weight: percent(variant.weight),
            stickiness: variant.stickiness.clone(),
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
            remove: false,
        }
    }

    /// Nothing typed: not a variant.
    fn is_blank(&self) -> bool {
        self.name.trim().is_empty()
            && self.weight.trim().is_empty()
            && self.payload_value.trim().is_empty()
    }

    fn to_json(&self) -> Value {
        let stickiness = self.stickiness.trim();
        let mut variant = json!({
            "name": self.name.trim(),
            "weight": weight_json(&self.weight, self.fixed),
            "weightType": if self.fixed { "fix" } else { "variable" },
            "stickiness": if stickiness.is_empty() { "default" } else { stickiness },
        });
        if !self.payload_type.is_empty() || !self.payload_value.is_empty() {
            variant["payload"] = json!({ "type": self.payload_type, "value": self.payload_value });
        }
        variant
    }
}

/// The rows a form holds under `variants.*`, and one more blank one when "add a variant"
/// was pressed.
pub(crate) fn rows_of(fields: &Fields) -> Vec<VariantRow> {
    let count = fields
        .get("variants.count")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0)
        .min(MAX_ROWS);
    let mut rows: Vec<VariantRow> = (0..count)
        .map(|i| {
            let get = |what: &str| {
                fields
                    .get(&format!("variants.{i}.{what}"))
                    .unwrap_or_default()
                    .to_owned()
            };
            VariantRow {
                name: get("name"),
                fixed: get("weightType") == "fix",
                weight: get("weight"),
                stickiness: get("stickiness"),
                payload_type: get("payloadType"),
                payload_value: get("payloadValue"),
                remove: fields.get(&format!("variants.{i}.remove")).is_some(),
            }
        })
        .collect();
    if fields.get("action") == Some("add-variant") {
        rows.push(VariantRow::blank());
    }
    rows
}

/// The variants that are kept, as the facade takes them, and for each the row it came from.
pub(crate) fn kept(rows: &[VariantRow]) -> (Vec<Value>, Vec<usize>) {
    rows.iter()
        .enumerate()
        .filter(|(_, row)| !row.remove && !row.is_blank())
        .map(|(i, row)| (row.to_json(), i))
        .unzip()
}

/// The field keys of the rows, for placing the facade's problems.
pub(crate) fn field_keys(rows: &[VariantRow]) -> Vec<String> {
    let mut keys = vec!["variants".to_owned()];
    for i in 0..rows.len() {
        for what in [
            "",
            ".name",
            ".weight",
            ".weightType",
            ".stickiness",
            ".payload",
        ] {
            keys.push(format!("variants.{i}{what}"));
        }
    }
    keys
}

/// The variants table, always with a blank row to add one in.
pub(crate) fn editor(rows: &[VariantRow], stickiness: &[String], problems: &Problems) -> Markup {
    let mut rows = rows.to_vec();
    if rows.last().is_none_or(|r| !r.is_blank()) {
        rows.push(VariantRow::blank());
    }
    html! {
        fieldset aria-describedby=[problems.described("variants")] {
            legend { "Strategy variants" }
            p.hint { "Who the strategy lets in gets one of these (they override the environment's variants). Weights in percent: fixed ones keep theirs, the variable ones share the rest." }
            (problems.at("variants"))
            input type="hidden" name="variants.count" value=(rows.len());
            table.variants {
                caption.visually-hidden { "Strategy variants" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Weight type" } th scope="col" { "Weight %" }
                    th scope="col" { "Stickiness" } th scope="col" { "Payload" } th scope="col" { "Remove" }
                } }
                tbody {
                    @for (i, row) in rows.iter().enumerate() { (row_markup(i, row, stickiness, problems)) }
                }
            }
            button.secondary type="submit" name="action" value="add-variant" { "Add a variant" }
        }
    }
}

fn row_markup(i: usize, row: &VariantRow, stickiness: &[String], problems: &Problems) -> Markup {
    let key = |what: &str| format!("variants.{i}.{what}");
    let n = i + 1;
    let invalid = |what: &str| problems.invalid(&key(what));
    html! {
        tr {
            td {
                label.visually-hidden for=(key("name")) { "Name of strategy variant " (n) }
                input type="text" id=(key("name")) name=(key("name")) value=(row.name)
                    class=[invalid("name").then_some("invalid")] aria-invalid=[invalid("name").then_some("true")]
                    aria-describedby=[problems.described(&key("name"))];
                (problems.at(&key("name")))
            }
            td {
                label.visually-hidden for=(key("weightType")) { "Weight type of strategy variant " (n) }
                select id=(key("weightType")) name=(key("weightType")) aria-describedby=[problems.described(&key("weightType"))] {
                    option value="variable" selected[!row.fixed] { "variable" }
                    option value="fix" selected[row.fixed] { "fixed" }
                }
                (problems.at(&key("weightType")))
            }
            td {
                label.visually-hidden for=(key("weight")) { "Weight in percent of strategy variant " (n) }
                input.weight type="text" inputmode="decimal" id=(key("weight")) name=(key("weight")) value=(row.weight)
                    class=[invalid("weight").then_some("invalid")] aria-invalid=[invalid("weight").then_some("true")]
                    aria-describedby=[problems.described(&key("weight"))];
                (problems.at(&key("weight")))
            }
            td {
                label.visually-hidden for=(key("stickiness")) { "Stickiness of strategy variant " (n) }
                select id=(key("stickiness")) name=(key("stickiness")) aria-describedby=[problems.described(&key("stickiness"))] {
                    @if !stickiness.contains(&row.stickiness) && !row.stickiness.is_empty() {
                        option value=(row.stickiness) selected { (row.stickiness) }
                    }
                    @for s in stickiness { option value=(s) selected[*s == row.stickiness] { (s) } }
                }
                (problems.at(&key("stickiness")))
            }
            td {
                label.visually-hidden for=(key("payloadType")) { "Payload type of strategy variant " (n) }
                select id=(key("payloadType")) name=(key("payloadType")) {
                    option value="" selected[row.payload_type.is_empty()] { "no payload" }
                    @for t in PAYLOAD_TYPES { option value=(t) selected[row.payload_type == t] { (t) } }
                }
                label.visually-hidden for=(key("payloadValue")) { "Payload value of strategy variant " (n) }
                textarea id=(key("payloadValue")) name=(key("payloadValue")) rows="2"
                    class=[invalid("payload").then_some("invalid")] aria-invalid=[invalid("payload").then_some("true")]
                    aria-describedby=[problems.described(&key("payload"))] { (row.payload_value) }
                (problems.at(&key("payload")))
            }
            td {
                input type="checkbox" id=(key("remove")) name=(key("remove")) value="true" checked[row.remove];
                label.inline for=(key("remove")) { span.visually-hidden { "Remove strategy variant " (n) } "remove" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_and_removed_rows_are_left_out() {
        let rows = vec![
            VariantRow {
                name: "blue".into(),
                fixed: true,
                weight: "30".into(),
                payload_type: "json".into(),
                payload_value: "{\"a\":1}".into(),
                ..VariantRow::blank()
            },
            VariantRow {
                name: "gone".into(),
                remove: true,
                ..VariantRow::blank()
            },
            VariantRow::blank(),
            VariantRow {
                name: "red".into(),
                ..VariantRow::blank()
            },
        ];
        let (list, from) = kept(&rows);
        assert_eq!(from, [0, 3]);
        assert_eq!(
            list[0],
            json!({"name": "blue", "weight": 300, "weightType": "fix", "stickiness": "default",
                   "payload": {"type": "json", "value": "{\"a\":1}"}})
        );
        assert_eq!(list[1]["weight"], json!(0));
    }
}
