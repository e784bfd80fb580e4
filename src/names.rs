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
}
