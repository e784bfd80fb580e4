//! The environments of one project: which it has (listed with every environment, as Unleash
//! shows them), removing one, and the default strategy its features get in each.

use serde_json::Value;

use super::environments::{is_protected, sort_environments, sort_order};
use super::reader::Reader;
use super::records::{
    FeatureEnvironmentRecord, FeatureRecord, decode_opt, encode, environment_key,
    environment_not_found, feature_environment_key, project_key, project_not_found,
};
use super::strategy_checks::{Catalogue, checked_strategy};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{
    ApiKeyInfo, Environment, FeatureStrategy, KeyAccess, Permission, Project,
    ProjectEnvironmentList, ProjectEnvironmentView,
};
use crate::store::{Collection, Json, Key};

/// The only strategy Unleash accepts as an environment's default.
const DEFAULT_STRATEGY_NAME: &str = "flexibleRollout";

impl ToggleAdmin {
    /// Every environment as the project `project` sees it (`GET
    /// /api/admin/environments/project/{projectId}`, Unleash's `environmentsProjectSchema`):
    /// in sort order, each `visible` when the project has it, with the project's client and
    /// frontend keys for it, its features enabled in it, and its default strategy there. Any
    /// valid key may read it; an unknown project → [`Error::NotFound`] (Unleash answers an
    /// empty list).
    pub async fn project_environments(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<ProjectEnvironmentList> {
        self.permit(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let key = project_key(project);
        let current: Project = decode_opt(&key, view.get(&key).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let (_, mut environments) = reader
            .list_decoded::<Environment>(Collection::Environments)
            .await?;
        sort_environments(&mut environments);
        let (_, keys) = reader
            .list_decoded::<ApiKeyInfo>(Collection::ApiKeys)
            .await?;
        let features = project_features(reader, project).await?;
        let mut listed = Vec::with_capacity(environments.len());
        for environment in environments {
            let name = environment.name.as_str();
            let project_api_token_count = keys
                .iter()
                .filter(|k| match &k.access {
                    KeyAccess::Client {
                        projects,
                        environment,
                        ..
                    } => environment == name && projects.iter().any(|p| p == "*" || p == project),
                    _ => false,
                })
                .count() as u64;
            let fe_keys: Vec<Key> = features
                .iter()
                .map(|f| feature_environment_key(&f.name, name))
                .collect();
            let mut project_enabled_toggle_count = 0u64;
            for (fe_key, record) in fe_keys.iter().zip(reader.get_all(&fe_keys).await?) {
                let fe: Option<FeatureEnvironmentRecord> = decode_opt(fe_key, record.as_ref())?;
                project_enabled_toggle_count += u64::from(fe.is_some_and(|fe| fe.enabled));
            }
            listed.push(ProjectEnvironmentView {
                sort_order: sort_order(&environment),
                enabled: environment.enabled.unwrap_or(true),
                protected: is_protected(name),
                required_approvals: None,
                project_api_token_count,
                project_enabled_toggle_count,
                default_strategy: current.default_strategies.get(name).cloned(),
                visible: current.environments.iter().any(|e| e == name),
                name: environment.name,
                environment_type: environment.environment_type,
            });
        }
        Ok(ProjectEnvironmentList {
            version: 1,
            environments: listed,
        })
    }

    /// Remove `environment` from `project` (`DELETE
    /// /api/admin/projects/{projectId}/environments/{environment}`). Needs `UPDATE_PROJECT`
    /// in the project. As in Unleash, the project's features lose their configuration there
    /// (enabled state, strategies, variants: adding the environment again starts afresh), and
    /// so does the project's default strategy for it; one `project-environment-removed`
    /// event, in one atomic commit.
    ///
    /// An unknown project or environment → [`Error::NotFound`]. An environment the project
    /// does not have changes nothing and succeeds (the removal is idempotent; Unleash writes
    /// an event anyway).
    pub async fn remove_project_environment(
        &self,
        caller: &Caller,
        project: &str,
        environment: &str,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateProject, project)])
            .await?;
        self.change("remove_project_environment", permit, |tx| {
            Box::pin(async move {
                let keys = [project_key(project), environment_key(environment)];
                let [project_record, environment_record] = tx.read(&keys).await?;
                let mut current: Project = decode_opt(&keys[0], project_record.as_ref())?
                    .ok_or_else(|| project_not_found(project))?;
                if environment_record.is_none() {
                    return Err(environment_not_found(environment));
                }
                if !current.environments.iter().any(|e| e == environment) {
                    return Ok(());
                }
                let features = project_features(tx.reader(), project).await?;
                let fe_keys: Vec<Key> = features
                    .iter()
                    .map(|f| feature_environment_key(&f.name, environment))
                    .collect();
                let found = tx.reader().get_all(&fe_keys).await?;
                for (fe_key, record) in fe_keys.into_iter().zip(found) {
                    if record.is_some() {
                        tx.delete(fe_key);
                    }
                }
                let removed_default = current.default_strategies.remove(environment);
                current.environments.retain(|e| e != environment);
                tx.put(keys[0].clone(), encode(&keys[0], &current)?).record(
                    "project-environment-removed",
                    Some(project),
                    None,
                    Some(environment),
                    removed_default.map(|s| Json::of(&s)),
                    None,
                );
                Ok(())
            })
        })
        .await
    }

    /// Set the strategy the features of `project` get in `environment` when they are
    /// enabled there with none (`POST
    /// /api/admin/projects/{projectId}/environments/{environment}/default-strategy`,
    /// Unleash's `createFeatureStrategySchema`). Needs `UPDATE_PROJECT` in the project
    /// (Unleash also accepts `PROJECT_DEFAULT_STRATEGY_WRITE`, which is not kept here).
    ///
    /// The strategy is checked as a feature's strategy is (see
    /// [`add_strategy`](Self::add_strategy): constraints, strategy variants, segments global
    /// or of this project); as in Unleash it must be a `flexibleRollout` (else a 400 at
    /// `/name`). A `groupId` left out or empty becomes each feature's name when the strategy
    /// is used. Unknown project or environment, or an environment the project does not have →
    /// [`Error::NotFound`]. Returns the strategy stored; one `default-strategy-updated` event
    /// with the old and new ones. It is then what
    /// [`set_feature_enabled`](Self::set_feature_enabled), the bulk enable and an import add
    /// when they enable a feature with no strategy there.
    pub async fn set_default_strategy<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        environment: &str,
        raw: &Value,
    ) -> Result<FeatureStrategy> {
        let permit = self
            .admit(
                authority.into(),
                &[Need::project(Permission::UpdateProject, project)],
            )
            .await?;
        if let Some(name) = raw.get("name").and_then(Value::as_str)
            && name != DEFAULT_STRATEGY_NAME
        {
            return Err(Error::invalid_at(
                "/name",
                format!(
                    "Only \"{DEFAULT_STRATEGY_NAME}\" strategy can be used as a default strategy for an environment, not \"{name}\""
                ),
            ));
        }
        self.change("set_default_strategy", permit, |tx| {
            Box::pin(async move {
                let keys = [project_key(project), environment_key(environment)];
                let [project_record, environment_record] = tx.read(&keys).await?;
                let mut current: Project = decode_opt(&keys[0], project_record.as_ref())?
                    .ok_or_else(|| project_not_found(project))?;
                if environment_record.is_none() {
                    return Err(environment_not_found(environment));
                }
                if !current.environments.iter().any(|e| e == environment) {
                    return Err(Error::not_found(format!(
                        "The environment \"{environment}\" is not enabled for project \"{project}\"."
                    )));
                }
                let catalogue = Catalogue::read(tx.reader(), None).await?;
                // Checked for no feature: a defaulted groupId is left empty, to become each
                // feature's name when the strategy is used.
                let mut strategy = checked_strategy(&catalogue, raw, "", project, "")?;
                strategy.feature_name = None;
                strategy.id = None;
                let previous = current
                    .default_strategies
                    .insert(environment.to_owned(), strategy.clone());
                if previous.as_ref() == Some(&strategy) {
                    return Ok(strategy);
                }
                tx.put(keys[0].clone(), encode(&keys[0], &current)?)
                    .record(
                        "default-strategy-updated",
                        Some(project),
                        None,
                        Some(environment),
                        previous.map(|s| Json::of(&s)),
                        Some(Json::of(&strategy)),
                    );
                Ok(strategy)
            })
        })
        .await
    }
}

/// The features of `project`, archived ones included, read through `reader`.
pub(super) async fn project_features(
    reader: Reader<'_>,
    project: &str,
) -> Result<Vec<FeatureRecord>> {
    let (_, features) = reader
        .list_decoded::<FeatureRecord>(Collection::Features)
        .await?;
    Ok(features
        .into_iter()
        .filter(|f| f.project == project)
        .collect())
}
