//! Properties of the weight distribution and of the name order.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};
use proptest::prelude::*;

use super::{compare_names, distribute_weights, sort_by_name};
use crate::model::{Variant, WeightType};

/// A URL-safe name, including case pairs and punctuation, so that ties and prefixes occur.
fn name() -> impl Strategy<Value = String> {
    "[aAbBzZ019_.!~*'()-]{1,6}"
}

/// A name for comparing with ICU: mostly valid names (see `crate::names::is_url_friendly`;
/// `.` and `..` are refused but compare like any other), short so that prefixes and
/// case-only differences occur, and any printable ASCII besides. Names are validated (here
/// as in Unleash) before a list is sorted, so only valid names must agree with ICU; printable
/// ASCII agrees too, and is held to it so that the order stays exact if the name rules widen.
/// Other characters do not agree (see [`compare_names`]) and are left out.
fn icu_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_.!~*'()-]{1,8}",
        // A few letters and every punctuation mark: ties, prefixes and case pairs.
        "[aAbB09_.!~*'()-]{1,4}",
        "[ -~]{1,6}",
    ]
}

/// Every printable ASCII character, space to `~`.
fn printable_ascii() -> impl Iterator<Item = char> {
    (b' '..=b'~').map(char::from)
}

/// ICU's root collation with its defaults (tertiary strength, punctuation not ignorable):
/// what `localeCompare` in Unleash's Node.js applies (en-US tailors nothing of the root).
static ICU: LazyLock<CollatorBorrowed<'static>> = LazyLock::new(|| {
    Collator::try_new(Default::default(), CollatorOptions::default())
        .expect("the root collation is compiled in")
});

/// Every string of one or two printable ASCII characters (valid names among them), in our
/// order, is in ICU's order too: each character's place, and each pair where only the second
/// character or only a case differs.
#[test]
fn short_names_sort_as_icu_sorts_them() {
    let characters: Vec<char> = printable_ascii().collect();
    let mut names: Vec<String> = characters.iter().map(char::to_string).collect();
    for &first in &characters {
        names.extend(characters.iter().map(|&second| format!("{first}{second}")));
    }
    names.sort_by(|a, b| compare_names(a, b));
    for pair in names.windows(2) {
        assert_eq!(
            ICU.compare(&pair[0], &pair[1]),
            Ordering::Less,
            "{:?} before {:?}",
            pair[0],
            pair[1]
        );
    }
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

    #[test]
    fn name_order_agrees_with_icu(a in icu_name(), b in icu_name()) {
        prop_assert_eq!(compare_names(&a, &b), ICU.compare(&a, &b), "{:?} vs {:?}", a, b);
    }
}
