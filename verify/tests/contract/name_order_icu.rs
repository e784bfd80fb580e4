//! The name order ([`compare_names`]) against ICU's root collation, which Unleash sorts variant
//! names with (moved out of the library's `src/variants/prop_tests.rs`, whose other
//! properties stay there, so that the library's own builds need no ICU).

use std::cmp::Ordering;
use std::sync::LazyLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed};
use proptest::prelude::*;
use toggle_admin::variants::compare_names;

/// A name for comparing with ICU: mostly valid names (see `is_url_friendly` in the library's
/// `src/names.rs`; `.` and `..` are refused but compare like any other), short so that
/// prefixes and case-only differences occur, and any printable ASCII besides. Names are
/// validated (here as in Unleash) before a list is sorted, so only valid names must agree with
/// ICU; printable ASCII agrees too, and is held to it so that the order stays exact if the name
/// rules widen. Other characters do not agree (see [`compare_names`]) and are left out.
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

proptest! {
    #[test]
    fn name_order_agrees_with_icu(a in icu_name(), b in icu_name()) {
        prop_assert_eq!(compare_names(&a, &b), ICU.compare(&a, &b), "{:?} vs {:?}", a, b);
    }
}
