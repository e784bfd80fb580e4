//! Projects, environments and features: the supporting surface the four operations stand on.

use chrono::Utc;

use super::records::{
    FeatureRecord, decode, decode_opt, encode, environment_key, environment_not_found, feature_key,
    feature_not_found, project_key, project_not_found, revision_of,
};
use super::{Check, ToggleAdmin, event};
use crate::auth::{Caller, Permission};
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{Environment, Feature, Project};
use crate::model::{NewFeature, NewProject};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::{ChangeSet, Collection, Revision};

impl ToggleAdmin {
    /// Create a project. Needs `CREATE_PROJECT`. The id must be 1–100 URL-friendly characters
    /// and not taken ([`Error::NameExists`]); the environments listed must exist; a feature
    /// naming pattern must be a valid regular expression, and its example must match it.
    pub async fn create_project(&self, caller: &Caller, project: &NewProject) -> Result<Project> {
        let checks = [Check::root(Permission::CreateProject)];
        let mut first = Some(self.require(caller, &checks).await?);
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
            match naming_regex(&naming.pattern) {
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
        retrying!("create_project", async {
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            let mut keys = env_keys.clone();
            keys.push(key.clone());
            let mut found = self.store.get_many(&keys).await?;
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
            let mut changes = ChangeSet::new();
            changes.expect_revision(key.clone(), Revision::ABSENT);
            for (env_key, record) in env_keys.iter().zip(&found) {
                changes.expect_revision(env_key.clone(), revision_of(record.as_ref()));
            }
            changes
                .put(key.clone(), encode(&key, &created)?)
                .event(event(
                    caller,
                    "project-created",
                    Some(&created.id),
                    None,
                    None,
                    None,
                    Some(encode(&key, &created)?),
                ));
            self.commit_as(&authorised, changes).await?;
            Ok(created.clone())
        })
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

    /// Create an environment (name, type). Needs `CREATE_ENVIRONMENT`. The name must be 1–100
    /// URL-friendly characters and not taken.
    pub async fn create_environment(
        &self,
        caller: &Caller,
        environment: &Environment,
    ) -> Result<Environment> {
        let checks = [Check::root(Permission::CreateEnvironment)];
        let mut first = Some(self.require(caller, &checks).await?);
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
        // A conflict is decided again: only an environment that exists is a name clash.
        retrying!("create_environment", async {
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            if self.store.get(&key).await?.is_some() {
                return Err(Error::name_exists(format!(
                    "An environment named \"{}\" already exists.",
                    created.name
                )));
            }
            let mut changes = ChangeSet::new();
            changes
                .expect_revision(key.clone(), Revision::ABSENT)
                .put(key.clone(), encode(&key, &created)?)
                .event(event(
                    caller,
                    "environment-created",
                    None,
                    None,
                    Some(&created.name),
                    None,
                    Some(encode(&key, &created)?),
                ));
            self.commit_as(&authorised, changes).await?;
            Ok(created.clone())
        })
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
        let checks = [Check::project(Permission::UpdateProject, project)];
        let mut first = Some(self.require(caller, &checks).await?);
        retrying!("add_project_environment", async {
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            let keys = [project_key(project), environment_key(environment)];
            let [project_record, environment_record] = self.reader().read(&keys).await?;
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
            let mut changes = ChangeSet::new();
            changes
                .expect_revision(keys[0].clone(), revision_of(project_record.as_ref()))
                .expect_revision(keys[1].clone(), revision_of(environment_record.as_ref()))
                .put(keys[0].clone(), encode(&keys[0], &current)?)
                .event(event(
                    caller,
                    "project-environment-added",
                    Some(project),
                    None,
                    Some(environment),
                    None,
                    None,
                ));
            self.commit_as(&authorised, changes).await?;
            Ok(())
        })
    }

    /// Create a feature in `project`. Needs `CREATE_FEATURE` in the project.
    ///
    /// The name must be 1–100 URL-friendly characters, unique across all projects (archived
    /// features included) → [`Error::NameExists`], and match the project's naming pattern;
    /// the project's feature limit counts its features that are not archived. The feature
    /// starts disabled in every environment of its project.
    pub async fn create_feature(
        &self,
        caller: &Caller,
        project: &str,
        feature: &NewFeature,
    ) -> Result<Feature> {
        let checks = [Check::project(Permission::CreateFeature, project)];
        let mut first = Some(self.require(caller, &checks).await?);
        if let Some(problem) = name_problem(&feature.name, 100) {
            return Err(Error::invalid_at("name", problem));
        }
        let user = self.acting_user(caller).await?;
        retrying!("create_feature", async {
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            let pkey = project_key(project);
            let fkey = feature_key(&feature.name);
            let [project_record, feature_record] =
                self.reader().read(&[pkey.clone(), fkey.clone()]).await?;
            let current: Project = decode_opt(&pkey, project_record.as_ref())?
                .ok_or_else(|| project_not_found(project))?;
            if feature_record.is_some() {
                return Err(Error::name_exists(format!(
                    "A feature named \"{}\" already exists.",
                    feature.name
                )));
            }
            if let Some(naming) = &current.feature_naming {
                let regex =
                    naming_regex(&naming.pattern).map_err(|p| Error::invalid_at("name", p))?;
                if !regex.is_match(&feature.name) {
                    let mut message = format!(
                        "The feature name \"{}\" does not match the project's naming pattern \"{}\"",
                        feature.name, naming.pattern
                    );
                    if let Some(example) = &naming.example {
                        message.push_str(&format!(" (for example \"{example}\")"));
                    }
                    return Err(Error::invalid_at("name", message));
                }
            }
            let mut changes = ChangeSet::new();
            if let Some(limit) = current.feature_limit {
                let all = self.store.list(Collection::Features, "").await?;
                let mut active = 0u64;
                for (id, record) in &all.records {
                    let existing: FeatureRecord = decode(&feature_key(id), &record.value)?;
                    if existing.project == project && !existing.archived {
                        active += 1;
                    }
                }
                if active >= u64::from(limit) {
                    return Err(Error::invalid_at(
                        "name",
                        format!(
                            "Failed to create feature flag. You can't create more than the established limit of {limit}."
                        ),
                    ));
                }
                changes.expect_collection(Collection::Features, all.revision);
            }
            let record = FeatureRecord {
                name: feature.name.clone(),
                project: project.to_owned(),
                feature_type: feature
                    .feature_type
                    .clone()
                    .unwrap_or_else(|| "release".to_owned()),
                description: feature.description.clone(),
                impression_data: feature.impression_data.unwrap_or(false),
                stale: false,
                archived: false,
                archived_at: None,
                created_at: Utc::now(),
                created_by: Some(user.clone()),
                collaborators: vec![user.clone()],
            };
            changes
                .expect_revision(pkey.clone(), revision_of(project_record.as_ref()))
                .expect_revision(fkey.clone(), Revision::ABSENT)
                .put(fkey.clone(), encode(&fkey, &record)?)
                .event(event(
                    caller,
                    "feature-created",
                    Some(project),
                    Some(&feature.name),
                    None,
                    None,
                    Some(encode(&fkey, &record)?),
                ));
            self.commit_as(&authorised, changes).await?;
            // The environments' types and sort orders, for the view (a new feature has no
            // parents or children).
            let (_, catalog) = self
                .reader()
                .list_decoded::<Environment>(Collection::Environments)
                .await?;
            let links = super::features::FeatureLinks {
                environments: &catalog,
                parents: Vec::new(),
                children: Vec::new(),
            };
            Ok(super::features::feature_view(
                &record,
                &current,
                &[],
                Some(links),
            ))
        })
    }

    /// Archive the feature `name` of `project`. Needs `DELETE_FEATURE` in the project.
    /// Archiving an archived feature changes nothing and succeeds.
    pub async fn archive_feature(&self, caller: &Caller, project: &str, name: &str) -> Result<()> {
        let checks = [Check::project(Permission::DeleteFeature, project)];
        let mut first = Some(self.require(caller, &checks).await?);
        retrying!("archive_feature", async {
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            let (pkey, fkey) = (project_key(project), feature_key(name));
            let [project_record, feature_record] =
                self.reader().read(&[pkey.clone(), fkey.clone()]).await?;
            if project_record.is_none() {
                return Err(project_not_found(project));
            }
            let mut record: FeatureRecord = decode_opt(&fkey, feature_record.as_ref())?
                .filter(|f: &FeatureRecord| f.project == project)
                .ok_or_else(|| feature_not_found(name, project))?;
            if record.archived {
                return Ok(());
            }
            record.archived = true;
            record.archived_at = Some(Utc::now());
            let mut changes = ChangeSet::new();
            changes
                .expect_revision(fkey.clone(), revision_of(feature_record.as_ref()))
                .put(fkey.clone(), encode(&fkey, &record)?)
                .event(event(
                    caller,
                    "feature-archived",
                    Some(project),
                    Some(name),
                    None,
                    None,
                    None,
                ));
            self.commit_as(&authorised, changes).await?;
            Ok(())
        })
    }

    /// The project the feature `name` belongs to (archived or not), for the routes that name
    /// a feature without its project (`/api/admin/features/{featureName}/…`). Any valid key
    /// may ask; an unknown feature is [`Error::NotFound`].
    pub async fn feature_project(&self, caller: &Caller, name: &str) -> Result<String> {
        self.require(caller, &[]).await?;
        let key = feature_key(name);
        let record: Option<FeatureRecord> = decode_opt(&key, self.store.get(&key).await?.as_ref())?;
        record
            .map(|f| f.project)
            .ok_or_else(|| Error::not_found(format!("There's no feature named \"{name}\".")))
    }
}

/// A feature naming pattern as a regex that must match the whole name.
pub(crate) fn naming_regex(pattern: &str) -> std::result::Result<regex::Regex, String> {
    crate::names::naming_regex(pattern)
}
