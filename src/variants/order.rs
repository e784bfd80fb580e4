//! Unleash's name order: ICU root collation, as JavaScript's `localeCompare` applies it.

use std::cmp::Ordering;

use crate::model::Variant;

/// ASCII punctuation and symbols in CLDR root collation order (all sort before digits). The
/// URL-safe ones, which are all a valid name can hold, come out as
/// `_` < `-` < `!` < `.` < `'` < `(` < `)` < `*` < `~`.
const PUNCTUATION: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// Primary-level rank bands: controls < punctuation < digits < letters < everything else.
const PUNCTUATION_BASE: u32 = 0x100;
const DIGIT_BASE: u32 = 0x200;
const LETTER_BASE: u32 = 0x300;
const OTHER_BASE: u32 = 0x400;

/// The first-level (primary) weight of `c`: letters ignore case, every character counts
/// (punctuation is not ignorable).
fn primary(c: char) -> u32 {
    if c.is_ascii_alphabetic() {
        LETTER_BASE + u32::from(c.to_ascii_lowercase()) - u32::from('a')
    } else if c.is_ascii_digit() {
        DIGIT_BASE + u32::from(c) - u32::from('0')
    } else if let Some(rank) = PUNCTUATION.find(c) {
        // `rank` is a byte offset into an ASCII string, hence small.
        PUNCTUATION_BASE + u32::try_from(rank).unwrap_or(0)
    } else if c.is_ascii() {
        // Control characters: before everything, by code point.
        u32::from(c)
    } else {
        OTHER_BASE + u32::from(c)
    }
}

/// The third-level (tertiary) weight of `c`: lowercase before uppercase.
fn tertiary(c: char) -> u8 {
    u8::from(c.is_ascii_uppercase())
}

/// Compares two variant names in Unleash's order.
///
/// Unleash sorts variants with `localeCompare`, i.e. ICU root collation: punctuation before
/// digits before letters; letters compared without case first, then lowercase before uppercase
/// where that is the only difference (`a` < `A` < `a-b` < `b` < `B`); punctuation is not
/// ignorable, so a string that is a first-level prefix of another sorts first; digits are
/// compared as characters, not as numbers (`a10` < `a9`).
///
/// Where we differ: this is exact for printable ASCII (space to `~`), which holds every
/// character a valid name can (ASCII letters, digits and `- _ . ! ~ * ' ( )`); the tests hold
/// it to ICU4X's root collation there. Other characters cannot occur in valid names and are
/// not ICU's order: to keep the order total they sort after the ASCII letters by code point
/// (ICU puts `é` with `e`), and ASCII control characters before everything. Names compare
/// [`Equal`](Ordering::Equal) only when they are identical.
pub fn compare_names(a: &str, b: &str) -> Ordering {
    a.chars()
        .map(primary)
        .cmp(b.chars().map(primary))
        .then_with(|| a.chars().map(tertiary).cmp(b.chars().map(tertiary)))
        // Primary and tertiary weights together identify an ASCII character, but keep the
        // order total whatever the input.
        .then_with(|| a.cmp(b))
}

/// Sorts variants by name in Unleash's order ([`compare_names`]). The sort is stable.
pub fn sort_by_name(variants: &mut [Variant]) {
    sort_named(variants, |variant| &variant.name);
}

/// Sorts anything named by [`compare_names`] on the name `name` gives.
pub(super) fn sort_named<T>(items: &mut [T], name: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| compare_names(name(a), name(b)));
}
