//! Projects: the supporting surface the four operations stand on.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::access::access_key;
use super::project_health::{FlagAge, StaleCounts, member_count};
use super::reader::Reader;
use super::records::{
    FeatureRecord, decode_opt, encode, environment_key, project_key, project_not_found,
};
use super::users::user_key;
use super::{Need, ToggleAdmin};
use crate::access::OWNER_ROLE;
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::{
    Group, Permission, ProjectAccessConfiguration, ProjectOwner, ProjectSummary, User,
};
use crate::model::{NewProject, Project};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::{Collection, EventQuery, Key};

impl ToggleAdmin {
    /// Create a project. Needs `CREATE_PROJECT`. The id must be 1–100 URL-friendly characters
    /// and not taken ([`Error::NameExists`]); the environments listed must exist; a feature
    /// naming pattern must be a valid regular expression, and its example must match it.
    /// `createdAt` is set now; default strategies are set afterwards, with
    /// [`set_default_strategy`](Self::set_default_strategy) (any sent here are ignored).
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
            created_at: Some(chrono::Utc::now()),
            default_strategies: Default::default(),
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

    /// Every project as Unleash lists them (`GET /api/admin/projects`, `projectsSchema`): by
    /// id, each with its health, feature counts (stale, and potentially stale: older than
    /// their feature type's lifetime), member count, owners and when one of its features
    /// last changed. Any valid key may list them. Unlike Unleash OSS, which shows only
    /// `default`, every project is listed; and the health is computed when read, as
    /// [`project_health_report`](Self::project_health_report) computes it (Unleash's is
    /// refreshed by a periodic job, so it lags behind changes). Projects are never archived
    /// here, so `archived` = true lists none.
    pub async fn project_summaries(
        &self,
        caller: &Caller,
        archived: bool,
    ) -> Result<Vec<ProjectSummary>> {
        self.permit(caller, &[]).await?;
        if archived {
            return Ok(Vec::new());
        }
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (_, projects) = reader.list_decoded::<Project>(Collection::Projects).await?;
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let (_, groups) = reader.list_decoded::<Group>(Collection::Groups).await?;
        let lifetimes = self.lifetimes_in(reader).await?;
        let now = Utc::now();
        let mut summaries = Vec::with_capacity(projects.len());
        for project in projects {
            let counts = StaleCounts::of(
                features
                    .iter()
                    .filter(|f| f.project == project.id && !f.archived)
                    .map(|f| FlagAge {
                        stale: f.stale,
                        feature_type: &f.feature_type,
                        created_at: Some(f.created_at),
                    }),
                &lifetimes,
                now,
            );
            let access_key = access_key(&project.id);
            let access: ProjectAccessConfiguration =
                decode_opt(&access_key, view.get(&access_key).await?.as_ref())?.unwrap_or_default();
            let owners = owners(&access, &groups, &reader).await?;
            let held: BTreeSet<&str> = features
                .iter()
                .filter(|f| f.project == project.id)
                .map(|f| f.name.as_str())
                .collect();
            let last_updated_at = if held.is_empty() {
                None
            } else {
                self.last_feature_change(&project.id, &held).await?
            };
            summaries.push(ProjectSummary {
                archived_at: None,
                last_reported_flag_usage: None,
                last_updated_at,
                owners,
                health: counts.health(),
                feature_count: counts.active + counts.stale,
                stale_feature_count: counts.stale,
                potentially_stale_feature_count: counts.potentially_stale,
                member_count: member_count(&access, &groups),
                created_at: project.created_at,
                mode: "open".to_owned(),
                default_stickiness: "default".to_owned(),
                favorite: false,
                id: project.id,
                name: project.name,
                description: project.description,
            });
        }
        Ok(summaries)
    }

    /// When one of `features` (the features of `project`) last changed: the time of the
    /// project's newest event naming one of them. Reads the project's events newest first
    /// until it finds one.
    async fn last_feature_change(
        &self,
        project: &str,
        features: &BTreeSet<&str>,
    ) -> Result<Option<DateTime<Utc>>> {
        let mut query = EventQuery::newest(EVENT_PAGE);
        query.project = Some(project.to_owned());
        loop {
            let page = self.store.query_events(&query).await?;
            let read = page.events.len();
            for event in &page.events {
                query.before = Some(event.id);
                if event
                    .event
                    .feature_name
                    .as_deref()
                    .is_some_and(|f| features.contains(f))
                {
                    return Ok(Some(event.event.created_at));
                }
            }
            if read < EVENT_PAGE {
                return Ok(None);
            }
        }
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

/// How many events one read brings while looking for a project's last feature change.
const EVENT_PAGE: usize = 100;

/// Who holds the Owner role in a project with `access`, as Unleash lists them: its users, then
/// its groups; the system when nobody does.
async fn owners(
    access: &ProjectAccessConfiguration,
    groups: &[Group],
    reader: &Reader<'_>,
) -> Result<Vec<ProjectOwner>> {
    let mut owners = Vec::new();
    let owning = access.roles.iter().filter(|r| r.id == OWNER_ROLE);
    let user_ids: Vec<i64> = owning
        .clone()
        .flat_map(|r| r.users.iter().copied())
        .collect();
    let keys: Vec<Key> = user_ids.iter().map(|id| user_key(*id)).collect();
    for (key, record) in keys.iter().zip(reader.get_all(&keys).await?) {
        if let Some(user) = decode_opt::<User>(key, record.as_ref())? {
            owners.push(ProjectOwner::User {
                image_url: user.image_url(),
                name: user
                    .name
                    .clone()
                    .or_else(|| user.username.clone())
                    .or_else(|| user.email.clone())
                    .unwrap_or_default(),
                email: user.email,
            });
        }
    }
    for role in owning {
        for group in groups.iter().filter(|g| role.groups.contains(&g.id)) {
            owners.push(ProjectOwner::Group {
                name: group.name.clone(),
            });
        }
    }
    if owners.is_empty() {
        owners.push(ProjectOwner::System);
    }
    Ok(owners)
}
