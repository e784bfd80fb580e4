//! Searching features across projects, as Unleash's feature search does: text, filters,
//! sorting and paging.

use std::collections::BTreeMap;

use super::ToggleAdmin;
use super::features::{FeatureLinks, feature_view};
use super::reader::Reader;
use super::records::{FeatureEnvironmentRecord, FeatureRecord, FeatureTagsRecord, SEP, decode};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{
    Environment, Feature, FeatureSearch, FeatureSearchQuery, MAX_SEARCH_PAGE, Project, Segment, Tag,
};
use crate::store::{Collection, Key};

/// A filter parameter: its operator and values (`IS:a`, `IS_ANY_OF:a,b`, `INCLUDE:t:v`).
fn filter(
    param: &str,
    raw: Option<&str>,
    operators: &[&str],
    problems: &mut Vec<ErrorDetail>,
) -> Option<Vec<String>> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    let Some((operator, values)) = raw.split_once(':') else {
        problems.push(ErrorDetail::at(
            param,
            format!(
                "\"{raw}\" is not a filter; write one of {}, then ':' and the values",
                operators.join(", ")
            ),
        ));
        return None;
    };
    if !operators.contains(&operator) {
        problems.push(ErrorDetail::at(
            param,
            format!(
                "the operator \"{operator}\" is not one of {}",
                operators.join(", ")
            ),
        ));
        return None;
    }
    Some(
        values
            .split(',')
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

fn number(
    param: &str,
    raw: Option<&str>,
    default: usize,
    problems: &mut Vec<ErrorDetail>,
) -> usize {
    match raw.map(str::trim).filter(|s| !s.is_empty()) {
        None => default,
        Some(text) => text.parse().unwrap_or_else(|_| {
            problems.push(ErrorDetail::at(
                param,
                format!("\"{text}\" is not a non-negative integer"),
            ));
            default
        }),
    }
}

/// What a search result shows beyond [`feature_view`], as Unleash's search does: when it was
/// archived (never, here), its dependency type (`null`: search shows no dependencies), the
/// names of the segments its strategies use, and each environment's change requests (none:
/// there are no change requests).
fn search_item(view: &mut Feature, record: &FeatureRecord, segments: &[Segment]) {
    view.archived_at = Some(record.archived_at);
    view.extra
        .insert("dependencyType".to_owned(), serde_json::Value::Null);
    let mut used: Vec<String> = Vec::new();
    for environment in view.environments.iter_mut().flatten() {
        environment
            .extra
            .insert("changeRequestIds".to_owned(), serde_json::json!([]));
        for strategy in environment.strategies.iter().flatten() {
            for id in &strategy.segments {
                if let Some(segment) = segments.iter().find(|s| s.id == *id)
                    && !used.contains(&segment.name)
                {
                    used.push(segment.name.clone());
                }
            }
        }
    }
    used.sort();
    view.extra
        .insert("segments".to_owned(), serde_json::json!(used));
}

impl ToggleAdmin {
    /// The features, of every project, that are not archived and match `query` (Unleash's
    /// `GET /api/admin/search/features`): `{features, total}`, each feature as
    /// [`feature`](Self::feature) shows it plus its `tags`. Any valid key may search.
    ///
    /// Where we differ from Unleash: a filter with an unknown operator, an unknown `state`,
    /// `sortBy` or `sortOrder`, or an `offset`/`limit` that is not a non-negative integer
    /// is a 400 naming the parameter (Unleash ignores some and answers others with a 500).
    pub async fn search_features(
        &self,
        caller: &Caller,
        query: &FeatureSearchQuery,
    ) -> Result<FeatureSearch> {
        self.require(caller, &[]).await?;
        let mut problems = Vec::new();
        let projects = filter(
            "project",
            query.project.as_deref(),
            &["IS", "IS_ANY_OF"],
            &mut problems,
        );
        let types = filter(
            "type",
            query.feature_type.as_deref(),
            &["IS", "IS_ANY_OF"],
            &mut problems,
        );
        let states = filter(
            "state",
            query.state.as_deref(),
            &["IS", "IS_ANY_OF"],
            &mut problems,
        );
        let tags = filter(
            "tag",
            query.tag.as_deref(),
            &["INCLUDE", "INCLUDE_ANY_OF", "INCLUDE_ALL_OF"],
            &mut problems,
        );
        if let Some(states) = &states {
            for state in states {
                if state != "stale" && state != "active" {
                    problems.push(ErrorDetail::at(
                        "state",
                        format!("\"{state}\" is not a state: stale or active"),
                    ));
                }
            }
        }
        let wanted_tags: Option<Vec<(String, String)>> = tags.map(|tags| {
            tags.iter()
                .filter_map(|t| match t.split_once(':') {
                    Some((kind, value)) => Some((kind.to_owned(), value.to_owned())),
                    None => {
                        problems.push(ErrorDetail::at(
                            "tag",
                            format!("\"{t}\" is not a tag: write type:value"),
                        ));
                        None
                    }
                })
                .collect()
        });
        let sort_by = query.sort_by.as_deref().unwrap_or("name");
        if !["name", "createdAt", "type", "project"].contains(&sort_by) {
            problems.push(ErrorDetail::at(
                "sortBy",
                format!("\"{sort_by}\" is not one of name, createdAt, type, project"),
            ));
        }
        let descending = match query.sort_order.as_deref().unwrap_or("asc") {
            "asc" => false,
            "desc" => true,
            other => {
                problems.push(ErrorDetail::at(
                    "sortOrder",
                    format!("\"{other}\" is not asc or desc"),
                ));
                false
            }
        };
        let offset = number("offset", query.offset.as_deref(), 0, &mut problems);
        let limit = number("limit", query.limit.as_deref(), 50, &mut problems).min(MAX_SEARCH_PAGE);
        if !problems.is_empty() {
            return Err(Error::validation("The search is not valid.", problems));
        }
        let needle = query
            .query
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase);

        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let tag_listing = reader.list(Collection::FeatureTags, "").await?;
        let mut tags_of: BTreeMap<String, Vec<Tag>> = BTreeMap::new();
        for (id, stored) in &tag_listing.records {
            let record: FeatureTagsRecord = decode(
                &Key::new(Collection::FeatureTags, id.clone()),
                &stored.value,
            )?;
            tags_of.insert(id.clone(), record.tags);
        }
        let no_tags = Vec::new();
        let mut matches: Vec<&FeatureRecord> = features
            .iter()
            .filter(|f| !f.archived)
            .filter(|f| projects.as_ref().is_none_or(|p| p.contains(&f.project)))
            .filter(|f| types.as_ref().is_none_or(|t| t.contains(&f.feature_type)))
            .filter(|f| {
                states
                    .as_ref()
                    .is_none_or(|s| s.iter().any(|s| (s == "stale") == f.stale))
            })
            .filter(|f| {
                let tags = tags_of.get(&f.name).unwrap_or(&no_tags);
                wanted_tags.as_ref().is_none_or(|wanted| {
                    wanted.iter().any(|(kind, value)| {
                        tags.iter()
                            .any(|t| t.tag_type == *kind && t.value == *value)
                    })
                })
            })
            .filter(|f| {
                needle.as_deref().is_none_or(|n| {
                    f.name.to_lowercase().contains(n)
                        || f.description
                            .as_deref()
                            .is_some_and(|d| d.to_lowercase().contains(n))
                        || tags_of.get(&f.name).is_some_and(|tags| {
                            tags.iter().any(|t| t.value.to_lowercase().contains(n))
                        })
                })
            })
            .collect();
        matches.sort_by(|a, b| {
            let order = match sort_by {
                "createdAt" => a.created_at.cmp(&b.created_at),
                "type" => a.feature_type.cmp(&b.feature_type),
                "project" => a.project.cmp(&b.project),
                _ => std::cmp::Ordering::Equal,
            }
            .then_with(|| a.name.cmp(&b.name));
            if descending { order.reverse() } else { order }
        });
        let total = matches.len();
        let (_, catalog) = reader
            .list_decoded::<Environment>(Collection::Environments)
            .await?;
        let (_, all_projects) = reader.list_decoded::<Project>(Collection::Projects).await?;
        let (_, segments) = reader.list_decoded::<Segment>(Collection::Segments).await?;
        let mut page: Vec<Feature> = Vec::new();
        for record in matches.into_iter().skip(offset).take(limit) {
            let Some(project) = all_projects.iter().find(|p| p.id == record.project) else {
                continue;
            };
            let listing = reader
                .list(
                    Collection::FeatureEnvironments,
                    &format!("{}{SEP}", record.name),
                )
                .await?;
            let mut environments = Vec::new();
            for (id, stored) in &listing.records {
                let env = id.split_once(SEP).map_or(id.as_str(), |(_, env)| env);
                let fe: FeatureEnvironmentRecord = decode(
                    &Key::new(Collection::FeatureEnvironments, id.clone()),
                    &stored.value,
                )?;
                environments.push((env.to_owned(), fe));
            }
            let links = FeatureLinks {
                environments: &catalog,
                parents: Vec::new(),
                children: Vec::new(),
            };
            let mut view = feature_view(record, project, &environments, Some(links));
            view.tags = Some(Some(tags_of.get(&record.name).cloned().unwrap_or_default()));
            view.dependencies = None;
            view.children = None;
            search_item(&mut view, record, &segments);
            page.push(view);
        }
        Ok(FeatureSearch {
            features: page,
            total,
        })
    }
}
