//! Environments, and which of them a project has.

use super::records::{
    decode, decode_opt, encode, environment_key, environment_not_found, project_key,
    project_not_found,
};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::Permission;
use crate::model::{Environment, Project};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::Collection;

impl ToggleAdmin {
    /// Create an environment (name, type). Needs `CREATE_ENVIRONMENT`. The name must be 1–100
    /// URL-friendly characters and not taken.
    pub async fn create_environment(
        &self,
        caller: &Caller,
        environment: &Environment,
    ) -> Result<Environment> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateEnvironment)])
            .await?;
        if let Some(problem) = name_problem(&environment.name, 100) {
            return Err(Error::invalid_at("name", problem));
        }
        if let Some(problem) = display_name_problem(&environment.environment_type, MAX_NAME) {
            return Err(Error::invalid_at(
                "type",
                format!("the environment type {problem}"),
            ));
        }
        let created = Environment {
            enabled: Some(environment.enabled.unwrap_or(true)),
            ..environment.clone()
        };
        let key = environment_key(&created.name);
        let (created, key) = (&created, &key);
        // A conflict is decided again: only an environment that exists is a name clash.
        self.change("create_environment", permit, |tx| {
            Box::pin(async move {
                if tx.get(key).await?.is_some() {
                    return Err(Error::name_exists(format!(
                        "An environment named \"{}\" already exists.",
                        created.name
                    )));
                }
                tx.put(key.clone(), encode(key, created)?).record(
                    "environment-created",
                    None,
                    None,
                    Some(&created.name),
                    None,
                    Some(encode(key, created)?),
                );
                Ok(created.clone())
            })
        })
        .await
    }

    /// Every environment, by name.
    pub async fn environments(&self, caller: &Caller) -> Result<Vec<Environment>> {
        self.require(caller, &[]).await?;
        let listing = self.store.list(Collection::Environments, "").await?;
        listing
            .records
            .iter()
            .map(|(id, record)| decode(&environment_key(id), &record.value))
            .collect()
    }

    /// Make `environment` available in `project`. Needs `UPDATE_PROJECT` in the project.
    /// Adding an environment the project already has changes nothing and succeeds.
    pub async fn add_project_environment(
        &self,
        caller: &Caller,
        project: &str,
        environment: &str,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::project(Permission::UpdateProject, project)])
            .await?;
        self.change("add_project_environment", permit, |tx| {
            Box::pin(async move {
                let keys = [project_key(project), environment_key(environment)];
                let [project_record, environment_record] = tx.read(&keys).await?;
                let mut current: Project = decode_opt(&keys[0], project_record.as_ref())?
                    .ok_or_else(|| project_not_found(project))?;
                if environment_record.is_none() {
                    return Err(environment_not_found(environment));
                }
                if current.environments.iter().any(|e| e == environment) {
                    return Ok(());
                }
                current.environments.push(environment.to_owned());
                current.environments.sort();
                tx.put(keys[0].clone(), encode(&keys[0], &current)?).record(
                    "project-environment-added",
                    Some(project),
                    None,
                    Some(environment),
                    None,
                    None,
                );
                Ok(())
            })
        })
        .await
    }
}
