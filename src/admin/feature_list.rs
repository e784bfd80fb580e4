//! A project's features as a list a person pages through: searched by name or description,
//! one page at a time, each feature with whether it is on in each of the project's
//! environments.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ToggleAdmin;
use super::records::project_not_found;
use super::records::{decode_opt, decode_ref, feature_environment_key, project_key};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::Project;
use crate::store::{Collection, Key};

/// The most features one page may hold; a larger `limit` is lowered to it.
pub const MAX_FEATURE_PAGE: usize = 500;

/// Which of a project's features [`ToggleAdmin::feature_list`] answers with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureListQuery {
    /// Only features whose name or description contains this text, compared without regard to
    /// case; all of them when `None` or blank.
    pub search: Option<String>,
    /// How many matching features to skip (by name).
    pub offset: usize,
    /// How many to answer with at most (at most [`MAX_FEATURE_PAGE`]).
    pub limit: usize,
}

/// One page of a project's features.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureList {
    /// The project's environments, in the project's order: the columns of `features`'
    /// `enabled`.
    pub environments: Vec<String>,
    /// How many features match in all (the page holds at most `limit` of them).
    pub total: usize,
    /// The page, by name.
    pub features: Vec<FeatureSummary>,
}

/// A feature as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureSummary {
    /// Its name.
    pub name: String,
    /// Its type (`release`, `experiment`, …).
    pub feature_type: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// Whether it is on, per environment of [`FeatureList::environments`], in that order.
    pub enabled: Vec<bool>,
}

/// The part of a stored feature the list reads, borrowed from the record's text: only the
/// page's features are copied out.
#[derive(Deserialize)]
struct FeatureHead<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    project: Cow<'a, str>,
    #[serde(borrow, rename = "type")]
    feature_type: Cow<'a, str>,
    #[serde(default, borrow)]
    description: Option<Cow<'a, str>>,
    #[serde(default)]
    stale: bool,
    #[serde(default)]
    archived: bool,
    #[serde(rename = "createdAt")]
    created_at: DateTime<Utc>,
}

/// The part of a feature's environment record the list reads.
#[derive(Deserialize)]
struct EnabledHead {
    #[serde(default)]
    enabled: bool,
}

impl ToggleAdmin {
    /// A page of the features of `project` that are not archived, by name, with how many
    /// match in all and whether each is on in each of the project's environments. Any valid
    /// key may read it; an unknown project → [`Error::NotFound`](crate::Error::NotFound).
    ///
    /// Read from one consistent view of the store. Every feature record is looked at (names
    /// are unique across projects, so a project's features are not stored together), but only
    /// the page's are copied, and only the page's environment records are read.
    pub async fn feature_list(
        &self,
        caller: &Caller,
        project: &str,
        query: &FeatureListQuery,
    ) -> Result<FeatureList> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let pkey = project_key(project);
        let current: Project = decode_opt(&pkey, view.get(&pkey).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let needle = query
            .search
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_lowercase);
        let matches = |text: &str| {
            needle
                .as_deref()
                .is_none_or(|n| text.to_lowercase().contains(n))
        };
        let listing = view.list(Collection::Features, "").await?;
        let limit = query.limit.min(MAX_FEATURE_PAGE);
        let mut total = 0usize;
        let mut page = Vec::new();
        for (id, stored) in &listing.records {
            let head: FeatureHead<'_> =
                decode_ref(&Key::new(Collection::Features, id.clone()), &stored.value)?;
            if head.archived || head.project != project {
                continue;
            }
            if !(matches(&head.name) || head.description.as_deref().is_some_and(matches)) {
                continue;
            }
            if total >= query.offset && page.len() < limit {
                page.push(FeatureSummary {
                    name: head.name.into_owned(),
                    feature_type: head.feature_type.into_owned(),
                    description: head.description.map(Cow::into_owned),
                    stale: head.stale,
                    created_at: head.created_at,
                    enabled: Vec::new(),
                });
            }
            total += 1;
        }
        let environments = current.environments.clone();
        let keys: Vec<Key> = page
            .iter()
            .flat_map(|f| {
                environments
                    .iter()
                    .map(|e| feature_environment_key(&f.name, e))
            })
            .collect();
        let records = view.get_many(&keys).await?;
        let mut records = keys.iter().zip(records);
        for feature in &mut page {
            for _ in &environments {
                let enabled = match records.next() {
                    Some((key, Some(record))) => {
                        decode_ref::<EnabledHead>(key, &record.value)?.enabled
                    }
                    _ => false,
                };
                feature.enabled.push(enabled);
            }
        }
        Ok(FeatureList {
            environments,
            total,
            features: page,
        })
    }
}
