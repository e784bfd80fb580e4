//! Name rules shared by features, variants and other named things.

/// Whether percent-encoding `name` as JavaScript's `encodeURIComponent` does would leave it
/// unchanged (Unleash's "URL friendly"): only ASCII letters, digits and `- _ . ! ~ * ' ( )`,
/// and not `.` or `..`.
pub(crate) fn is_url_friendly(name: &str) -> bool {
    name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b))
}

/// What is wrong with `name` as a name of 1 to `max` URL-friendly characters, if anything.
pub(crate) fn name_problem(name: &str, max: usize) -> Option<String> {
    let length = name.chars().count();
    if name.is_empty() {
        Some("name must not be empty".to_owned())
    } else if length > max {
        Some(format!("name is {length} characters long, more than {max}"))
    } else if name == "." || name == ".." {
        Some(format!("name must not be `{name}`"))
    } else if !is_url_friendly(name) {
        Some(format!(
            "name {} is not URL-friendly: only A–Z a–z 0–9 - _ . ! ~ * ' ( ) are allowed",
            serde_json::Value::from(name)
        ))
    } else {
        None
    }
}

/// The longest name this crate stores, in characters: Unleash's name columns are
/// `varchar(255)`.
pub(crate) const MAX_NAME: usize = 255;

/// What is wrong with `text` as a display name (a user's, group's, role's, segment's, key's)
/// of 1 to `max` characters, if anything. Display names may hold any printable text (spaces,
/// accents, punctuation, emoji) but no control character (NUL, newline, escape, …): those
/// corrupt logs and terminals and are never part of a name. Blank text is refused too.
pub(crate) fn display_name_problem(text: &str, max: usize) -> Option<String> {
    let length = text.chars().count();
    if text.trim().is_empty() {
        Some("must not be empty".to_owned())
    } else if length > max {
        Some(format!("is {length} characters long, more than {max}"))
    } else if let Some((at, c)) = text.chars().enumerate().find(|(_, c)| c.is_control()) {
        Some(format!(
            "must not contain control characters, but has U+{:04X} at character {at}",
            u32::from(c)
        ))
    } else {
        None
    }
}

/// A project's feature naming pattern as a regex that must match the whole name.
pub(crate) fn naming_regex(pattern: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| format!("the pattern \"{pattern}\" is not a valid regular expression: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_friendly_names() {
        for ok in ["a", "A-b_c.d", "x!~*'()", "..a"] {
            assert!(is_url_friendly(ok), "{ok}");
        }
        for bad in [".", "..", "a b", "é", "a/b", "a%20"] {
            assert!(!is_url_friendly(bad), "{bad}");
        }
        assert!(name_problem("", 100).is_some());
        assert!(name_problem(&"a".repeat(101), 100).is_some());
        assert!(name_problem(&"a".repeat(100), 100).is_none());
    }

    #[test]
    fn display_names_are_printable_text() {
        for ok in ["Ada Lovelace", "Équipe 🚀", "a/b ../x", "x"] {
            assert_eq!(display_name_problem(ok, MAX_NAME), None, "{ok}");
        }
        for bad in ["", "   ", "a\0b", "a\nb", "\u{1b}[31m", "tab\there"] {
            assert!(display_name_problem(bad, MAX_NAME).is_some(), "{bad:?}");
        }
        assert!(display_name_problem(&"é".repeat(255), MAX_NAME).is_none());
        assert!(display_name_problem(&"é".repeat(256), MAX_NAME).is_some());
    }
}
