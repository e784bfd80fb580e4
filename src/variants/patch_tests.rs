//! Examples for applying and decoding JSON Patch.

use serde_json::{Value, json};

use super::tests::{details, fix, paths, var};
use super::*;
use crate::error::Error;
use crate::model::Variant;

// ---- patch application ----

fn one_variant() -> Vec<Variant> {
    vec![var("v1")]
}

fn apply_err(ops: Value) -> Error {
    let patch = decode_patch(&ops).expect("decodes");
    apply_patch(&one_variant(), &patch).unwrap_err()
}

#[track_caller]
fn assert_patch_error(ops: Value, index: usize, reason: &str) {
    let err = apply_err(ops);
    let message = err.to_string();
    assert!(
        message.starts_with("Could not apply provided patch: "),
        "{message}"
    );
    assert!(
        message.contains(&format!("operation {index} (")),
        "{message}"
    );
    assert!(message.ends_with(reason), "{message}");
    assert_eq!(paths(&err), [format!("/{index}")]);
}

#[test]
fn add_past_the_end_fails() {
    let err = apply_err(json!([{"op": "add", "path": "/5", "value": {"name": "x", "weight": 0}}]));
    assert_eq!(
        err.to_string(),
        "Could not apply provided patch: operation 0 (add /5): index 5 is past the end of the list"
    );
}

#[test]
fn remove_out_of_range_fails() {
    let ops = json!([{"op": "remove", "path": "/0/stickiness"}, {"op": "remove", "path": "/3"}]);
    assert_patch_error(ops, 1, "index 3 is past the end of the list");
}

#[test]
fn replace_of_a_missing_member_fails() {
    let ops = json!([{"op": "replace", "path": "/0/nope", "value": 3}]);
    assert_patch_error(ops, 0, "/0 has no member `nope`");
}

#[test]
fn non_numeric_index_fails() {
    let ops = json!([{"op": "add", "path": "/abc", "value": {}}]);
    assert_patch_error(ops, 0, "`abc` is not an array index");
}

#[test]
fn replace_in_a_missing_element_fails() {
    let ops = json!([{"op": "replace", "path": "/5/weight", "value": 3}]);
    assert_patch_error(ops, 0, "index 5 is past the end of the list");
}

#[test]
fn nested_and_move_failures_are_explained() {
    let ops = json!([{"op": "add", "path": "/0/overrides/0", "value": {}}]);
    assert_patch_error(ops, 0, "/0 has no member `overrides`");
    let ops = json!([{"op": "move", "from": "/7", "path": "/0"}]);
    assert_patch_error(ops, 0, "from: index 7 is past the end of the list");
    let ops = json!([{"op": "move", "from": "/0", "path": "/0/x"}]);
    assert_patch_error(ops, 0, "cannot move a value into itself");
    let ops = json!([{"op": "remove", "path": ""}]);
    assert_patch_error(ops, 0, "cannot remove the whole document");
    let ops = json!([{"op": "add", "path": "/0/weight/x", "value": 1}]);
    assert_patch_error(
        ops,
        0,
        "/0/weight is the number 0, which cannot hold members",
    );
}

#[test]
fn operations_apply_in_order() {
    let good = decode_patch(&json!([
        {"op": "add", "path": "/-", "value": {"name": "v2", "weight": 0}},
        {"op": "copy", "from": "/1", "path": "/0"},
        {"op": "replace", "path": "/0/name", "value": "v0"},
        {"op": "move", "from": "/2", "path": "/1"},
    ]))
    .unwrap();
    let out = apply_patch(&one_variant(), &good).unwrap();
    let names: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["v0", "v2", "v1"]);
}

#[test]
fn a_test_operation_built_in_rust_is_refused() {
    let patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/0/name", "value": "v1"}])).unwrap();
    let err = apply_patch(&one_variant(), &patch).unwrap_err();
    assert!(err.to_string().starts_with(
        "Could not apply provided patch: operation 0 (test /0/name): `test` is not supported"
    ));
}

#[test]
fn the_current_list_is_serialised_as_on_the_wire() {
    let mut v = var("v1");
    v.payload = Some(crate::model::Payload {
        payload_type: crate::model::PayloadType::Json,
        value: "{}".to_owned(),
    });
    v.overrides = Some(vec![crate::model::Override {
        context_name: "userId".to_owned(),
        values: vec!["1".to_owned()],
    }]);
    let list = vec![v, fix("v2", 10)];
    let out = apply_patch(&list, &json_patch::Patch(Vec::new())).unwrap();
    assert_eq!(out, serde_json::to_value(&list).unwrap());
}

// ---- patch decoding ----

#[test]
fn decode_refuses_test_unknown_ops_and_missing_members_listing_all() {
    let err = decode_patch(&json!([
        {"op": "test", "path": "/0/name", "value": "a"},
        {"op": "frobnicate", "path": "/0"},
        {"op": "add", "value": 1},
        {"op": "move", "path": "/0"},
        {"op": "replace", "path": "0/weight", "value": 1},
        {"op": "remove", "path": "/0", "extra": true},
        {"path": 7, "op": "add", "value": 1},
        {"op": "add", "path": "/0"},
    ]))
    .unwrap_err();
    let got = details(&err);
    let got_paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        got_paths,
        [
            "/0/op", "/1/op", "/2/path", "/3/from", "/4/path", "/5/extra", "/6/path", "/7/value"
        ]
    );
    for (index, (_, message)) in got.iter().enumerate() {
        assert!(
            message.starts_with(&format!("operation {index}")),
            "{message}"
        );
    }
    assert!(got[0].1.contains("`test` is not supported"));
    assert!(got[1].1.contains("unknown op \"frobnicate\""));
    assert!(got[4].1.contains("not a JSON pointer"));
    assert!(
        err.to_string()
            .starts_with("8 problems in the patch: /0/op: ")
    );
}

#[test]
fn decode_refuses_a_body_that_is_not_an_array() {
    let err = decode_patch(&json!({"op": "add", "path": "/0", "value": 1})).unwrap_err();
    assert_eq!(paths(&err), [""]);
    assert!(err.to_string().contains("must be an array of operations"));
    let err = decode_patch(&json!([3])).unwrap_err();
    assert_eq!(paths(&err), ["/0"]);
}

#[test]
fn decode_accepts_the_five_ops() {
    let patch = decode_patch(&json!([
        {"op": "add", "path": "/-", "value": null},
        {"op": "remove", "path": "/0"},
        {"op": "replace", "path": "", "value": []},
        {"op": "copy", "from": "/0", "path": "/1"},
        {"op": "move", "from": "/a~1b~0", "path": "/1"},
    ]))
    .unwrap();
    assert_eq!(patch.len(), 5);
}
