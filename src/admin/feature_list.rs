//! A project's features as a list a person pages through: searched by name or description,
//! one page at a time, each feature with whether it is on in each of the project's
//! environments.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::ToggleAdmin;
use super::records::project_not_found;
use super::records::{decode_opt, decode_ref, feature_environment_key, project_key};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{FeatureList, FeatureListQuery, FeatureSummary, MAX_FEATURE_PAGE, Project};
use crate::store::{Collection, Key};

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
