//! Environments, and which of them a project has.

use std::collections::BTreeMap;

use super::reader::Reader;
use super::records::{
    FeatureEnvironmentRecord, SEP, decode, decode_opt, encode, environment_key,
    environment_not_found, project_key, project_not_found,
};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{ApiKeyInfo, DEFAULT_SORT_ORDER, EnvironmentDetail, KeyAccess, Permission};
use crate::model::{Environment, Project};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::{Collection, Key};

/// The position of `environment` among the environments: its sort order, or Unleash's
/// default for one never set.
pub(super) fn sort_order(environment: &Environment) -> i64 {
    environment.sort_order.unwrap_or(DEFAULT_SORT_ORDER)
}

/// Put `environments` in their order: by sort order, then by name.
pub(super) fn sort_environments(environments: &mut [Environment]) {
    environments.sort_by(|a, b| (sort_order(a), &a.name).cmp(&(sort_order(b), &b.name)));
}

/// Whether the environment `name` is protected: `default`, as Unleash's built-in
/// environment of that name (which Unleash will not update or delete). Environments are never
/// updated or deleted through this crate's API, so the flag only tells clients which one it
/// is.
pub(super) fn is_protected(name: &str) -> bool {
    name == "default"
}

/// Every environment (or only `only`, when it exists) with its counts, unordered: the
/// projects that have it, the client and frontend keys for it, the features enabled in it.
async fn details(reader: Reader<'_>, only: Option<&str>) -> Result<Vec<EnvironmentDetail>> {
    let environments: Vec<Environment> = match only {
        Some(name) => {
            let key = environment_key(name);
            let found = reader.get_all(std::slice::from_ref(&key)).await?;
            decode_opt(&key, found.first().and_then(Option::as_ref))?
                .into_iter()
                .collect()
        }
        None => reader.list_decoded(Collection::Environments).await?.1,
    };
    if environments.is_empty() {
        return Ok(Vec::new());
    }
    let (_, projects) = reader.list_decoded::<Project>(Collection::Projects).await?;
    let (_, keys) = reader
        .list_decoded::<ApiKeyInfo>(Collection::ApiKeys)
        .await?;
    let mut enabled: BTreeMap<String, u64> = BTreeMap::new();
    let listing = reader.list(Collection::FeatureEnvironments, "").await?;
    for (id, record) in &listing.records {
        let Some((_, environment)) = id.rsplit_once(SEP) else {
            continue;
        };
        if only.is_some_and(|name| name != environment) {
            continue;
        }
        let key = Key::new(Collection::FeatureEnvironments, id.clone());
        let fe: FeatureEnvironmentRecord = decode(&key, &record.value)?;
        *enabled.entry(environment.to_owned()).or_default() += u64::from(fe.enabled);
    }
    Ok(environments
        .into_iter()
        .map(|environment| {
            let name = environment.name.as_str();
            EnvironmentDetail {
                sort_order: sort_order(&environment),
                enabled: environment.enabled.unwrap_or(true),
                protected: is_protected(name),
                required_approvals: None,
                project_count: projects
                    .iter()
                    .filter(|p| p.environments.iter().any(|e| e == name))
                    .count() as u64,
                api_token_count: keys
                    .iter()
                    .filter(|k| matches!(&k.access, KeyAccess::Client { environment, .. } if environment == name))
                    .count() as u64,
                enabled_toggle_count: enabled.get(name).copied().unwrap_or(0),
                name: environment.name,
                environment_type: environment.environment_type,
            }
        })
        .collect())
}

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

    /// Every environment, in sort order (as Unleash lists them: by `sortOrder`, an unset one
    /// counting as [`DEFAULT_SORT_ORDER`], then by name).
    pub async fn environments(&self, caller: &Caller) -> Result<Vec<Environment>> {
        self.require(caller, &[]).await?;
        let listing = self.store.list(Collection::Environments, "").await?;
        let mut environments = listing
            .records
            .iter()
            .map(|(id, record)| decode(&environment_key(id), &record.value))
            .collect::<Result<Vec<Environment>>>()?;
        sort_environments(&mut environments);
        Ok(environments)
    }

    /// Every environment as Unleash lists them (`GET /api/admin/environments`,
    /// `environmentsSchema`): in the order of [`environments`](Self::environments), each
    /// with how many projects have it, how many client and frontend keys are for it and how
    /// many features are enabled in it. Any valid key may list them.
    pub async fn environment_details(&self, caller: &Caller) -> Result<Vec<EnvironmentDetail>> {
        self.permit(caller, &[]).await?;
        let view = self.store.view().await?;
        let mut environments = details(Reader::View(view.as_ref()), None).await?;
        environments.sort_by(|a, b| (a.sort_order, &a.name).cmp(&(b.sort_order, &b.name)));
        Ok(environments)
    }

    /// The environment `name` as Unleash shows one (`environmentSchema`), with how many
    /// projects have it, how many client and frontend keys are for it and how many features
    /// are enabled in it. Any valid key may read it; an unknown name → [`Error::NotFound`]
    /// `Could not find environment with name <name>`, as Unleash says.
    pub async fn environment(&self, caller: &Caller, name: &str) -> Result<EnvironmentDetail> {
        self.permit(caller, &[]).await?;
        let view = self.store.view().await?;
        details(Reader::View(view.as_ref()), Some(name))
            .await?
            .pop()
            .ok_or_else(|| Error::not_found(format!("Could not find environment with name {name}")))
    }

    /// Turn the environment `name` on or off (`POST /api/admin/environments/{name}/on|off`).
    /// Needs `ADMIN`, as in Unleash. An unknown name → [`Error::NotFound`]
    /// `Could not find environment <name>`. Setting the state it has changes nothing and
    /// writes no event; otherwise one `environment-updated` event (Unleash writes none).
    ///
    /// As in Unleash, an environment turned off is only marked so (`enabled: false`, which
    /// Unleash's UI calls deprecated): its features, keys and the client and frontend APIs'
    /// answers in it are unchanged, so SDKs that still use it keep working.
    pub async fn set_environment_enabled(
        &self,
        caller: &Caller,
        name: &str,
        enabled: bool,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::Admin)])
            .await?;
        self.change("set_environment_enabled", permit, |tx| {
            Box::pin(async move {
                let key = environment_key(name);
                let record = tx.get(&key).await?;
                let current: Environment = decode_opt(&key, record.as_ref())?.ok_or_else(|| {
                    Error::not_found(format!("Could not find environment {name}"))
                })?;
                if current.enabled.unwrap_or(true) == enabled {
                    return Ok(());
                }
                let updated = Environment {
                    enabled: Some(enabled),
                    ..current.clone()
                };
                tx.put(key.clone(), encode(&key, &updated)?).record(
                    "environment-updated",
                    None,
                    None,
                    Some(name),
                    Some(encode(&key, &current)?),
                    Some(encode(&key, &updated)?),
                );
                Ok(())
            })
        })
        .await
    }

    /// Set the sort order of environments (`PUT /api/admin/environments/sort-order`, body
    /// `{"<name>": <sortOrder>}`). Needs `ADMIN`. Atomic: every name must be an environment
    /// that exists, else nothing changes and the 400 names each unknown one at `/<name>`
    /// (Unleash silently skips them). Each environment whose order changes gets an
    /// `environment-updated` event.
    pub async fn set_environment_sort_order<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        order: &BTreeMap<String, i64>,
    ) -> Result<()> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::Admin)])
            .await?;
        self.change("set_environment_sort_order", permit, |tx| {
            Box::pin(async move {
                let keys: Vec<Key> = order.keys().map(|name| environment_key(name)).collect();
                let found = tx.reader().get_all(&keys).await?;
                let mut problems = Vec::new();
                let mut changes = Vec::new();
                for (((name, position), key), record) in order.iter().zip(&keys).zip(&found) {
                    let Some(current) = decode_opt::<Environment>(key, record.as_ref())? else {
                        problems.push(ErrorDetail::at(
                            format!("/{}", crate::error::pointer_token(name)),
                            format!("there is no environment named \"{name}\""),
                        ));
                        continue;
                    };
                    if current.sort_order != Some(*position) {
                        changes.push((name, key, current, *position));
                    }
                }
                if !problems.is_empty() {
                    return Err(Error::validation(
                        "The sort order names environments that do not exist; nothing was changed.",
                        problems,
                    ));
                }
                for (name, key, current, position) in changes {
                    let updated = Environment {
                        sort_order: Some(position),
                        ..current.clone()
                    };
                    tx.put(key.clone(), encode(key, &updated)?).record(
                        "environment-updated",
                        None,
                        None,
                        Some(name),
                        Some(encode(key, &current)?),
                        Some(encode(key, &updated)?),
                    );
                }
                Ok(())
            })
        })
        .await
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
