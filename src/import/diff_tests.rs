//! The diff of two documents: members by name, list elements matched by equality, every
//! change pointing at its value.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::diff;
use crate::model::PlanChange;

fn change(path: &str, from: Option<Value>, to: Option<Value>) -> PlanChange {
    PlanChange::new(path, from, to)
}

#[test]
fn equal_documents_have_no_change() {
    let doc = json!({"a": [1, {"b": null}], "c": "x"});
    assert!(diff(&doc, &doc).is_empty());
}

#[test]
fn a_changed_member_is_one_change_with_both_values() {
    let before = json!({"strategies": [{"parameters": {"rollout": "50", "groupId": "g"}}]});
    let after = json!({"strategies": [{"parameters": {"rollout": "60", "groupId": "g"}}]});
    assert_eq!(
        diff(&before, &after),
        [change(
            "/strategies/0/parameters/rollout",
            Some(json!("50")),
            Some(json!("60"))
        )]
    );
}

#[test]
fn a_removed_element_in_the_middle_is_one_removal_at_its_stored_index() {
    let before = json!({"constraints": [{"c": 1}, {"c": 2}, {"c": 3}]});
    let after = json!({"constraints": [{"c": 1}, {"c": 3}]});
    assert_eq!(
        diff(&before, &after),
        [change("/constraints/1", Some(json!({"c": 2})), None)]
    );
}

#[test]
fn an_added_element_is_named_by_its_new_index() {
    let before = json!([{"n": "a"}, {"n": "b"}]);
    let after = json!([{"n": "a"}, {"n": "new"}, {"n": "b"}]);
    assert_eq!(
        diff(&before, &after),
        [change("/1", None, Some(json!({"n": "new"})))]
    );
}

#[test]
fn unmatched_elements_between_matches_are_compared_member_by_member() {
    let before = json!([{"name": "a", "weight": 500}, {"name": "b", "weight": 500}]);
    let after = json!([{"name": "a", "weight": 300}, {"name": "b", "weight": 700}]);
    assert_eq!(
        diff(&before, &after),
        [
            change("/0/weight", Some(json!(500)), Some(json!(300))),
            change("/1/weight", Some(json!(500)), Some(json!(700))),
        ]
    );
}

#[test]
fn null_is_a_value_and_an_absent_member_has_no_side() {
    let before = json!({"description": null, "gone": 1});
    let after = json!({"description": "new", "added": false});
    assert_eq!(
        diff(&before, &after),
        [
            change("/added", None, Some(json!(false))),
            change("/description", Some(Value::Null), Some(json!("new"))),
            change("/gone", Some(json!(1)), None),
        ]
    );
    // `null` survives the wire: a present null is not an absent side.
    let wire = serde_json::to_value(change("/d", Some(Value::Null), None)).unwrap();
    assert_eq!(wire, json!({"path": "/d", "from": null}));
    let back: PlanChange = serde_json::from_value(wire).unwrap();
    assert_eq!(back.from, Some(Value::Null));
    assert_eq!(back.to, None);
}

#[test]
fn pointer_tokens_are_escaped() {
    let before = json!({"parameters": {"a/b~c": "1"}});
    let after = json!({"parameters": {"a/b~c": "2"}});
    let changes = diff(&before, &after);
    assert_eq!(changes[0].path, "/parameters/a~1b~0c");
    assert_eq!(after.pointer(&changes[0].path), Some(&json!("2")));
}

/// A JSON value of small depth, with lists that share elements so that matches occur.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0i64..4).prop_map(|n| json!(n)),
        "[ab/~]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[xy/]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// No change exactly when the documents are equal; every change with a `to` points at it
    /// in the new document; a removal's list or object is in the new document (its last token
    /// is the index in the stored list, or a member the new object lacks).
    #[test]
    fn changes_point_at_their_values(before in value(), after in value()) {
        let changes = diff(&before, &after);
        prop_assert_eq!(changes.is_empty(), before == after);
        for c in &changes {
            prop_assert!(c.from.is_some() || c.to.is_some());
            prop_assert_ne!(&c.from, &c.to);
            match &c.to {
                Some(to) => prop_assert_eq!(after.pointer(&c.path), Some(to), "{:?}", c),
                None => {
                    let (parent, last) = c.path.rsplit_once('/').unwrap();
                    match after.pointer(parent) {
                        Some(Value::Array(_)) => prop_assert!(last.parse::<usize>().is_ok()),
                        Some(Value::Object(fields)) => {
                            let key = last.replace("~1", "/").replace("~0", "~");
                            prop_assert!(!fields.contains_key(&key), "{:?}", c);
                        }
                        other => prop_assert!(false, "{:?} under {:?}", c, other),
                    }
                }
            }
        }
        if let (Value::Array(old), Value::Array(new)) = (&before, &after) {
            // At the top of a list, a removal is named by its stored index.
            for c in changes.iter().filter(|c| c.to.is_none() && c.path.matches('/').count() == 1) {
                let at: usize = c.path[1..].parse().unwrap();
                prop_assert_eq!(old.get(at), c.from.as_ref());
                prop_assert!(!new.is_empty() || c.from.is_some());
            }
        }
    }

    /// One leaf changed is one change, at that leaf.
    #[test]
    fn one_edited_leaf_is_one_change(
        items in prop::collection::vec(0i64..1000, 1..8),
        at in any::<prop::sample::Index>(),
        by in 1i64..50,
    ) {
        let before = json!({"list": items.iter().map(|w| json!({"weight": w})).collect::<Vec<_>>()});
        let i = at.index(items.len());
        let mut after = before.clone();
        after["list"][i]["weight"] = json!(items[i] + 1000 + by);
        let changes = diff(&before, &after);
        prop_assert_eq!(changes.len(), 1);
        prop_assert_eq!(&changes[0].path, &format!("/list/{i}/weight"));
    }
}
