//! Properties of the weight distribution and of the name order. The name order against ICU's
//! root collation is checked apart, in the workspace's `verify` member
//! (`verify/tests/contract/name_order_icu.rs`), so that the library's dev-dependencies hold no ICU.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use proptest::prelude::*;

use super::{compare_names, distribute_weights, sort_by_name};
use crate::model::{Variant, WeightType};

/// A URL-safe name, including case pairs and punctuation, so that ties and prefixes occur.
fn name() -> impl Strategy<Value = String> {
    "[aAbBzZ019_.!~*'()-]{1,6}"
}

fn variants() -> impl Strategy<Value = Vec<Variant>> {
    prop::collection::vec((name(), any::<bool>(), 0u32..=1000), 0..12).prop_map(|raw| {
        let mut seen = BTreeSet::new();
        raw.into_iter()
            .filter(|(name, _, _)| seen.insert(name.clone()))
            .map(|(name, fixed, weight)| Variant {
                name,
                weight,
                weight_type: Some(if fixed {
                    WeightType::Fix
                } else {
                    WeightType::Variable
                }),
                stickiness: Some("default".to_owned()),
                payload: None,
                overrides: None,
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn weights_total_1000_or_the_list_is_refused(list in variants()) {
        let is_fixed = |v: &Variant| v.weight_type == Some(WeightType::Fix);
        let fixed_sum: u32 = list.iter().filter(|v| is_fixed(v)).map(|v| v.weight).sum();
        let has_variable = list.iter().any(|v| !is_fixed(v));
        match distribute_weights(list.clone()) {
            Ok(out) => {
                prop_assert!(list.is_empty() || (has_variable && fixed_sum <= 1000));
                prop_assert_eq!(out.len(), list.len());
                if !out.is_empty() {
                    prop_assert_eq!(out.iter().map(|v| v.weight).sum::<u32>(), 1000);
                }
                for (before, after) in list.iter().zip(&out) {
                    prop_assert_eq!(&before.name, &after.name);
                    if is_fixed(before) {
                        prop_assert_eq!(before.weight, after.weight);
                    }
                }
                let shares: Vec<u32> =
                    out.iter().filter(|v| !is_fixed(v)).map(|v| v.weight).collect();
                // Even shares, the larger ones first.
                prop_assert!(shares.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
            }
            Err(err) => {
                prop_assert_eq!(err.status(), 400);
                prop_assert!(!list.is_empty() && (!has_variable || fixed_sum > 1000));
            }
        }
    }

    #[test]
    fn name_order_is_total(a in name(), b in name(), c in name()) {
        prop_assert_eq!(compare_names(&a, &b), compare_names(&b, &a).reverse());
        prop_assert_eq!(compare_names(&a, &b) == Ordering::Equal, a == b);
        if compare_names(&a, &b) != Ordering::Greater && compare_names(&b, &c) != Ordering::Greater {
            prop_assert_ne!(compare_names(&a, &c), Ordering::Greater);
        }
    }

    #[test]
    fn sorting_agrees_with_compare_names(list in variants()) {
        let mut sorted = list.clone();
        sort_by_name(&mut sorted);
        prop_assert_eq!(sorted.len(), list.len());
        for pair in sorted.windows(2) {
            prop_assert_eq!(compare_names(&pair[0].name, &pair[1].name), Ordering::Less);
        }
        for (i, x) in sorted.iter().enumerate() {
            for y in &sorted[i + 1..] {
                prop_assert_eq!(compare_names(&x.name, &y.name), Ordering::Less);
            }
        }
    }
}
