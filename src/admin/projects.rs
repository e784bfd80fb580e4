//! Projects: the supporting surface the four operations stand on.

use super::records::{decode_opt, encode, environment_key, project_key, project_not_found};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::Permission;
use crate::model::{NewProject, Project};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::Collection;

impl ToggleAdmin {
    /// Create a project. Needs `CREATE_PROJECT`. The id must be 1–100 URL-friendly characters
    /// and not taken ([`Error::NameExists`]); the environments listed must exist; a feature
    /// naming pattern must be a valid regular expression, and its example must match it.
    pub async fn create_project(&self, caller: &Caller, project: &NewProject) -> Result<Project> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateProject)])
            .await?;
        let mut problems = Vec::new();
        if let Some(problem) = name_problem(&project.id, 100) {
            problems.push(ErrorDetail::at("id", problem));
        }
        if project.name.trim().is_empty() {
            problems.push(ErrorDetail::at(
                "name",
                "the project name must not be empty",
            ));
        } else if let Some(problem) = display_name_problem(&project.name, MAX_NAME) {
            problems.push(ErrorDetail::at(
                "name",
                format!("the project name {problem}"),
            ));
        }
        if let Some(naming) = &project.feature_naming {
            match crate::names::naming_regex(&naming.pattern) {
                Err(problem) => problems.push(ErrorDetail::at("featureNaming.pattern", problem)),
                Ok(regex) => {
                    if let Some(example) = &naming.example
                        && !regex.is_match(example)
                    {
                        problems.push(ErrorDetail::at(
                            "featureNaming.example",
                            format!("the example \"{example}\" does not match the pattern"),
                        ));
                    }
                }
            }
        }
        if !problems.is_empty() {
            return Err(Error::validation("The project is not valid.", problems));
        }
        let mut environments = project.environments.clone();
        environments.sort();
        environments.dedup();
        let env_keys: Vec<_> = environments.iter().map(|e| environment_key(e)).collect();
        let created = Project {
            environments,
            ..project.clone()
        };
        let key = project_key(&created.id);
        // A conflict (the project created meanwhile, or an environment it names changed) is
        // decided again: only a project that exists is a name clash.
        let (created, key, env_keys) = (&created, &key, &env_keys);
        self.change("create_project", permit, |tx| {
            Box::pin(async move {
                let mut keys = env_keys.clone();
                keys.push(key.clone());
                let mut found = tx.reader().get_all(&keys).await?;
                let project_record = found.pop().flatten();
                if project_record.is_some() {
                    return Err(Error::name_exists(format!(
                        "A project with id \"{}\" already exists.",
                        created.id
                    )));
                }
                let mut problems = Vec::new();
                for (i, (name, record)) in created.environments.iter().zip(&found).enumerate() {
                    if record.is_none() {
                        problems.push(ErrorDetail::at(
                            format!("environments[{i}]"),
                            format!("the environment \"{name}\" does not exist"),
                        ));
                    }
                }
                if !problems.is_empty() {
                    return Err(Error::validation("The project is not valid.", problems));
                }
                tx.put(key.clone(), encode(key, created)?).record(
                    "project-created",
                    Some(&created.id),
                    None,
                    None,
                    None,
                    Some(encode(key, created)?),
                );
                Ok(created.clone())
            })
        })
        .await
    }

    /// The project `id`. Any valid key may read it.
    pub async fn project(&self, caller: &Caller, id: &str) -> Result<Project> {
        self.require(caller, &[]).await?;
        let key = project_key(id);
        decode_opt(&key, self.store.get(&key).await?.as_ref())?.ok_or_else(|| project_not_found(id))
    }

    /// Every project, by id. Any valid key may list them.
    pub async fn projects(&self, caller: &Caller) -> Result<Vec<Project>> {
        self.require(caller, &[]).await?;
        let (_, projects) = self
            .reader()
            .list_decoded::<Project>(Collection::Projects)
            .await?;
        Ok(projects)
    }
}
