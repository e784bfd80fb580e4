//! The variants of a feature in all its environments at once: Unleash 6.10.1's feature-level
//! routes `GET|PATCH|PUT /api/admin/projects/{projectId}/features/{featureName}/variants`
//! (deprecated there, removed in Unleash 7), which scripts and older Terraform providers
//! still use. Each is the environment-level operation of `variants.rs` over every
//! environment of the feature's project, in one commit.
//!
//! The feature's environments are its project's, in the environments' order (`sortOrder`,
//! then name, as [`environments`](ToggleAdmin::environments) lists them); the first of them
//! is the one whose list stands for the feature's. Unleash reads the list of whichever of
//! the feature's environments its database returns first (an unordered `limit 1`).

use json_patch::Patch;
use serde_json::Value;

use super::environments::sort_environments;
use super::reader::Reader;
use super::records::{
    FeatureRecord, check_feature, decode_opt, encode, environment_key, feature_archived,
    feature_key, project_key,
};
use super::variant_records::{decode_text, next_list, read_target};
use super::variant_writers::VariantsChange;
use super::variants::VARIANTS_SCHEMA_VERSION;
use super::variants_batch::variants_needs_in;
use super::{Authority, Permit, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{Environment, FeatureVariants, Project, Variant};

impl ToggleAdmin {
    /// The variants of `feature` (`GET …/features/{featureName}/variants`): those of the
    /// first environment of its project in sort order, as `{version: 1, variants}`; none
    /// when the project has no environment. Any valid key may read them.
    ///
    /// A missing project, or a feature that is not in it, is a 404 (Unleash checks only
    /// that the feature exists, and reads an arbitrary environment's list).
    pub async fn feature_variants(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<FeatureVariants> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (found, record) = read_feature(reader, project, feature).await?;
        check_feature(project, feature, found.is_some(), record)?;
        let names = found.map(|p| p.environments).unwrap_or_default();
        let variants = match in_sort_order(reader, &names).await?.first() {
            Some(first) => {
                let target = read_target(reader, project, feature, first).await?;
                decode_text(&target.fe_key, target.stored()?.variants())?
            }
            None => Vec::new(),
        };
        Ok(FeatureVariants {
            version: VARIANTS_SCHEMA_VERSION,
            variants,
        })
    }

    /// Admit `caller` to change the variants of the features of `project` in all its
    /// environments, before a body is read: it must hold `UPDATE_FEATURE_ENVIRONMENT_VARIANTS`
    /// in every environment of the project (one 403 naming each one missing).
    /// [`patch_feature_variants`](Self::patch_feature_variants) and
    /// [`set_feature_variants_json`](Self::set_feature_variants_json) take the permit, and
    /// decide again on the environments the project has when they commit.
    pub async fn permit_feature_variants(&self, caller: &Caller, project: &str) -> Result<Permit> {
        let environments = self.environments_of(project).await?;
        self.permit(caller, &variants_needs_in(project, &environments))
            .await
    }

    /// Apply a JSON Patch (RFC 6902) to the variants of `feature` in each environment of its
    /// project (`PATCH …/features/{featureName}/variants`): each environment's own list is
    /// patched, then validated, weighed and sorted, exactly as
    /// [`patch_variants`](Self::patch_variants) does for one. Answers the result in the
    /// first environment (see [`feature_variants`](Self::feature_variants)); none when the
    /// project has no environment (nothing is then patched).
    ///
    /// * All or nothing, in one commit: when the patch does not apply, or its result is not
    ///   valid, in any environment, the 400 names the first such environment in its message
    ///   (its details are the environment-level ones, paths into that environment's list),
    ///   and no environment changes. (Unleash patches the environments one by one and may
    ///   leave some patched.)
    /// * One `feature-environment-variants-updated` event, with the old and new lists, per
    ///   environment whose list changed.
    /// * Needs `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` in every environment of the project
    ///   (Unleash: the project permission `UPDATE_FEATURE_VARIANTS`, which this crate does
    ///   not have); one 403 names each environment missing.
    /// * A missing project, or a feature not in it, is a 404; an archived feature a 400, as
    ///   for [`patch_variants`](Self::patch_variants).
    pub async fn patch_feature_variants<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        patch: &Patch,
    ) -> Result<FeatureVariants> {
        let change = VariantsChange::Patch(patch);
        self.change_feature_variants(authority.into(), project, feature, change)
            .await
    }

    /// Give `feature` the variants `variants` in every environment of its project (`PUT
    /// …/features/{featureName}/variants`), checked, weighed and sorted as
    /// [`set_variants`](Self::set_variants) does, in one commit; answers the list as written.
    /// The same permission, 404s and 400s as
    /// [`patch_feature_variants`](Self::patch_feature_variants).
    ///
    /// One `feature-environment-variants-updated` event per environment whose list changed,
    /// with that environment's old list (Unleash writes one `feature-variants-updated` event
    /// with the old list of one environment); a list already there writes nothing, and so
    /// does a project without environments (the list is still checked and answered).
    pub async fn set_feature_variants<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        variants: &[Variant],
    ) -> Result<FeatureVariants> {
        let document = serde_json::to_value(variants)
            .map_err(|e| Error::invalid_at("", format!("the variants cannot be encoded: {e}")))?;
        self.set_feature_variants_json(authority, project, feature, &document)
            .await
    }

    /// [`set_feature_variants`](Self::set_feature_variants) with the list as raw JSON (the
    /// HTTP body), so that every problem in it is reported with its path (`/0/weightType`).
    pub async fn set_feature_variants_json<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        variants: &Value,
    ) -> Result<FeatureVariants> {
        let change = VariantsChange::Replace(variants);
        self.change_feature_variants(authority.into(), project, feature, change)
            .await
    }

    /// Make `change` in every environment of `feature`'s project, in one commit; the list
    /// of the first environment (a new list: that list) is the answer.
    async fn change_feature_variants(
        &self,
        authority: Authority<'_>,
        project: &str,
        feature: &str,
        change: VariantsChange<'_>,
    ) -> Result<FeatureVariants> {
        // The environments needing the permission are the project's as the change reads
        // them: decided in the flow.
        let permit = self.admit(authority, &[]).await?;
        let caller = permit.caller().clone();
        let caller = &caller;
        self.change("change_feature_variants", permit, |tx| {
            Box::pin(async move {
                let (found, record) = read_feature(tx.reader(), project, feature).await?;
                let exists = found.is_some();
                let names = found.map(|p| p.environments).unwrap_or_default();
                tx.require(caller, &variants_needs_in(project, &names))
                    .await?;
                if check_feature(project, feature, exists, record)?.archived {
                    return Err(feature_archived(feature));
                }
                // A new list is the same in every environment: checked once.
                let replacement = match change {
                    VariantsChange::Replace(list) => {
                        let variants = crate::variants::normalise_variants(list)?;
                        let text = encode(&feature_key(feature), &variants)?;
                        Some((variants, text))
                    }
                    VariantsChange::Patch(_) => None,
                };
                let mut first = None;
                for environment in in_sort_order(tx.reader(), &names).await? {
                    let environment = environment.as_str();
                    let target = read_target(tx.reader(), project, feature, environment).await?;
                    let stored = target.stored()?;
                    let old = stored.variants();
                    let patched;
                    let (variants, list) = match &replacement {
                        Some((variants, list)) => (variants, list),
                        None => {
                            patched = next_list(&target.fe_key, old, change)
                                .map_err(|error| in_environment(environment, error))?;
                            (&patched.0, &patched.1)
                        }
                    };
                    if first.is_none() {
                        first = Some(variants.clone());
                    }
                    let before: Vec<Variant> = decode_text(&target.fe_key, old)?;
                    if &before == variants {
                        continue;
                    }
                    let names = (project, feature, environment);
                    let event = target.variants_event(tx.author(), names, old, list.as_raw())?;
                    tx.write_all(target.write_list(&stored, list.as_raw(), vec![event])?);
                }
                let variants = match replacement {
                    Some((variants, _)) => variants,
                    None => first.unwrap_or_default(),
                };
                Ok(FeatureVariants {
                    version: VARIANTS_SCHEMA_VERSION,
                    variants,
                })
            })
        })
        .await
    }
}

/// The refusal of a patch in `environment`: its message names the environment, and says
/// that none changed; its details are the environment-level ones.
fn in_environment(environment: &str, error: Error) -> Error {
    match error {
        Error::Validation {
            message,
            details,
            source,
        } => Error::Validation {
            message: format!(
                "In environment \"{environment}\" (no environment was changed): {message}"
            ),
            details,
            source,
        },
        other => other,
    }
}

/// `names` (environments), in the environments' order: by sort order, then by name. A
/// name with no environment record is left out (environments are never deleted, so a
/// project cannot name one that does not exist).
async fn in_sort_order(reader: Reader<'_>, names: &[String]) -> Result<Vec<String>> {
    let keys: Vec<_> = names.iter().map(|name| environment_key(name)).collect();
    let mut environments = Vec::with_capacity(names.len());
    for (key, record) in keys.iter().zip(reader.get_all(&keys).await?) {
        if let Some(environment) = decode_opt::<Environment>(key, record.as_ref())? {
            environments.push(environment);
        }
    }
    sort_environments(&mut environments);
    Ok(environments.into_iter().map(|e| e.name).collect())
}

/// The project and the feature, as stored (`None` when absent).
async fn read_feature(
    reader: Reader<'_>,
    project: &str,
    feature: &str,
) -> Result<(Option<Project>, Option<FeatureRecord>)> {
    let keys = [project_key(project), feature_key(feature)];
    let [p, f] = reader.read(&keys).await?;
    Ok((
        decode_opt(&keys[0], p.as_ref())?,
        decode_opt(&keys[1], f.as_ref())?,
    ))
}
