//! What a refused form is told, next to the field it is about: the facade's error details
//! placed by their path on the form's fields (`/constraints/0/values`, `.parameters.rollout`
//! and `legalValues[1].value` all name a field the same way), the rest above the form; and
//! the notice a reader who may not change a thing gets before trying.

use maud::{Markup, html};

use super::Ui;
use super::session::Signed;
use crate::admin::Need;
use crate::error::Error;

/// A facade path as the form's field key: `/a/0/b`, `.a[0].b` and `a[0].b` are all `a.0.b`.
pub(crate) fn key_of(path: &str) -> String {
    let dotted: String = path
        .chars()
        .filter(|c| *c != ']')
        .map(|c| if c == '[' || c == '/' { '.' } else { c })
        .collect();
    dotted
        .split('.')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

/// The key `key` (as [`key_of`] makes it) with the index after a list's name turned from the
/// request's numbering to the form's rows.
pub(crate) fn renumber(key: &str, lists: &[(&str, &[usize])]) -> String {
    let mut parts: Vec<String> = key.split('.').map(str::to_owned).collect();
    if let [list, index, ..] = parts.as_mut_slice()
        && let Some((_, from)) = lists.iter().find(|(name, _)| name == list)
        && let Ok(i) = index.parse::<usize>()
        && let Some(row) = from.get(i)
    {
        *index = row.to_string();
    }
    parts.join(".")
}

/// Whether the field key `key` is `path` or one of its ancestors.
fn covers(key: &str, path: &str) -> bool {
    path == key
        || path
            .strip_prefix(key)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// A form's problems: messages by field key, and those no field of the form names.
#[derive(Debug, Default)]
pub(crate) struct Problems {
    headline: Option<String>,
    placed: Vec<(String, String)>,
    general: Vec<String>,
}

impl Problems {
    /// No problem: the form as first shown.
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// The problems of `error` on a form whose fields are `fields` (keys as [`key_of`]
    /// makes them): each detail goes to the deepest field its path is in. An error without
    /// details is shown above the form; a name taken is shown next to `fallback` too.
    pub(crate) fn of(error: &Error, fields: &[String], fallback: Option<&str>) -> Self {
        Self::of_rows(error, fields, fallback, &[])
    }

    /// [`of`](Self::of) for a form with lists whose removed rows the request left out:
    /// `(list, from)` says that the request's `list[i]` is the form's row `from[i]`.
    pub(crate) fn of_rows(
        error: &Error,
        fields: &[String],
        fallback: Option<&str>,
        lists: &[(&str, &[usize])],
    ) -> Self {
        let mut problems = Problems {
            headline: Some(error.to_string()),
            ..Self::default()
        };
        let details = match error {
            Error::Validation { details, .. } => details.as_slice(),
            _ => &[],
        };
        // The facade's headline repeats the details (and may speak of "the import", whose
        // checks strategies share): when every detail has its field, the count says enough.
        let placed_all = !details.is_empty()
            && details.iter().all(|d| {
                let path = d
                    .path
                    .as_deref()
                    .map(|p| renumber(&key_of(p), lists))
                    .unwrap_or_default();
                fields.iter().any(|key| covers(key, &path))
            });
        if placed_all {
            problems.headline = Some(match details.len() {
                1 => "the form has a problem.".to_owned(),
                n => format!("the form has {n} problems."),
            });
        }
        for detail in details {
            let path = detail
                .path
                .as_deref()
                .map(|p| renumber(&key_of(p), lists))
                .unwrap_or_default();
            let field = fields
                .iter()
                .filter(|key| covers(key, &path))
                .max_by_key(|key| key.len());
            match field {
                Some(key) => problems.placed.push((key.clone(), detail.message.clone())),
                None => problems.general.push(detail.to_string()),
            }
        }
        if matches!(error, Error::NameExists { .. })
            && let Some(key) = fallback
        {
            problems.placed.push((key.to_owned(), error.to_string()));
        }
        problems
    }

    /// A problem the page finds itself before asking the facade (a number that is not
    /// one), at `key`.
    pub(crate) fn field(key: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Problems {
            headline: Some("the form has a problem.".to_owned()),
            placed: vec![(key.to_owned(), message)],
            general: Vec::new(),
        }
    }

    /// Whether the field `key` has a problem.
    pub(crate) fn invalid(&self, key: &str) -> bool {
        self.placed.iter().any(|(k, _)| k == key)
    }

    /// The id of the field's message, for `aria-describedby`, when it has one.
    pub(crate) fn described(&self, key: &str) -> Option<String> {
        self.invalid(key).then(|| error_id(key))
    }

    /// The field's messages, next to it.
    pub(crate) fn at(&self, key: &str) -> Markup {
        let messages: Vec<&str> = self
            .placed
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, m)| m.as_str())
            .collect();
        html! {
            @if !messages.is_empty() {
                span.field-error id=(error_id(key)) { (messages.join(" ")) }
            }
        }
    }

    /// The box above the form: what was refused, the problems no field holds, and that
    /// nothing was changed.
    pub(crate) fn summary(&self) -> Markup {
        html! {
            @if let Some(headline) = &self.headline {
                div.error role="alert" {
                    p { "Not saved: " (headline) }
                    @if !self.general.is_empty() {
                        ul { @for g in &self.general { li { (g) } } }
                    }
                    @if !self.placed.is_empty() {
                        p { "The problems are shown next to their fields. Nothing was changed." }
                    } @else {
                        p { "Nothing was changed." }
                    }
                }
            }
        }
    }
}

/// The id of the message of field `key`.
pub(crate) fn error_id(key: &str) -> String {
    format!("{key}.error")
}

/// Whether `error` is shown on its form, what was typed kept (a refused input, a name taken,
/// a permission missing, maintenance mode), rather than as a page of its own (a missing
/// thing, a failure).
pub(crate) fn belongs_on_form(error: &Error) -> bool {
    matches!(
        error,
        Error::Validation { .. }
            | Error::NameExists { .. }
            | Error::InUse { .. }
            | Error::NoAccess { .. }
            | Error::Maintenance { .. }
    )
}

/// A notice for a reader who may look but not change: why, in the facade's words. `None`
/// when the caller holds `needs` (the facade still decides each change).
pub(crate) async fn read_only(ui: &Ui, signed: &Signed, needs: &[Need<'_>]) -> Option<Markup> {
    match ui.admin.permit(signed.caller(), needs).await {
        Ok(_) => None,
        Err(error @ Error::NoAccess { .. }) => Some(html! {
            p.warning role="note" {
                "You can look at this but not change it: " (error)
            }
        }),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorDetail;

    #[test]
    fn paths_of_every_spelling_name_the_same_field() {
        assert_eq!(key_of("/constraints/0/values"), "constraints.0.values");
        assert_eq!(key_of(".constraints[0].values"), "constraints.0.values");
        assert_eq!(key_of("legalValues[1].value"), "legalValues.1.value");
        assert_eq!(
            key_of(".variants/0/payload/value"),
            "variants.0.payload.value"
        );
        assert_eq!(key_of("name"), "name");
    }

    #[test]
    fn details_go_to_the_deepest_field_their_path_is_in() {
        let error = Error::validation(
            "bad",
            vec![
                ErrorDetail::at(".parameters.rollout", "too much"),
                ErrorDetail::at(".constraints[0].values[1]", "empty"),
                ErrorDetail::at(".constraints[0].valuesX", "elsewhere"),
                ErrorDetail::general("whole"),
            ],
        );
        let fields = [
            "parameters.rollout".to_owned(),
            "constraints.0".to_owned(),
            "constraints.0.values".to_owned(),
        ];
        let problems = Problems::of(&error, &fields, None);
        assert!(problems.invalid("parameters.rollout"));
        assert!(problems.invalid("constraints.0.values"));
        assert!(problems.invalid("constraints.0"));
        assert_eq!(problems.general, ["whole"]);
        assert_eq!(
            problems.described("parameters.rollout").as_deref(),
            Some("parameters.rollout.error")
        );
        let removed = Error::validation(
            "bad",
            vec![ErrorDetail::at(".constraints[1].values", "empty")],
        );
        let problems = Problems::of_rows(
            &removed,
            &["constraints.2.values".to_owned()],
            None,
            &[("constraints", &[0, 2])],
        );
        assert!(problems.invalid("constraints.2.values"));
        let taken = Error::name_exists("taken");
        let problems = Problems::of(&taken, &[], Some("name"));
        assert!(problems.invalid("name"));
    }
}
