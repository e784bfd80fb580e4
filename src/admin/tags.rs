//! Tags on features (add, remove, list).

use crate::store::Json;

use super::records::{
    FeatureRecord, FeatureTagsRecord, decode_opt, encode, feature_key, feature_tags_key,
    project_key, tag_type_key,
};
use super::records::{feature_not_found, project_not_found};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{SIMPLE_TAG_TYPE, tag_value_problem};
use crate::model::Permission;
use crate::model::Tag;

impl ToggleAdmin {
    /// The tags of `feature` in `project`, in the order they were added. Any valid key may
    /// read them.
    pub async fn feature_tags(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<Vec<Tag>> {
        self.require(caller, &[]).await?;
        let record: FeatureTagsRecord = self
            .feature_attachment(project, feature, feature_tags_key(feature))
            .await?;
        Ok(record.tags)
    }

    /// Tag `feature` of `project`. Needs `UPDATE_FEATURE` in the project. The tag type must
    /// exist (`simple` always does) and the value have 2–50 characters. Adding a tag the
    /// feature has changes nothing; otherwise event `feature-tagged`.
    pub async fn add_feature_tag(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        tag: &Tag,
    ) -> Result<()> {
        self.change_tags(caller, project, feature, tag, true).await
    }

    /// Remove a tag from `feature` of `project`. Needs `UPDATE_FEATURE` in the project.
    /// Removing a tag the feature does not have changes nothing; otherwise event
    /// `feature-untagged`.
    pub async fn remove_feature_tag(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        tag: &Tag,
    ) -> Result<()> {
        self.change_tags(caller, project, feature, tag, false).await
    }

    async fn change_tags(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        tag: &Tag,
        add: bool,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateFeature, project)])
            .await?;
        let tag = Tag {
            value: tag.value.trim().to_owned(),
            tag_type: tag.tag_type.clone(),
        };
        if add && let Some(problem) = tag_value_problem(&tag.value) {
            return Err(Error::invalid_at("value", problem));
        }
        if add && let Some(problem) = crate::import::tag_type_name_problem(&tag.tag_type) {
            return Err(Error::invalid_at("type", problem));
        }
        let tag = &tag;
        self.change("change_tags", permit, |tx| {
            Box::pin(async move {
                let keys = [
                    project_key(project),
                    feature_key(feature),
                    feature_tags_key(feature),
                    tag_type_key(&tag.tag_type),
                ];
                let records = tx.reader().read(&keys).await?;
                check_feature(
                    project,
                    feature,
                    records[0].is_some(),
                    decode_opt(&keys[1], records[1].as_ref())?,
                )?;
                if add && tag.tag_type != SIMPLE_TAG_TYPE && records[3].is_none() {
                    return Err(Error::invalid_at(
                        "type",
                        format!("Tag type \"{}\" does not exist.", tag.tag_type),
                    ));
                }
                let mut current: FeatureTagsRecord =
                    decode_opt(&keys[2], records[2].as_ref())?.unwrap_or_default();
                let has = current.tags.contains(tag);
                if has == add {
                    return Ok(());
                }
                if add {
                    current.tags.push(tag.clone());
                } else {
                    current.tags.retain(|t| t != tag);
                }
                let (kind, pre, data) = if add {
                    ("feature-tagged", None, Some(Json::of(&tag)))
                } else {
                    ("feature-untagged", Some(Json::of(&tag)), None)
                };
                tx.put(keys[2].clone(), encode(&keys[2], &current)?).record(
                    kind,
                    Some(project),
                    Some(feature),
                    None,
                    pre,
                    data,
                );
                Ok(())
            })
        })
        .await
    }
}

impl ToggleAdmin {
    /// The record at `key` that belongs to `feature` of `project` (its tags, its
    /// dependencies), empty when there is none; 404 unless the project exists and the feature
    /// is in it.
    pub(crate) async fn feature_attachment<R: serde::de::DeserializeOwned + Default>(
        &self,
        project: &str,
        feature: &str,
        key: crate::store::Key,
    ) -> Result<R> {
        let [p, f, record] = self
            .reader()
            .read(&[project_key(project), feature_key(feature), key.clone()])
            .await?;
        check_feature(
            project,
            feature,
            p.is_some(),
            decode_opt(&feature_key(feature), f.as_ref())?,
        )?;
        Ok(decode_opt::<R>(&key, record.as_ref())?.unwrap_or_default())
    }
}

/// 404 unless the project exists and the feature is in it.
pub(crate) fn check_feature(
    project: &str,
    feature: &str,
    project_exists: bool,
    record: Option<FeatureRecord>,
) -> Result<FeatureRecord> {
    if !project_exists {
        return Err(project_not_found(project));
    }
    record
        .filter(|f| f.project == project)
        .ok_or_else(|| feature_not_found(feature, project))
}
