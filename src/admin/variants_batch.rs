//! The same variants for several environments of a feature at once (`PUT
//! …/features/{featureName}/variants-batch`), checked as `PUT …/variants` checks one list,
//! and written to every environment in one commit.

use super::records::{feature_key, project_key, project_not_found};
use super::variant_records::{Target, read_target};
use super::{Authority, Need, Permit, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{FeatureVariants, Permission, Project, VariantsOnEnvironments};

impl ToggleAdmin {
    /// Admit `caller` to change variants of `project` before the body says in which
    /// environments: it must hold `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` in at least one
    /// environment of the project. [`set_variants_on_environments`] then requires it in each
    /// environment the body names.
    ///
    /// [`set_variants_on_environments`]: Self::set_variants_on_environments
    pub async fn permit_variants_batch(&self, caller: &Caller, project: &str) -> Result<Permit> {
        let environments = self.environments_of(project).await?;
        self.permit_any(caller, &variants_needs_in(project, &environments))
            .await
    }

    /// The environments `project` has, as its record lists them (none when it does not
    /// exist).
    pub(super) async fn environments_of(&self, project: &str) -> Result<Vec<String>> {
        let key = project_key(project);
        let [record] = self.reader().read(std::array::from_ref(&key)).await?;
        Ok(
            super::records::decode_opt::<Project>(&key, record.as_ref())?
                .map(|p| p.environments)
                .unwrap_or_default(),
        )
    }

    /// Give `feature` of `project` the variants `body.variants` in each environment of
    /// `body.environments`, in one commit, and return them as written: `{version: 1,
    /// variants}`. Needs `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` in each of those
    /// environments (a 403 naming every one missing).
    ///
    /// The list is checked, weighed and sorted as [`set_variants`](Self::set_variants) does
    /// (problems at `/variants/…`). At least one environment is needed (400 at
    /// `/environments`, Unleash's `No environments provided`); an environment that does
    /// not exist or that the project does not have is a 400 at `/environments/{i}` (a
    /// reference in the body; Unleash skips it). A missing project or feature is a 404; an
    /// archived feature a 400, as for the variants `PATCH`. All or nothing: every problem
    /// is named and nothing changes unless all hold. One
    /// `feature-environment-variants-updated` event per environment whose list changed.
    pub async fn set_variants_on_environments<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        body: &VariantsOnEnvironments,
    ) -> Result<FeatureVariants> {
        // Which environments need the permission is in the body: decided in the flow.
        let permit = self.admit(authority.into(), &[]).await?;
        let caller = permit.caller().clone();
        let mut problems = Vec::new();
        let mut environments: Vec<(usize, &str)> = Vec::new();
        if body.environments.is_empty() {
            problems.push(ErrorDetail::at("/environments", "No environments provided"));
        }
        for (index, name) in body.environments.iter().enumerate() {
            if name.is_empty() {
                problems.push(ErrorDetail::at(
                    format!("/environments/{index}"),
                    "an environment name must not be empty",
                ));
            } else if !environments.iter().any(|(_, n)| n == name) {
                environments.push((index, name));
            }
        }
        let variants = if body.variants.is_null() {
            problems.push(ErrorDetail::at(
                "/variants",
                "variants is required: a list of variants",
            ));
            None
        } else {
            match crate::variants::normalise_variants_at(&body.variants, "/variants") {
                Ok(variants) => Some(variants),
                Err(error) => {
                    problems.extend(error.details().iter().cloned());
                    None
                }
            }
        };
        let list = variants.as_ref().map(crate::store::Json::of);
        let (caller, environments, problems) = (&caller, &environments, &problems);
        let (list, expected) = (&list, &variants);
        self.change("set_variants_on_environments", permit, |tx| {
            Box::pin(async move {
                let needs: Vec<Need<'_>> = environments
                    .iter()
                    .map(|(_, e)| {
                        Need::environment(Permission::UpdateFeatureEnvironmentVariants, project, e)
                    })
                    .collect();
                tx.require(caller, &needs).await?;
                let [p, f] = tx
                    .read(&[project_key(project), feature_key(feature)])
                    .await?;
                if p.is_none() {
                    return Err(project_not_found(project));
                }
                let flag: Option<super::records::FeatureRecord> =
                    super::records::decode_opt(&feature_key(feature), f.as_ref())?;
                let flag = super::records::check_feature(project, feature, true, flag)?;
                if flag.archived {
                    return Err(super::records::feature_archived(feature));
                }
                let mut problems = problems.clone();
                let mut targets: Vec<(&str, Target)> = Vec::new();
                for (index, environment) in environments {
                    match read_target(tx.reader(), project, feature, environment).await {
                        Ok(target) => targets.push((*environment, target)),
                        Err(Error::NotFound { message, .. }) => problems
                            .push(ErrorDetail::at(format!("/environments/{index}"), message)),
                        Err(other) => return Err(other),
                    }
                }
                let (Some(list), Some(expected)) = (list, expected) else {
                    return Err(invalid(problems));
                };
                if !problems.is_empty() {
                    return Err(invalid(problems));
                }
                for (environment, target) in &targets {
                    let stored = target.stored()?;
                    let old = stored.variants();
                    let before: Vec<crate::model::Variant> =
                        super::variant_records::decode_text(&target.fe_key, old)?;
                    if &before == expected {
                        continue;
                    }
                    let event = target.variants_event(
                        tx.author(),
                        (project, feature, environment),
                        old,
                        list.as_raw(),
                    )?;
                    tx.write_all(target.write_list(&stored, list.as_raw(), vec![event])?);
                }
                Ok(())
            })
        })
        .await?;
        Ok(FeatureVariants {
            version: 1,
            variants: variants.unwrap_or_default(),
        })
    }
}

/// `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` in each of `environments` of `project`; in the
/// project itself when there are none (a project without environments, or none at all), so
/// that only who may change variants there learns that it does not exist.
pub(super) fn variants_needs_in<'a>(project: &'a str, environments: &'a [String]) -> Vec<Need<'a>> {
    let permission = Permission::UpdateFeatureEnvironmentVariants;
    if environments.is_empty() {
        return vec![Need::project(permission, project)];
    }
    environments
        .iter()
        .map(|e| Need::environment(permission, project, e))
        .collect()
}

/// The 400 of a batch: every problem listed; nothing changed.
fn invalid(problems: Vec<ErrorDetail>) -> Error {
    let message = match problems.as_slice() {
        [one] => one.to_string(),
        _ => format!(
            "{} problems in the variants batch; nothing was changed.",
            problems.len()
        ),
    };
    Error::validation(message, problems)
}
