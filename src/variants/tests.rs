//! Examples for weights, order and validation; the patch in `patch_tests.rs`, the properties
//! in `prop_tests.rs`.

use serde_json::{Value, json};

use super::*;
use crate::error::Error;
use crate::model::{Variant, WeightType};

pub(super) fn variant(name: &str, weight_type: WeightType, weight: u32) -> Variant {
    Variant {
        name: name.to_owned(),
        weight,
        weight_type: Some(weight_type),
        stickiness: Some("default".to_owned()),
        payload: None,
        overrides: None,
    }
}

pub(super) fn var(name: &str) -> Variant {
    variant(name, WeightType::Variable, 0)
}

pub(super) fn fix(name: &str, weight: u32) -> Variant {
    variant(name, WeightType::Fix, weight)
}

/// Distributes then sorts, and returns `(name, weight)` pairs.
fn weighed(variants: Vec<Variant>) -> Vec<(String, u32)> {
    let mut out = distribute_weights(variants).expect("distributes");
    sort_by_name(&mut out);
    out.into_iter().map(|v| (v.name, v.weight)).collect()
}

fn weights_of(variants: Vec<Variant>) -> Vec<u32> {
    weighed(variants).into_iter().map(|(_, w)| w).collect()
}

/// The `(path, message)` pairs of a validation error.
pub(super) fn details(err: &Error) -> Vec<(String, String)> {
    assert_eq!(err.name(), "ValidationError", "{err}");
    err.details()
        .iter()
        .map(|d| (d.path.clone().unwrap_or_default(), d.message.clone()))
        .collect()
}

pub(super) fn paths(err: &Error) -> Vec<String> {
    details(err).into_iter().map(|(p, _)| p).collect()
}

// ---- weights ----

#[test]
fn three_variable_share_with_the_first_in_input_order_getting_the_remainder() {
    let out = weighed(vec![var("c"), var("a"), var("b")]);
    let expected = [("a", 333), ("b", 333), ("c", 334)];
    let expected: Vec<(String, u32)> = expected.iter().map(|(n, w)| (n.to_string(), *w)).collect();
    assert_eq!(out, expected);
}

#[test]
fn fix_900_and_six_variable() {
    let mut list = vec![fix("variant1", 900)];
    list.extend((2..=7).map(|i| var(&format!("variant{i}"))));
    assert_eq!(weights_of(list), [900, 17, 17, 17, 17, 16, 16]);
}

#[test]
fn seven_variable() {
    let list = ["a", "b", "c", "d", "e", "f", "g"].map(var).to_vec();
    assert_eq!(weights_of(list), [143, 143, 143, 143, 143, 143, 142]);
}

#[test]
fn fix_999_and_three_variable() {
    let list = vec![fix("a", 999), var("b"), var("c"), var("d")];
    assert_eq!(weights_of(list), [999, 1, 0, 0]);
}

#[test]
fn fix_1000_leaves_zero() {
    assert_eq!(weights_of(vec![fix("a", 1000), var("b")]), [1000, 0]);
}

#[test]
fn fix_600_and_350_leave_50() {
    let list = vec![fix("a", 600), fix("b", 350), var("c")];
    assert_eq!(weights_of(list), [600, 350, 50]);
}

#[test]
fn fixed_total_over_1000_is_refused() {
    let err = distribute_weights(vec![fix("a", 1001), var("b")]).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(
        err.to_string(),
        "The fixed weights total 1001, more than 1000"
    );
}

#[test]
fn all_fixed_is_refused_before_the_sum() {
    let err = distribute_weights(vec![fix("a", 600), fix("b", 600)]).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(
        err.to_string(),
        r#"There must be at least one "variable" variant"#
    );
    assert_eq!(paths(&err), [""]);
}

#[test]
fn empty_stays_empty() {
    assert!(distribute_weights(Vec::new()).unwrap().is_empty());
}

#[test]
fn missing_weight_type_counts_as_variable() {
    let mut v = var("a");
    v.weight_type = None;
    assert_eq!(weights_of(vec![v, fix("b", 400)]), [600, 400]);
}

// ---- order ----

fn sorted(names: &[&str]) -> Vec<String> {
    let mut list: Vec<Variant> = names.iter().map(|n| var(n)).collect();
    sort_by_name(&mut list);
    list.into_iter().map(|v| v.name).collect()
}

#[test]
fn names_sort_in_icu_root_order() {
    let input = ["Z", "b", "a9", "a10", "a.b", "a-b", "A", "1", "_x", "B"];
    let expected = ["_x", "1", "A", "a-b", "a.b", "a10", "a9", "b", "B", "Z"];
    assert_eq!(sorted(&input), expected);
}

#[test]
fn names_sort_like_the_reference() {
    let expected = [
        "_x",
        "-x",
        "00-variant",
        "1",
        "10",
        "9",
        "a",
        "A",
        "a-variant",
        "B",
        "e",
        "f",
        "g-variant",
        "variant-a",
        "variant-g",
        "Z",
        "zvariant",
    ];
    let mut input = expected;
    input.reverse();
    assert_eq!(sorted(&input), expected);
}

#[test]
fn url_safe_punctuation_order() {
    let expected = ["_", "-", "!", ".", "'", "(", ")", "*", "~", "0", "a"];
    let mut input = expected;
    input.reverse();
    assert_eq!(sorted(&input), expected);
}

#[test]
fn equal_only_when_identical() {
    use std::cmp::Ordering;
    assert_eq!(compare_names("abc", "abc"), Ordering::Equal);
    assert_eq!(compare_names("abc", "abC"), Ordering::Less);
    assert_eq!(compare_names("aBc", "abd"), Ordering::Less);
    assert_eq!(compare_names("zz", "é"), Ordering::Less);
}

// ---- validation ----

fn ok_variant(name: &str) -> Value {
    json!({"name": name, "weight": 500, "weightType": "variable", "stickiness": "default"})
}

#[track_caller]
fn assert_invalid(item: Value, path: &str, fragment: &str) {
    let doc = json!([ok_variant("first"), item]);
    let err = validate_variants(&doc).unwrap_err();
    let got = details(&err);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, path);
    assert!(got[0].1.contains(fragment), "{:?}", got[0].1);
}

#[test]
fn weights_must_be_integers_from_0_to_1000() {
    for bad in [
        json!(1001),
        json!(-1),
        json!(10.5),
        json!("100"),
        json!(1e300),
        Value::Null,
    ] {
        assert_invalid(
            json!({"name": "v", "weight": bad}),
            "/1/weight",
            "weight must be",
        );
    }
    assert_invalid(json!({"name": "v"}), "/1/weight", "weight is required");
    let ok =
        validate_variants(&json!([{"name": "v", "weight": 1.0}, {"name": "w", "weight": -0.0}]))
            .unwrap();
    assert_eq!(ok[0].weight, 1);
    assert_eq!(ok[1].weight, 0);
}

#[test]
fn names_must_be_present_short_url_friendly_and_unique() {
    assert_invalid(
        json!({"name": "", "weight": 1}),
        "/1/name",
        "must not be empty",
    );
    let long = "a".repeat(101);
    assert_invalid(
        json!({"name": long, "weight": 1}),
        "/1/name",
        "101 characters",
    );
    assert_invalid(
        json!({"name": "a b", "weight": 1}),
        "/1/name",
        "not URL-friendly",
    );
    assert_invalid(
        json!({"name": "é", "weight": 1}),
        "/1/name",
        "not URL-friendly",
    );
    assert_invalid(
        json!({"name": "..", "weight": 1}),
        "/1/name",
        "must not be `..`",
    );
    assert_invalid(json!({"weight": 1}), "/1/name", "name is required");
    assert_invalid(
        json!({"name": 3, "weight": 1}),
        "/1/name",
        "must be a string",
    );
    assert_invalid(ok_variant("first"), "/1/name", "duplicate name `first`");
    assert!(validate_variants(&json!([ok_variant(&"a".repeat(100))])).is_ok());
}

#[test]
fn payloads_are_checked_by_type() {
    let with = |payload: Value| json!({"name": "v", "weight": 1, "payload": payload});
    assert_invalid(
        with(json!({"type": "xml", "value": "x"})),
        "/1/payload/type",
        "xml",
    );
    assert_invalid(
        with(json!({"type": "json", "value": "{x"})),
        "/1/payload/value",
        "not valid JSON",
    );
    assert_invalid(
        with(json!({"type": "number", "value": "abc"})),
        "/1/payload/value",
        "not a number",
    );
    assert_invalid(
        with(json!({"type": "number", "value": "inf"})),
        "/1/payload/value",
        "not a number",
    );
    assert_invalid(
        with(json!({"type": "string"})),
        "/1/payload/value",
        "required",
    );
    assert_invalid(
        with(json!({"type": "string", "value": 1})),
        "/1/payload/value",
        "must be a string",
    );
    assert_invalid(with(json!("x")), "/1/payload", "must be an object");
    assert_invalid(
        with(json!({"type": "csv", "value": "a,b", "x": 1})),
        "/1/payload/x",
        "unknown field `x`",
    );
    let ok = json!([with(json!({"type": "number", "value": "-1.5e3"}))]);
    assert!(validate_variants(&ok).is_ok());
}

#[test]
fn overrides_weight_type_stickiness_and_unknown_keys_are_checked() {
    let base = |key: &str, value: Value| {
        let mut v = json!({"name": "v", "weight": 1});
        v[key] = value;
        v
    };
    assert_invalid(
        base("color", json!("red")),
        "/1/color",
        "unknown field `color`",
    );
    assert_invalid(base("weightType", json!("party")), "/1/weightType", "party");
    assert_invalid(
        base("stickiness", json!("")),
        "/1/stickiness",
        "must not be empty",
    );
    assert_invalid(
        base("overrides", json!({})),
        "/1/overrides",
        "must be an array",
    );
    assert_invalid(
        base(
            "overrides",
            json!([{"contextName": "userId", "values": ["1", "2", 3]}]),
        ),
        "/1/overrides/0/values/2",
        "must be a string",
    );
    assert_invalid(
        base("overrides", json!([{"values": []}])),
        "/1/overrides/0/contextName",
        "required",
    );
    assert_invalid(base("a/b", json!(1)), "/1/a~1b", "unknown field `a/b`");
}

#[test]
fn defaults_are_applied() {
    let out = validate_variants(&json!([{"name": "v", "weight": 7}])).unwrap();
    assert_eq!(out[0].weight_type, Some(WeightType::Variable));
    assert_eq!(out[0].stickiness.as_deref(), Some("default"));
    assert_eq!(out[0].weight, 7);
}

#[test]
fn the_document_must_be_an_array_of_objects() {
    let err = validate_variants(&json!({"name": "v"})).unwrap_err();
    assert_eq!(paths(&err), [""]);
    let err = validate_variants(&json!([ok_variant("a"), null])).unwrap_err();
    assert_eq!(paths(&err), ["/1"]);
}

#[test]
fn every_problem_is_listed() {
    let doc = json!([
        {"name": "a b", "weight": "100", "color": "red"},
        {"name": "ok", "weight": 1, "payload": {"type": "xml", "value": "x"}},
        {"name": "ok", "weight": 1001, "weightType": "fix"},
    ]);
    let err = normalise_variants(&doc).unwrap_err();
    let mut got = paths(&err);
    got.sort();
    assert_eq!(
        got,
        [
            "/0/color",
            "/0/name",
            "/0/weight",
            "/1/payload/type",
            "/2/name",
            "/2/weight"
        ]
    );
    assert!(
        err.to_string().starts_with("6 problems in the variants: "),
        "{err}"
    );
}

#[test]
fn normalise_validates_weighs_and_sorts() {
    let doc = json!([
        {"name": "b", "weight": 0},
        {"name": "a", "weight": 300, "weightType": "fix"},
        {"name": "C", "weight": 0, "weightType": "variable"},
    ]);
    let out = normalise_variants(&doc).unwrap();
    let got: Vec<(&str, u32)> = out.iter().map(|v| (v.name.as_str(), v.weight)).collect();
    assert_eq!(got, [("a", 300), ("b", 350), ("C", 350)]);
    let err =
        normalise_variants(&json!([{"name": "a", "weight": 5, "weightType": "fix"}])).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"There must be at least one "variable" variant"#
    );
}

// ---- strategy variants ----

#[test]
fn strategy_variants_require_type_and_stickiness_and_use_the_prefix() {
    let prefix = "data.featureStrategies[2].variants";
    let doc = json!([
        {"name": "a", "weight": 1, "overrides": []},
        {"name": "b", "weight": 2000, "weightType": "variable", "stickiness": "default"},
    ]);
    let err = validate_strategy_variants(&doc, prefix).unwrap_err();
    let got = paths(&err);
    let expected: Vec<String> = [
        "/0/overrides",
        "/0/weightType",
        "/0/stickiness",
        "/1/weight",
    ]
    .iter()
    .map(|p| format!("{prefix}{p}"))
    .collect();
    assert_eq!(got, expected);
    assert!(
        err.to_string()
            .starts_with("4 problems in the strategy variants: ")
    );

    let err = validate_strategy_variants(&json!("x"), prefix).unwrap_err();
    assert_eq!(paths(&err), [prefix]);
}

#[test]
fn strategy_variants_are_weighed_and_sorted() {
    let doc = json!([
        {"name": "b", "weight": 0, "weightType": "variable", "stickiness": "userId"},
        {"name": "a", "weight": 0, "weightType": "variable", "stickiness": "userId",
         "payload": {"type": "string", "value": "x"}},
        {"name": "c", "weight": 1, "weightType": "variable", "stickiness": "userId"},
    ]);
    let out = validate_strategy_variants(&doc, "p").unwrap();
    let got: Vec<(&str, u32)> = out.iter().map(|v| (v.name.as_str(), v.weight)).collect();
    assert_eq!(got, [("a", 333), ("b", 334), ("c", 333)]);
    let all_fixed = json!([{"name": "a", "weight": 5, "weightType": "fix", "stickiness": "x"}]);
    let err = validate_strategy_variants(&all_fixed, "p").unwrap_err();
    assert_eq!(paths(&err), ["p"]);
}
