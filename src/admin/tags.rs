//! Tags: the tags that exist (list, read, create, delete), and the tags on features (list,
//! add, remove, and many changes at once, on one feature or many features of a project).
//!
//! A tag exists once it is created (`POST /api/admin/tags`) or first put on a feature (as
//! Unleash creates it then), and stays when taken off its features; a tag put on a feature
//! by an import before it was recorded on its own is listed too, for as long as a feature
//! has it. Deleting a tag takes it off every feature.

use std::collections::BTreeMap;

use super::reader::Reader;
use super::records::{
    FeatureRecord, FeatureTagsRecord, check_feature, decode, decode_opt, encode, feature_key,
    feature_tags_key, project_key, tag_key,
};
use super::{Authority, Need, ToggleAdmin, Tx};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::import::{SIMPLE_TAG_TYPE, tag_type_name_problem, tag_value_problem};
use crate::model::{BulkTagChanges, Permission, Tag, TagChanges};
use crate::store::{Collection, Json, Key};

impl ToggleAdmin {
    /// Every tag that exists, by type then value. Any valid key may read them.
    pub async fn tags(&self, caller: &Caller) -> Result<Vec<Tag>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        existing_tags(Reader::View(view.as_ref()), None).await
    }

    /// The tags of type `tag_type`, by value (none when the type has none or does not
    /// exist, as in Unleash). Any valid key may read them.
    pub async fn tags_of_type(&self, caller: &Caller, tag_type: &str) -> Result<Vec<Tag>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        existing_tags(Reader::View(view.as_ref()), Some(tag_type)).await
    }

    /// The tag `value` of type `tag_type`; [`Error::NotFound`] when there is none.
    pub async fn tag(&self, caller: &Caller, tag_type: &str, value: &str) -> Result<Tag> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let wanted = Tag {
            value: value.to_owned(),
            tag_type: tag_type.to_owned(),
        };
        if existing_tags(Reader::View(view.as_ref()), Some(tag_type))
            .await?
            .contains(&wanted)
        {
            return Ok(wanted);
        }
        Err(Error::not_found(format!(
            "There's no tag of type \"{tag_type}\" with value \"{value}\"."
        )))
    }

    /// Create a tag. Needs `UPDATE_FEATURE` (as Unleash). The value is trimmed and must have
    /// 2–50 characters; the type must exist (`simple` always does): a tag of an unknown type
    /// is a 400 naming the type, where Unleash 6.10.1 answers 500 (its database refuses
    /// it). A tag that exists → [`Error::NameExists`]. Event `tag-created`.
    pub async fn create_tag<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        tag: &Tag,
    ) -> Result<Tag> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::UpdateFeature)])
            .await?;
        let tag = trimmed(tag);
        let tag = &tag;
        self.change("create_tag", permit, |tx| {
            Box::pin(async move {
                let one = std::slice::from_ref(tag);
                let mut problems = tag_problems(one, "");
                problems.extend(type_problems(tx.reader(), one, "").await?);
                if !problems.is_empty() {
                    return Err(invalid_tags(problems));
                }
                if existing_tags(tx.reader(), Some(&tag.tag_type))
                    .await?
                    .contains(tag)
                {
                    return Err(Error::name_exists(format!(
                        "A tag of type \"{}\" with value \"{}\" already exists.",
                        tag.tag_type, tag.value
                    )));
                }
                let key = tag_key(&tag.tag_type, &tag.value);
                tx.create(key.clone(), encode(&key, tag)?, "tag-created");
                Ok(())
            })
        })
        .await?;
        Ok(tag.clone())
    }

    /// Delete the tag `value` of type `tag_type`, and take it off every feature that has it
    /// (a `feature-untagged` event each, where Unleash's database drops them without one).
    /// Needs `UPDATE_FEATURE`. Deleting a tag that does not exist changes nothing and
    /// succeeds, as in Unleash; otherwise event `tag-deleted`.
    pub async fn delete_tag<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        tag_type: &str,
        value: &str,
    ) -> Result<()> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::UpdateFeature)])
            .await?;
        let tag = &Tag {
            value: value.to_owned(),
            tag_type: tag_type.to_owned(),
        };
        self.change("delete_tag", permit, |tx| {
            Box::pin(async move {
                let key = tag_key(&tag.tag_type, &tag.value);
                let stored = tx.get(&key).await?.is_some();
                let listing = tx.list(Collection::FeatureTags, "").await?;
                let mut found = stored;
                for (feature, record) in &listing.records {
                    let tkey = feature_tags_key(feature);
                    let mut tags: FeatureTagsRecord = decode(&tkey, &record.value)?;
                    if !tags.tags.contains(tag) {
                        continue;
                    }
                    found = true;
                    tags.tags.retain(|t| t != tag);
                    let fkey = feature_key(feature);
                    let flag: Option<FeatureRecord> =
                        decode_opt(&fkey, tx.get(&fkey).await?.as_ref())?;
                    write_tags(tx, &tkey, &tags)?;
                    tx.record(
                        "feature-untagged",
                        flag.as_ref().map(|f| f.project.as_str()),
                        Some(feature),
                        None,
                        Some(Json::of(tag)),
                        None,
                    );
                }
                if !found {
                    return Ok(());
                }
                if stored {
                    tx.delete(key);
                }
                tx.record("tag-deleted", None, None, None, Some(Json::of(tag)), None);
                Ok(())
            })
        })
        .await
    }
}

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
        let (_, record): (_, FeatureTagsRecord) = self
            .reader()
            .feature_with(project, feature, feature_tags_key(feature))
            .await?;
        Ok(record.tags)
    }

    /// Tag `feature` of `project`. Needs `UPDATE_FEATURE` in the project. The tag type must
    /// exist (`simple` always does) and the value have 2–50 characters. Adding a tag the
    /// feature has changes nothing; otherwise event `feature-tagged` (and `tag-created` for
    /// a tag that did not exist yet).
    pub async fn add_feature_tag(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        tag: &Tag,
    ) -> Result<()> {
        let changes = TagChanges {
            added_tags: vec![tag.clone()],
            removed_tags: Vec::new(),
        };
        self.update_feature_tags(caller, project, feature, &changes)
            .await
            .map(drop)
            .map_err(|e| at_single_tag(e, "/addedTags/0"))
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
        let changes = TagChanges {
            added_tags: Vec::new(),
            removed_tags: vec![tag.clone()],
        };
        self.update_feature_tags(caller, project, feature, &changes)
            .await
            .map(drop)
            .map_err(|e| at_single_tag(e, "/removedTags/0"))
    }

    /// Add `changes.added_tags` to `feature` of `project` and remove
    /// `changes.removed_tags`, in one change: `PUT /api/admin/features/{featureName}/tags`.
    /// Returns the feature's tags after it. Needs `UPDATE_FEATURE` in the project.
    ///
    /// Added tags are checked as [`create_tag`](Self::create_tag) checks one (every problem
    /// listed with its path, `/addedTags/1/type`); nothing changes unless all are valid. A
    /// tag both added and removed ends up removed (Unleash adds, then removes). Events are
    /// written for what changed: `feature-tagged` per tag the feature gained,
    /// `feature-untagged` per tag it lost (Unleash writes one per tag listed, changed or
    /// not), and `tag-created` for a tag that did not exist before.
    pub async fn update_feature_tags<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        changes: &TagChanges,
    ) -> Result<Vec<Tag>> {
        let permit = self.admit(authority.into(), &tag_needs(project)).await?;
        let (changes, problems) = checked_changes(changes, "");
        let (changes, problems) = (&changes, &problems);
        self.change("update_feature_tags", permit, |tx| {
            Box::pin(async move {
                let (_, current): (_, FeatureTagsRecord) = tx
                    .reader()
                    .feature_with(project, feature, feature_tags_key(feature))
                    .await?;
                let mut problems = problems.clone();
                problems
                    .extend(type_problems(tx.reader(), &changes.added_tags, "/addedTags").await?);
                if !problems.is_empty() {
                    return Err(invalid_tags(problems));
                }
                record_new_tags(tx, &changes.added_tags).await?;
                retag(tx, project, feature, current, changes).await
            })
        })
        .await
    }

    /// Apply the same tag changes to every feature in `changes.features`, all of `project`,
    /// in one change: `PUT /api/admin/projects/{projectId}/tags`. Needs `UPDATE_FEATURE` in
    /// the project.
    ///
    /// All or nothing: a feature that is not in the project (Unleash skips it silently) and
    /// every invalid tag are named in one 400 with their paths (`/features/2`,
    /// `/tags/addedTags/0/value`), a 404 when every problem is such a feature (as the other
    /// bulk operations answer); a missing project is a 404. The events are those of
    /// [`update_feature_tags`](Self::update_feature_tags), per feature.
    pub async fn update_project_tags<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        changes: &BulkTagChanges,
    ) -> Result<()> {
        let permit = self.admit(authority.into(), &tag_needs(project)).await?;
        let mut problems = Vec::new();
        let mut features: Vec<(usize, &str)> = Vec::new();
        for (index, name) in changes.features.iter().enumerate() {
            if name.is_empty() {
                problems.push(ErrorDetail::at(
                    format!("/features/{index}"),
                    "a feature name must not be empty",
                ));
            } else if !features.iter().any(|(_, n)| n == name) {
                features.push((index, name));
            }
        }
        let (tag_changes, tag_problems) = checked_changes(&changes.tags, "/tags");
        problems.extend(tag_problems);
        let (features, tag_changes, problems) = (&features, &tag_changes, &problems);
        self.change("update_project_tags", permit, |tx| {
            Box::pin(async move {
                let [p] = tx.read(&[project_key(project)]).await?;
                if p.is_none() {
                    return Err(super::records::project_not_found(project));
                }
                let mut problems = problems.clone();
                let mut found = Vec::new();
                let mut missing = 0;
                for (index, name) in features {
                    let keys = [feature_key(name), feature_tags_key(name)];
                    let [flag, tags] = tx.read(&keys).await?;
                    let flag: Option<FeatureRecord> = decode_opt(&keys[0], flag.as_ref())?;
                    match check_feature(project, name, true, flag) {
                        Ok(_) => found.push((
                            *name,
                            decode_opt::<FeatureTagsRecord>(&keys[1], tags.as_ref())?
                                .unwrap_or_default(),
                        )),
                        Err(error) => {
                            missing += 1;
                            problems.push(ErrorDetail::at(
                                format!("/features/{index}"),
                                error.to_string(),
                            ));
                        }
                    }
                }
                problems.extend(
                    type_problems(tx.reader(), &tag_changes.added_tags, "/tags/addedTags").await?,
                );
                if missing > 0 {
                    return Err(super::records::bulk_refusal(problems, missing));
                }
                if !problems.is_empty() {
                    return Err(invalid_tags(problems));
                }
                record_new_tags(tx, &tag_changes.added_tags).await?;
                for (name, current) in found {
                    retag(tx, project, name, current, tag_changes).await?;
                }
                Ok(())
            })
        })
        .await
    }
}

/// `UPDATE_FEATURE` in `project`: what changing a feature's tags needs.
fn tag_needs(project: &str) -> [Need<'_>; 1] {
    [Need::project(Permission::UpdateFeature, project)]
}

/// `tag` with its value trimmed, as Unleash stores it.
fn trimmed(tag: &Tag) -> Tag {
    Tag {
        value: tag.value.trim().to_owned(),
        tag_type: tag.tag_type.clone(),
    }
}

/// The problems of tags to add, each at `prefix/index/value` or `…/type`.
fn tag_problems(tags: &[Tag], prefix: &str) -> Vec<ErrorDetail> {
    let mut problems = Vec::new();
    for (index, tag) in tags.iter().enumerate() {
        let at = |field: &str| {
            if prefix.is_empty() {
                field.to_owned()
            } else {
                format!("{prefix}/{index}/{field}")
            }
        };
        if let Some(problem) = tag_value_problem(&tag.value) {
            problems.push(ErrorDetail::at(at("value"), problem));
        }
        if let Some(problem) = tag_type_name_problem(&tag.tag_type) {
            problems.push(ErrorDetail::at(at("type"), problem));
        }
    }
    problems
}

/// `changes` with values trimmed, and the problems of the added tags (paths under
/// `prefix`) that need no reading.
fn checked_changes(changes: &TagChanges, prefix: &str) -> (TagChanges, Vec<ErrorDetail>) {
    let checked = TagChanges {
        added_tags: changes.added_tags.iter().map(trimmed).collect(),
        removed_tags: changes.removed_tags.iter().map(trimmed).collect(),
    };
    let problems = tag_problems(&checked.added_tags, &format!("{prefix}/addedTags"));
    (checked, problems)
}

/// The 400 of tag changes: every problem listed; nothing changed.
fn invalid_tags(problems: Vec<ErrorDetail>) -> Error {
    match problems.as_slice() {
        [one] => Error::validation(one.to_string(), problems),
        _ => Error::validation(
            format!(
                "{} problems with the tags; nothing was changed.",
                problems.len()
            ),
            problems,
        ),
    }
}

/// An error of a one-tag change with its paths as the one-tag operations always named
/// them (`value`, `type`).
fn at_single_tag(error: Error, prefix: &str) -> Error {
    match error {
        Error::Validation {
            message, details, ..
        } => {
            let details: Vec<ErrorDetail> = details
                .into_iter()
                .map(|d| ErrorDetail {
                    path: d.path.map(|p| {
                        p.strip_prefix(&format!("{prefix}/"))
                            .unwrap_or(&p)
                            .to_owned()
                    }),
                    message: d.message,
                })
                .collect();
            let message = match details.as_slice() {
                [one] => one.to_string(),
                _ => message,
            };
            Error::validation(message, details)
        }
        other => other,
    }
}

/// The tags of `tags` whose type does not exist (`simple` always does), each named at
/// `prefix/index/type`; a type whose name is not valid is named by [`tag_problems`] already.
async fn type_problems(reader: Reader<'_>, tags: &[Tag], prefix: &str) -> Result<Vec<ErrorDetail>> {
    if tags.iter().all(|t| t.tag_type == SIMPLE_TAG_TYPE) {
        return Ok(Vec::new());
    }
    let (_, types) = reader.tag_type_map().await?;
    Ok(tags
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            tag_type_name_problem(&t.tag_type).is_none() && !types.contains_key(&t.tag_type)
        })
        .map(|(index, t)| {
            let path = if prefix.is_empty() {
                "type".to_owned()
            } else {
                format!("{prefix}/{index}/type")
            };
            ErrorDetail::at(path, format!("Tag type \"{}\" does not exist.", t.tag_type))
        })
        .collect())
}

/// Record in `tx` each of `tags` that is not recorded on its own yet, with `tag-created`:
/// a tag put on a feature exists from then on, as in Unleash.
async fn record_new_tags(tx: &mut Tx<'_>, tags: &[Tag]) -> Result<()> {
    for (index, tag) in tags.iter().enumerate() {
        if tags.iter().take(index).any(|t| t == tag) {
            continue;
        }
        let key = tag_key(&tag.tag_type, &tag.value);
        if tx.get(&key).await?.is_none() {
            tx.create(key.clone(), encode(&key, tag)?, "tag-created");
        }
    }
    Ok(())
}

/// Write `changes` to the tags `current` of `feature` (of `project`) in `tx`, with an event
/// per tag gained or lost. Returns the tags after.
async fn retag(
    tx: &mut Tx<'_>,
    project: &str,
    feature: &str,
    current: FeatureTagsRecord,
    changes: &TagChanges,
) -> Result<Vec<Tag>> {
    let mut next = current.tags.clone();
    for tag in &changes.added_tags {
        if !next.contains(tag) {
            next.push(tag.clone());
        }
    }
    next.retain(|t| !changes.removed_tags.contains(t));
    if next == current.tags {
        return Ok(next);
    }
    let tkey = feature_tags_key(feature);
    write_tags(tx, &tkey, &FeatureTagsRecord { tags: next.clone() })?;
    for tag in next.iter().filter(|t| !current.tags.contains(t)) {
        tx.record(
            "feature-tagged",
            Some(project),
            Some(feature),
            None,
            None,
            Some(Json::of(tag)),
        );
    }
    for tag in current.tags.iter().filter(|t| !next.contains(t)) {
        tx.record(
            "feature-untagged",
            Some(project),
            Some(feature),
            None,
            Some(Json::of(tag)),
            None,
        );
    }
    Ok(next)
}

/// Write a feature's tags at `key`: the record goes when the last tag does.
fn write_tags(tx: &mut Tx<'_>, key: &Key, tags: &FeatureTagsRecord) -> Result<()> {
    if tags.tags.is_empty() {
        tx.delete(key.clone());
    } else {
        tx.put(key.clone(), encode(key, tags)?);
    }
    Ok(())
}

/// The tags that exist (of `tag_type`, or all), by type then value: those recorded on their
/// own and those on features.
async fn existing_tags(reader: Reader<'_>, tag_type: Option<&str>) -> Result<Vec<Tag>> {
    let mut by_type: BTreeMap<(String, String), Tag> = BTreeMap::new();
    let prefix = tag_type.map_or(String::new(), |t| format!("{t}{}", super::records::SEP));
    let stored = reader.list(Collection::Tags, &prefix).await?;
    for (id, record) in &stored.records {
        let tag: Tag = decode(&Key::new(Collection::Tags, id.clone()), &record.value)?;
        by_type.insert((tag.tag_type.clone(), tag.value.clone()), tag);
    }
    let tagged = reader.list(Collection::FeatureTags, "").await?;
    for (feature, record) in &tagged.records {
        let tags: FeatureTagsRecord = decode(&feature_tags_key(feature), &record.value)?;
        for tag in tags.tags {
            if tag_type.is_none_or(|t| t == tag.tag_type) {
                by_type.insert((tag.tag_type.clone(), tag.value.clone()), tag);
            }
        }
    }
    Ok(by_type.into_values().collect())
}
