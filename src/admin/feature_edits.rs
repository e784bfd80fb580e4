//! A feature's edits: replace its settings (`PUT`), patch them (`PATCH`), clone it, and check
//! a name before creating a feature under it.

use chrono::Utc;
use json_patch::{Patch, PatchOperation};
use serde_json::{Value, json};

use super::feature_archive::archive_in;
use super::records::{
    FeatureEnvironmentRecord, FeatureRecord, SEP, decode, decode_opt, encode,
    feature_environment_key, feature_key, feature_not_found, project_key, project_not_found,
};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{Feature, FeatureClone, FeatureName, FeatureUpdate, Permission, Project};
use crate::names::name_problem;
use crate::store::{Collection, Key};

/// Unleash's built-in feature types: what a feature's `type` may be.
pub const FEATURE_TYPES: [&str; 5] = [
    "release",
    "experiment",
    "operational",
    "kill-switch",
    "permission",
];

/// The members of a feature a `PATCH` may touch.
const PATCHABLE: [&str; 5] = ["description", "type", "stale", "impressionData", "archived"];

fn type_problem(feature_type: &str) -> Option<String> {
    (!FEATURE_TYPES.contains(&feature_type)).then(|| {
        format!(
            "\"{feature_type}\" is not a feature type; use one of {}",
            FEATURE_TYPES.join(", ")
        )
    })
}

/// The settings a `PUT` gives, checked: every problem with its path.
fn updated_record(current: &FeatureRecord, update: &FeatureUpdate) -> Result<FeatureRecord> {
    let mut problems = Vec::new();
    if let Some(name) = &update.name
        && *name != current.name
    {
        problems.push(ErrorDetail::at(
            "/name",
            format!(
                "the name \"{name}\" is not the feature's (\"{}\"); features cannot be renamed",
                current.name
            ),
        ));
    }
    if let Some(project) = &update.project
        && *project != current.project
    {
        problems.push(ErrorDetail::at(
            "/project",
            format!("the project \"{project}\" is not the feature's (\"{}\"); move features with the project change route", current.project),
        ));
    }
    let feature_type = update
        .feature_type
        .clone()
        .unwrap_or_else(|| "release".to_owned());
    if let Some(problem) = type_problem(&feature_type) {
        problems.push(ErrorDetail::at("/type", problem));
    }
    if update.archived == Some(true) {
        problems.push(ErrorDetail::at(
            "/archived",
            "a feature is archived with DELETE, not by its settings",
        ));
    }
    for (path, value) in [
        ("/environments", &update.environments),
        ("/variants", &update.variants),
    ] {
        match value {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.is_empty() => {}
            Some(_) => problems.push(ErrorDetail::at(
                path,
                "only null or [] is accepted here; change environments and variants through their own routes",
            )),
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation(
            "The feature's new settings are not valid.",
            problems,
        ));
    }
    Ok(FeatureRecord {
        feature_type,
        description: update.description.clone(),
        stale: update.stale.unwrap_or(false),
        impression_data: update.impression_data.unwrap_or(false),
        ..current.clone()
    })
}

/// The patched settings of `current`: the patch applies to
/// `{description, type, stale, impressionData, archived}` and may touch nothing else.
fn patched_record(current: &FeatureRecord, patch: &Patch) -> Result<(FeatureRecord, bool)> {
    let mut problems = Vec::new();
    for (index, operation) in patch.iter().enumerate() {
        let mut paths = vec![operation.path().to_string()];
        match operation {
            PatchOperation::Copy(op) => paths.push(op.from.to_string()),
            PatchOperation::Move(op) => paths.push(op.from.to_string()),
            _ => {}
        }
        for path in paths {
            let member = path.trim_start_matches('/');
            if !path.starts_with('/') || !PATCHABLE.contains(&member) {
                problems.push(ErrorDetail::at(
                    format!("/{index}"),
                    format!(
                        "the path \"{path}\" is not one a feature's patch may touch: /{}",
                        PATCHABLE.join(", /")
                    ),
                ));
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::validation(
            "Could not apply provided patch: it touches what it may not.",
            problems,
        ));
    }
    let document = json!({
        "description": current.description,
        "type": current.feature_type,
        "stale": current.stale,
        "impressionData": current.impression_data,
        "archived": current.archived,
    });
    let patched = crate::variants::apply_patch_to(document, patch)?;
    let member = |name: &str| patched.get(name).cloned().unwrap_or(Value::Null);
    let mut problems = Vec::new();
    let description = match member("description") {
        Value::Null => None,
        Value::String(s) => Some(s),
        _ => {
            problems.push(ErrorDetail::at("/description", "must be a string or null"));
            None
        }
    };
    let feature_type = match member("type") {
        Value::String(s) => {
            if let Some(problem) = type_problem(&s) {
                problems.push(ErrorDetail::at("/type", problem));
            }
            s
        }
        _ => {
            problems.push(ErrorDetail::at("/type", "must be a string"));
            String::new()
        }
    };
    let mut flag = |name: &str| match member(name) {
        Value::Bool(b) => b,
        _ => {
            problems.push(ErrorDetail::at(format!("/{name}"), "must be true or false"));
            false
        }
    };
    let stale = flag("stale");
    let impression_data = flag("impressionData");
    let archived = flag("archived");
    if !problems.is_empty() {
        return Err(Error::validation(
            "The patched feature is not valid.",
            problems,
        ));
    }
    Ok((
        FeatureRecord {
            description,
            feature_type,
            stale,
            impression_data,
            ..current.clone()
        },
        archived,
    ))
}

impl ToggleAdmin {
    /// Replace the settings of the feature `name` of `project` (Unleash's `PUT`): type,
    /// description, stale, impression data, each reset to its default when left out. Needs
    /// `UPDATE_FEATURE` in the project. Answers the feature.
    ///
    /// Events: `feature-metadata-updated` with the old and new settings, and
    /// `feature-stale-on`/`-off` when staleness changes; nothing when nothing changes.
    ///
    /// Where we differ from Unleash: a type that is not one of Unleash's five, a `name` or
    /// `project` that is not the feature's, `archived: true`, or non-empty `environments` or
    /// `variants` are a 400 naming the field (Unleash ignores some and answers others with a
    /// 500); an archived feature is a 404.
    pub async fn update_feature(
        &self,
        caller: &Caller,
        project: &str,
        name: &str,
        update: &FeatureUpdate,
    ) -> Result<Feature> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateFeature, project)])
            .await?;
        self.change("update_feature", permit, |tx| {
            Box::pin(async move {
                let current = active_feature(tx, project, name).await?;
                let next = updated_record(&current, update)?;
                write_settings(tx, &current, &next)?;
                Ok(())
            })
        })
        .await?;
        self.feature(caller, project, name).await
    }

    /// Apply a JSON Patch (RFC 6902, strictly, as the variants' patch) to the settings of the
    /// feature `name` of `project`: `/description`, `/type`, `/stale`, `/impressionData`,
    /// `/archived`; any other path is a 400 naming the operation. Needs `UPDATE_FEATURE`
    /// (and `DELETE_FEATURE` to archive). Events as [`update_feature`](Self::update_feature);
    /// `/archived` → `true` archives it as [`archive_feature`](Self::archive_feature) does,
    /// in the same commit. Answers the feature (an archived one from the archive's view).
    pub async fn patch_feature(
        &self,
        caller: &Caller,
        project: &str,
        name: &str,
        patch: &Patch,
    ) -> Result<Feature> {
        let mut needs = vec![Need::project(Permission::UpdateFeature, project)];
        if patch.iter().any(|op| op.path().as_str() == "/archived") {
            needs.push(Need::project(Permission::DeleteFeature, project));
        }
        let permit = self.permit(caller, &needs).await?;
        let archived = self
            .change("patch_feature", permit, |tx| {
                Box::pin(async move {
                    let current = active_feature(tx, project, name).await?;
                    let (next, archive) = patched_record(&current, patch)?;
                    write_settings(tx, &current, &next)?;
                    if archive {
                        let mut next = next.clone();
                        archive_in(tx, project, &mut next, &[]).await?;
                    }
                    Ok(archive)
                })
            })
            .await?;
        if archived {
            let features = self.archived_features(caller, project).await?;
            return features
                .features
                .into_iter()
                .find(|f| f.name == name)
                .ok_or_else(|| feature_not_found(name, project));
        }
        self.feature(caller, project, name).await
    }

    /// Clone the feature `name` of `project` as `clone.name` in the same project: its
    /// settings, and in every environment its enabled state, strategies (new ids;
    /// `flexibleRollout`'s `groupId` becomes the new name unless `replaceGroupId` is false)
    /// and variants. Needs `CREATE_FEATURE` in the project. The new name follows the rules of
    /// [`create_feature`](Self::create_feature) (valid, free, the project's pattern).
    /// Events: `feature-created`, then `feature-strategy-add` per strategy and
    /// `feature-environment-enabled` per environment it is on in.
    pub async fn clone_feature(
        &self,
        caller: &Caller,
        project: &str,
        name: &str,
        clone: &FeatureClone,
    ) -> Result<Feature> {
        let permit = self
            .permit(caller, &[Need::project(Permission::CreateFeature, project)])
            .await?;
        if let Some(problem) = name_problem(&clone.name, 100) {
            return Err(Error::invalid_at("/name", problem));
        }
        let replace_group_id = clone.replace_group_id.unwrap_or(true);
        self.change("clone_feature", permit, |tx| {
            Box::pin(async move {
                let source = active_feature(tx, project, name).await?;
                let pkey = project_key(project);
                let nkey = feature_key(&clone.name);
                let [project_record, taken] = tx.read(&[pkey.clone(), nkey.clone()]).await?;
                let current: Project = decode_opt(&pkey, project_record.as_ref())?
                    .ok_or_else(|| project_not_found(project))?;
                if taken.is_some() {
                    return Err(Error::name_exists(format!(
                        "A feature named \"{}\" already exists.",
                        clone.name
                    )));
                }
                naming_check(&current, &clone.name)?;
                let record = FeatureRecord {
                    name: clone.name.clone(),
                    created_at: Utc::now(),
                    created_by: Some(tx.author().feature_user()),
                    collaborators: vec![tx.author().feature_user()],
                    stale: false,
                    archived: false,
                    archived_at: None,
                    ..source.clone()
                };
                tx.put(nkey.clone(), encode(&nkey, &record)?).record(
                    "feature-created",
                    Some(project),
                    Some(&clone.name),
                    None,
                    None,
                    Some(encode(&nkey, &record.created_data())?),
                );
                let listing = tx
                    .list(Collection::FeatureEnvironments, &format!("{name}{SEP}"))
                    .await?;
                for (id, stored) in &listing.records {
                    let Some((_, environment)) = id.split_once(SEP) else {
                        continue;
                    };
                    let key = Key::new(Collection::FeatureEnvironments, id.clone());
                    let mut fe: FeatureEnvironmentRecord = decode(&key, &stored.value)?;
                    for strategy in &mut fe.strategies {
                        strategy.id = Some(uuid::Uuid::new_v4().to_string());
                        strategy.feature_name = None;
                        if replace_group_id
                            && strategy.name == "flexibleRollout"
                            && strategy.parameters.contains_key("groupId")
                        {
                            strategy
                                .parameters
                                .insert("groupId".to_owned(), clone.name.clone());
                        }
                    }
                    let target = feature_environment_key(&clone.name, environment);
                    tx.put(target.clone(), encode(&target, &fe)?);
                    for strategy in &fe.strategies {
                        tx.record(
                            "feature-strategy-add",
                            Some(project),
                            Some(&clone.name),
                            Some(environment),
                            None,
                            Some(encode(&target, strategy)?),
                        );
                    }
                    if fe.enabled {
                        tx.record(
                            "feature-environment-enabled",
                            Some(project),
                            Some(&clone.name),
                            Some(environment),
                            None,
                            None,
                        );
                    }
                }
                Ok(())
            })
        })
        .await?;
        self.feature(caller, project, &clone.name).await
    }

    /// Whether a feature could be created under `name` (Unleash's
    /// `POST /api/admin/features/validate`): Ok when it is a valid name that no feature holds,
    /// archived ones included; [`Error::NameExists`] when taken; a 400 when invalid or, with
    /// `projectId`, when it does not match that project's naming pattern. Any valid key may
    /// ask; nothing is written.
    pub async fn validate_feature_name(&self, caller: &Caller, name: &FeatureName) -> Result<()> {
        self.require(caller, &[]).await?;
        if let Some(problem) = name_problem(&name.name, 100) {
            return Err(Error::invalid_at("/name", problem));
        }
        let key = feature_key(&name.name);
        if self.store.get(&key).await?.is_some() {
            return Err(Error::name_exists(format!(
                "A feature named \"{}\" already exists.",
                name.name
            )));
        }
        if let Some(project) = &name.project {
            let pkey = project_key(project);
            let current: Project = decode_opt(&pkey, self.store.get(&pkey).await?.as_ref())?
                .ok_or_else(|| project_not_found(project))?;
            naming_check(&current, &name.name)?;
        }
        Ok(())
    }
}

/// 400 unless `name` matches the project's naming pattern (when it has one).
fn naming_check(project: &Project, name: &str) -> Result<()> {
    if let Some(naming) = &project.feature_naming {
        let regex = crate::names::naming_regex(&naming.pattern)
            .map_err(|p| Error::invalid_at("/name", p))?;
        if !regex.is_match(name) {
            return Err(Error::invalid_at(
                "/name",
                format!(
                    "The feature name \"{name}\" does not match the project's naming pattern \"{}\"",
                    naming.pattern
                ),
            ));
        }
    }
    Ok(())
}

/// The feature `name` of `project`, read through `tx`: 404 when the project or the feature (in
/// that project) is missing, or when the feature is archived.
pub(crate) async fn active_feature(
    tx: &mut super::flow::Tx<'_>,
    project: &str,
    name: &str,
) -> Result<FeatureRecord> {
    let (pkey, fkey) = (project_key(project), feature_key(name));
    let [project_record, feature_record] = tx.read(&[pkey, fkey.clone()]).await?;
    if project_record.is_none() {
        return Err(project_not_found(project));
    }
    decode_opt::<FeatureRecord>(&fkey, feature_record.as_ref())?
        .filter(|f| f.project == project && !f.archived)
        .ok_or_else(|| feature_not_found(name, project))
}

/// Write `next` over `current` with its events; nothing when they are the same.
fn write_settings(
    tx: &mut super::flow::Tx<'_>,
    current: &FeatureRecord,
    next: &FeatureRecord,
) -> Result<()> {
    if current == next {
        return Ok(());
    }
    let key = feature_key(&next.name);
    let project = Some(next.project.as_str());
    let feature = Some(next.name.as_str());
    let (before, after) = (encode(&key, current)?, encode(&key, next)?);
    tx.put(key, after.clone());
    let settings_changed = FeatureRecord {
        stale: current.stale,
        ..next.clone()
    } != *current;
    if settings_changed {
        tx.record(
            "feature-metadata-updated",
            project,
            feature,
            None,
            Some(before),
            Some(after),
        );
    }
    if current.stale != next.stale {
        let kind = if next.stale {
            "feature-stale-on"
        } else {
            "feature-stale-off"
        };
        tx.record(kind, project, feature, None, None, None);
    }
    Ok(())
}
