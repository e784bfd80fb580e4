//! The rules of feature dependencies, shared by the import and by dependencies added one at a
//! time: no self-dependency, no chains (a parent has no parents, a child has no children),
//! parent and child in the same project.

use std::collections::BTreeMap;

use crate::model::ParentDependency;

/// What is wrong with making `child` depend on `parent`, given every feature's parents
/// (`graph`, by child, **including** the proposed edge) and each feature's project (`None`
/// when the feature does not exist or is archived).
pub fn dependency_problem(
    child: &str,
    parent: &str,
    graph: &BTreeMap<String, Vec<ParentDependency>>,
    project_of: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    if child == parent {
        return Some(format!("\"{child}\" cannot depend on itself"));
    }
    let Some(parent_project) = project_of(parent) else {
        return Some(format!(
            "the parent \"{parent}\" does not exist (or is archived)"
        ));
    };
    if project_of(child).is_some_and(|p| p != parent_project) {
        return Some(format!(
            "the parent \"{parent}\" is in project \"{parent_project}\"; parent and child must be in the same project"
        ));
    }
    if graph.get(parent).is_some_and(|parents| !parents.is_empty()) {
        return Some(format!(
            "transitive dependency: the parent \"{parent}\" depends on other features itself"
        ));
    }
    let has_children = graph
        .iter()
        .any(|(other, parents)| other != child && parents.iter().any(|p| p.feature == child));
    if has_children {
        return Some(format!(
            "transitive dependency: other features depend on \"{child}\", so it cannot depend on another"
        ));
    }
    None
}

/// A dependency with its defaults filled in: `enabled` true when absent, `variants` empty
/// when absent and dropped when the parent must be disabled (they would never apply).
pub fn normalise_dependency(dependency: &ParentDependency) -> ParentDependency {
    let enabled = dependency.is_enabled();
    ParentDependency {
        feature: dependency.feature.clone(),
        enabled: Some(enabled),
        variants: Some(if enabled {
            dependency.variant_names().to_vec()
        } else {
            Vec::new()
        }),
    }
}

/// `parents` with `dependency` added, replacing an existing one on the same parent.
pub fn upsert(parents: &[ParentDependency], dependency: ParentDependency) -> Vec<ParentDependency> {
    let mut out: Vec<ParentDependency> = parents.to_vec();
    match out.iter_mut().find(|p| p.feature == dependency.feature) {
        Some(existing) => *existing = dependency,
        None => out.push(dependency),
    }
    out
}
