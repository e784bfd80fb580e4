//! The checks of an import against the snapshot, member by member. Each returns what the
//! plan needs and records problems in [`Issues`].

use std::collections::{BTreeMap, BTreeSet};

use super::parse::Payload;
use super::{FeatureMeta, Issues, Snapshot};
use crate::model::{ContextField, Feature, ImportMode, LegalValue, Project, Segment, TagType};
use crate::names::{is_url_friendly, name_problem};

/// The features the import works on.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// Features to import (not archived), by name, with their payload metadata and whether
    /// they exist already.
    pub active: BTreeMap<String, (FeatureMeta, bool)>,
    /// Their names in payload order.
    pub order: Vec<String>,
    /// Payload features archived in the store: skipped.
    pub archived: BTreeSet<String>,
    /// Payload features that exist, left as they are ([`ImportMode::CreateMissing`]).
    pub existing: BTreeSet<String>,
}

impl Selection {
    /// Under [`ImportMode::CreateMissing`], the features that exist leave the selection: they
    /// are skipped with everything that belongs to them, as archived ones are.
    pub fn apply(&mut self, mode: ImportMode) {
        if mode != ImportMode::CreateMissing {
            return;
        }
        let existing: Vec<String> = self
            .active
            .iter()
            .filter(|(_, (_, exists))| *exists)
            .map(|(name, _)| name.clone())
            .collect();
        for name in existing {
            self.active.remove(&name);
            self.existing.insert(name);
        }
        let active = &self.active;
        self.order.retain(|name| active.contains_key(name));
    }

    /// Whether the feature is in the payload but skipped (archived, or kept as it is).
    pub fn skipped(&self, name: &str) -> bool {
        self.archived.contains(name) || self.existing.contains(name)
    }
}

/// The target project and environment.
pub(crate) fn check_target(payload: &Payload, snapshot: &Snapshot, issues: &mut Issues) {
    if payload.project.is_empty() || payload.environment.is_empty() {
        return;
    }
    let Some(project) = &snapshot.project else {
        issues.not_found.push(crate::error::ErrorDetail::at(
            "project",
            format!("There's no project with id \"{}\".", payload.project),
        ));
        if !snapshot.environment_exists {
            issues.not_found.push(crate::error::ErrorDetail::at(
                "environment",
                format!("There's no environment named \"{}\".", payload.environment),
            ));
        }
        return;
    };
    if !snapshot.environment_exists {
        issues.not_found.push(crate::error::ErrorDetail::at(
            "environment",
            format!("There's no environment named \"{}\".", payload.environment),
        ));
    } else if !project.environments.contains(&payload.environment) {
        issues.error(
            "environment",
            format!(
                "The environment \"{}\" is not enabled for project \"{}\".",
                payload.environment, payload.project
            ),
        );
    }
}

/// `data.features`: names, duplicates, other projects, archived, naming pattern, limit.
pub(crate) fn check_features(
    payload: &Payload,
    snapshot: &Snapshot,
    issues: &mut Issues,
) -> Selection {
    let mut selection = Selection::default();
    let mut first_seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut new_names = Vec::new();
    for item in &payload.features {
        let feature = &item.value;
        let name = feature.name.as_str();
        if let Some(problem) = name_problem(name, 100) {
            issues.error(format!("{}.name", item.path), problem);
            continue;
        }
        if let Some(first) = first_seen.insert(name, &item.path) {
            issues.error(
                format!("{}.name", item.path),
                format!("duplicate feature \"{name}\": {first} has the same name"),
            );
            continue;
        }
        let existing = snapshot.features.get(name);
        match existing {
            Some(e) if e.archived => {
                issues.warn(
                    item.path.clone(),
                    format!(
                        "\"{name}\" is archived (in project \"{}\"): skipped with its strategies, environments, tags and dependencies; revive it to import it",
                        e.project
                    ),
                );
                selection.archived.insert(name.to_owned());
                continue;
            }
            Some(e) if e.project != payload.project => {
                issues.error(
                    format!("{}.name", item.path),
                    format!(
                        "the feature \"{name}\" already exists in project \"{}\"",
                        e.project
                    ),
                );
                continue;
            }
            Some(_) => {}
            None => new_names.push((name, item.path.as_str())),
        }
        if let Some(t) = &feature.feature_type
            && t.trim().is_empty()
        {
            issues.error(format!("{}.type", item.path), "type must not be empty");
        }
        selection.order.push(name.to_owned());
        selection
            .active
            .insert(name.to_owned(), (meta_of(feature), existing.is_some()));
    }
    if let Some(project) = &snapshot.project {
        check_naming(project, &new_names, issues);
        check_limit(project, snapshot, new_names.len(), issues);
    }
    selection
}

/// The metadata an imported feature gets: the payload's, Unleash's defaults for the rest.
fn meta_of(feature: &Feature) -> FeatureMeta {
    FeatureMeta {
        feature_type: feature
            .feature_type
            .clone()
            .unwrap_or_else(|| "release".to_owned()),
        description: feature
            .description
            .clone()
            .flatten()
            .filter(|d| !d.is_empty()),
        stale: feature.stale.unwrap_or(false),
        impression_data: feature.impression_data.unwrap_or(false),
    }
}

/// New features must follow the project's naming pattern.
fn check_naming(project: &Project, new_names: &[(&str, &str)], issues: &mut Issues) {
    let Some(naming) = &project.feature_naming else {
        return;
    };
    let Ok(regex) = crate::names::naming_regex(&naming.pattern) else {
        return;
    };
    for (name, path) in new_names.iter().filter(|(name, _)| !regex.is_match(name)) {
        let mut message = format!(
            "the feature name \"{name}\" does not match the project's naming pattern \"{}\"",
            naming.pattern
        );
        if let Some(example) = &naming.example {
            message.push_str(&format!(" (for example \"{example}\")"));
        }
        issues.error(format!("{path}.name"), message);
    }
}

/// The project's feature limit counts its features that are not archived.
fn check_limit(project: &Project, snapshot: &Snapshot, new: usize, issues: &mut Issues) {
    let Some(limit) = project.feature_limit else {
        return;
    };
    let current = snapshot
        .features
        .values()
        .filter(|f| f.project == project.id && !f.archived)
        .count();
    if new > 0 && current + new > limit as usize {
        issues.error(
            "data.features",
            format!(
                "the import creates {new} new features in project \"{}\", which has {current}; its limit is {limit}",
                project.id
            ),
        );
    }
}

/// `data.segments`: each name must be a stored segment, global or of the target project.
/// Returns the payload id → stored id map.
pub(crate) fn check_segments(
    payload: &Payload,
    snapshot: &Snapshot,
    issues: &mut Issues,
) -> BTreeMap<i64, i64> {
    let mut map = BTreeMap::new();
    for item in &payload.segments {
        let reference = &item.value;
        // The project's own segment wins over a global one of the same name; among equals the
        // oldest (lowest id), so the choice is deterministic.
        let mut candidates: Vec<&Segment> = snapshot
            .segments
            .iter()
            .filter(|s| s.name == reference.name)
            .filter(|s| s.project.is_none() || s.project.as_deref() == Some(&payload.project))
            .collect();
        candidates.sort_by_key(|s| (s.project.is_none(), s.id));
        match (candidates.first(), map.get(&reference.id)) {
            (None, _) => issues.error(
                item.path.clone(),
                format!(
                    "there is no segment named \"{}\" that is global or in project \"{}\"; create it first",
                    reference.name, payload.project
                ),
            ),
            (Some(found), Some(&earlier)) if earlier != found.id => issues.error(
                format!("{}.id", item.path),
                format!(
                    "segment id {} is listed twice with different names",
                    reference.id
                ),
            ),
            (Some(found), _) => {
                map.insert(reference.id, found.id);
            }
        }
    }
    map
}

/// `data.contextFields`: valid, not conflicting with stored ones. Returns the fields to
/// create.
pub(crate) fn check_context_fields(
    payload: &Payload,
    snapshot: &Snapshot,
    issues: &mut Issues,
) -> Vec<ContextField> {
    let mut create = Vec::new();
    let mut seen = BTreeSet::new();
    for item in &payload.context_fields {
        let field = &item.value;
        if let Some(problem) = name_problem(&field.name, 100) {
            issues.error(format!("{}.name", item.path), problem);
            continue;
        }
        if !seen.insert(field.name.as_str()) {
            issues.error(
                format!("{}.name", item.path),
                format!("the context field \"{}\" is listed twice", field.name),
            );
            continue;
        }
        if field
            .description
            .clone()
            .flatten()
            .is_some_and(|d| d.chars().count() > 250)
        {
            issues.error(
                format!("{}.description", item.path),
                "a description has at most 250 characters",
            );
        }
        let legal = field.legal_values.as_deref().unwrap_or(&[]);
        let mut values = BTreeSet::new();
        for (j, lv) in legal.iter().enumerate() {
            let at = format!("{}.legalValues[{j}]", item.path);
            if lv.value.is_empty() || lv.value.chars().count() > 100 {
                issues.error(at, "a legal value has 1–100 characters");
            } else if !values.insert(lv.value.as_str()) {
                issues.error(
                    at,
                    format!("the legal value \"{}\" is listed twice", lv.value),
                );
            }
        }
        match snapshot.context_fields.get(&field.name) {
            Some(existing) => {
                let known: Vec<&str> = existing
                    .legal_values
                    .as_deref()
                    .unwrap_or(&[])
                    .iter()
                    .map(|l| l.value.as_str())
                    .collect();
                let conflicting: Vec<&str> = legal
                    .iter()
                    .map(|l| l.value.as_str())
                    .filter(|v| !known.contains(v))
                    .collect();
                if !conflicting.is_empty() {
                    issues.error(
                        format!("{}.legalValues", item.path),
                        format!(
                            "the existing context field \"{}\" does not have the legal values {}; add them to it first",
                            field.name,
                            conflicting
                                .iter()
                                .map(|v| format!("\"{v}\""))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                }
            }
            None => create.push(ContextField {
                name: field.name.clone(),
                description: Some(field.description.clone().flatten()),
                stickiness: Some(field.stickiness.unwrap_or(false)),
                sort_order: Some(field.sort_order.unwrap_or(0)),
                legal_values: Some(
                    legal
                        .iter()
                        .map(|l| LegalValue {
                            value: l.value.clone(),
                            description: l.description.clone(),
                        })
                        .collect(),
                ),
                ..ContextField::default()
            }),
        }
    }
    create
}

/// `data.tagTypes`: valid names; duplicates (Unleash's own exports may have them) keep the
/// first. Returns the tag types to create.
pub(crate) fn check_tag_types(
    payload: &Payload,
    snapshot: &Snapshot,
    issues: &mut Issues,
) -> Vec<TagType> {
    let mut create: Vec<TagType> = Vec::new();
    let mut seen = BTreeSet::new();
    for item in &payload.tag_types {
        let tag_type = &item.value;
        if let Some(problem) = tag_type_name_problem(&tag_type.name) {
            issues.error(format!("{}.name", item.path), problem);
            continue;
        }
        if let Some(Some(color)) = &tag_type.color
            && !is_colour(color)
        {
            issues.error(
                format!("{}.color", item.path),
                format!("\"{color}\" is not a colour #RRGGBB"),
            );
        }
        if !seen.insert(tag_type.name.as_str()) {
            issues.warn(
                format!("{}.name", item.path),
                format!(
                    "the tag type \"{}\" is listed twice; the first is used",
                    tag_type.name
                ),
            );
            continue;
        }
        if !snapshot.tag_types.contains_key(&tag_type.name) {
            create.push(TagType {
                extra: serde_json::Map::new(),
                ..tag_type.clone()
            });
        }
    }
    create
}

/// What is wrong with a tag type name: URL-friendly, 2–50 characters (Unleash's rule).
pub(crate) fn tag_type_name_problem(name: &str) -> Option<String> {
    let length = name.chars().count();
    if !(2..=50).contains(&length) {
        Some(format!("a tag type name has 2–50 characters, not {length}"))
    } else if !is_url_friendly(name) {
        Some(format!("the tag type name \"{name}\" is not URL-friendly"))
    } else {
        None
    }
}

/// What is wrong with a tag value: 2–50 characters (Unleash's rule), none of them a control
/// character (a tag value is shown as a label; NUL, newlines and escapes are never part of
/// one).
pub(crate) fn tag_value_problem(value: &str) -> Option<String> {
    let length = value.trim().chars().count();
    if !(2..=50).contains(&length) {
        return Some(format!("a tag value has 2–50 characters, not {length}"));
    }
    value.chars().find(|c| c.is_control()).map(|c| {
        format!(
            "a tag value must not contain control characters, but has U+{:04X}",
            u32::from(c)
        )
    })
}

/// `#RRGGBB`.
pub(crate) fn is_colour(text: &str) -> bool {
    text.len() == 7 && text.starts_with('#') && text[1..].bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tag_value_tests {
    use super::tag_value_problem;

    #[test]
    fn tag_values_are_2_to_50_printable_characters() {
        assert_eq!(tag_value_problem("team-a"), None);
        assert_eq!(tag_value_problem("Équipe 🚀"), None);
        assert!(tag_value_problem("a").is_some());
        assert!(tag_value_problem(&"a".repeat(51)).is_some());
        assert!(tag_value_problem("a\u{0}b").is_some());
        assert!(tag_value_problem("a\nb").is_some());
    }
}
