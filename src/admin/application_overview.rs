//! Views over applications from what their SDKs reported: an application's overview, its
//! instances in one environment, and the applications that used a project's features.
//! They combine the registrations (instances) with the usage metrics (which features each
//! application evaluated, where), as Unleash's views do.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, TimeDelta, Utc};

use super::ToggleAdmin;
use super::applications::application_key;
use super::records::{FeatureRecord, decode_opt};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{
    Application, ApplicationEnvironmentIssues, ApplicationInstance, ApplicationOverview,
    ApplicationOverviewEnvironment, ApplicationOverviewIssues, EnvironmentInstance,
    FeatureEnvironmentMetrics, ProjectApplication, ProjectApplicationSdk, ProjectApplications,
};
use crate::store::Collection;

/// How long an instance counts as running after it was last seen, as in Unleash's views.
const RECENT_HOURS: i64 = 24;

/// Strategies Unleash no longer defines, which an application may still name without that
/// being an issue.
const DEPRECATED_STRATEGIES: [&str; 3] = [
    "gradualRolloutRandom",
    "gradualRolloutSessionId",
    "gradualRolloutUserId",
];

/// The oldest SDK versions Unleash does not call outdated, by SDK name.
const MINIMUM_SDKS: [(&str, (u64, u64, u64)); 7] = [
    ("unleash-client-node", (5, 3, 2)),
    ("unleash-client-java", (9, 2, 0)),
    ("unleash-client-go", (4, 1, 0)),
    ("unleash-client-python", (5, 11, 0)),
    ("unleash-client-ruby", (5, 0, 0)),
    ("unleash-client-dotnet", (4, 1, 3)),
    ("unleash-client-php", (2, 3, 0)),
];

/// Whether `sdk` (`name:version`) is older than Unleash's recommended minimum for its SDK
/// (a version that is not `major.minor.patch` is not called outdated, as in Unleash).
fn is_outdated(sdk: &str) -> bool {
    let Some((name, version)) = sdk.split_once(':') else {
        return false;
    };
    let Some((_, minimum)) = MINIMUM_SDKS.iter().find(|(n, _)| *n == name) else {
        return false;
    };
    let mut parts = version.split('.').map(str::parse::<u64>);
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(Ok(a)), Some(Ok(b)), Some(Ok(c)), None) => (a, b, c) < *minimum,
        _ => false,
    }
}

/// Whether `instance` was seen in the last day (an instance recorded without a time counts).
fn is_recent(instance: &ApplicationInstance, since: DateTime<Utc>) -> bool {
    instance.last_seen.is_none_or(|seen| seen >= since)
}

fn application_not_found(name: &str) -> Error {
    Error::not_found(format!("Could not find appName={name}"))
}

impl ToggleAdmin {
    /// The overview of the application `name` (`GET
    /// /api/admin/metrics/applications/{appName}/overview`, Unleash's
    /// `applicationOverviewSchema`): the projects of the features it reported, how many
    /// features, and per environment (those it reported metrics from, and those its
    /// instances run in) its instances of the last 24 hours, their SDKs, when one was last
    /// seen, the features it reported that do not exist and its outdated SDKs; and the
    /// strategies it implements that are not defined. Any valid key may read it; an
    /// application that never registered → [`Error::NotFound`] `Could not find
    /// appName=<name>`.
    pub async fn application_overview(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<ApplicationOverview> {
        self.permit(caller, &[]).await?;
        let application = self.registered_application(name).await?;
        let metrics: Vec<FeatureEnvironmentMetrics> = self
            .all_metrics()
            .await?
            .into_iter()
            .filter(|m| m.app_name == name)
            .collect();
        let features = self.features_by_name().await?;
        let since = Utc::now() - TimeDelta::hours(RECENT_HOURS);
        let mut reported: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in &metrics {
            reported
                .entry(m.environment.clone())
                .or_default()
                .insert(m.feature_name.clone());
        }
        let mut environments: BTreeSet<String> = reported.keys().cloned().collect();
        environments.extend(
            application
                .instances
                .iter()
                .filter(|i| is_recent(i, since))
                .filter_map(|i| i.environment.clone()),
        );
        let mut listed = Vec::new();
        for environment in environments {
            let instances: Vec<&ApplicationInstance> = application
                .instances
                .iter()
                .filter(|i| i.environment.as_deref() == Some(&environment) && is_recent(i, since))
                .collect();
            let sdks: BTreeSet<String> = instances
                .iter()
                .filter_map(|i| i.sdk_version.clone())
                .collect();
            let sdks: Vec<String> = sdks.into_iter().collect();
            let missing_features = reported
                .get(&environment)
                .map(|names| {
                    names
                        .iter()
                        .filter(|n| !features.contains_key(n.as_str()))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            listed.push(ApplicationOverviewEnvironment {
                instance_count: instances.len(),
                frontend_sdks: Vec::new(),
                backend_sdks: sdks.clone(),
                last_seen: instances.iter().filter_map(|i| i.last_seen).max(),
                issues: ApplicationEnvironmentIssues {
                    missing_features,
                    outdated_sdks: sdks.iter().filter(|s| is_outdated(s)).cloned().collect(),
                },
                sdks,
                name: environment,
            });
        }
        let reported_features: BTreeSet<&str> =
            metrics.iter().map(|m| m.feature_name.as_str()).collect();
        let projects: BTreeSet<String> = reported_features
            .iter()
            .filter_map(|f| features.get(*f).map(|r| r.project.clone()))
            .collect();
        let (_, definitions) = self.reader().strategy_definition_map().await?;
        let missing_strategies = application
            .strategies
            .iter()
            .filter(|s| {
                !definitions.contains_key(s.as_str())
                    && !DEPRECATED_STRATEGIES.contains(&s.as_str())
            })
            .cloned()
            .collect();
        Ok(ApplicationOverview {
            projects: projects.into_iter().collect(),
            feature_count: reported_features.len(),
            environments: listed,
            issues: ApplicationOverviewIssues { missing_strategies },
        })
    }

    /// The instances of the application `name` in `environment` seen in the last 24 hours,
    /// most recently seen first (`GET
    /// /api/admin/metrics/instances/{appName}/environment/{environment}`). Any valid key may
    /// read them; an unknown application → [`Error::NotFound`] (Unleash answers an empty
    /// list).
    pub async fn environment_instances(
        &self,
        caller: &Caller,
        name: &str,
        environment: &str,
    ) -> Result<Vec<EnvironmentInstance>> {
        self.permit(caller, &[]).await?;
        let application = self.registered_application(name).await?;
        let since = Utc::now() - TimeDelta::hours(RECENT_HOURS);
        let mut instances: Vec<EnvironmentInstance> = application
            .instances
            .into_iter()
            .filter(|i| i.environment.as_deref() == Some(environment) && is_recent(i, since))
            .map(|i| EnvironmentInstance {
                instance_id: i.instance_id,
                sdk_version: i.sdk_version,
                client_ip: None,
                last_seen: i.last_seen,
            })
            .collect();
        instances.sort_by(|a, b| {
            b.last_seen
                .cmp(&a.last_seen)
                .then(a.instance_id.cmp(&b.instance_id))
        });
        Ok(instances)
    }

    /// The applications that reported metrics for features of `project` (`GET
    /// /api/admin/projects/{projectId}/applications`, Unleash's `projectApplicationsSchema`),
    /// by name (`descending` reverses it), each with the environments it reported them in,
    /// its instances there and their SDKs; only registered applications, as in Unleash.
    /// `query` keeps those whose name, an environment, an instance or an SDK contains it
    /// (ignoring case); then `offset` and `limit` page. Any valid key may read them; an
    /// unknown project → [`Error::NotFound`].
    pub async fn project_applications(
        &self,
        caller: &Caller,
        project: &str,
        query: Option<&str>,
        descending: bool,
        offset: usize,
        limit: usize,
    ) -> Result<ProjectApplications> {
        self.permit(caller, &[]).await?;
        let key = super::records::project_key(project);
        if self.store.get(&key).await?.is_none() {
            return Err(super::records::project_not_found(project));
        }
        let features = self.features_by_name().await?;
        let mut environments: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in self.all_metrics().await? {
            if features
                .get(&m.feature_name)
                .is_some_and(|f| f.project == project)
            {
                environments
                    .entry(m.app_name)
                    .or_default()
                    .insert(m.environment);
            }
        }
        let needle = query.map(str::to_lowercase).filter(|q| !q.is_empty());
        let mut applications = Vec::new();
        for (name, envs) in environments {
            let key = application_key(&name);
            let Some(application) =
                decode_opt::<Application>(&key, self.store.get(&key).await?.as_ref())?
            else {
                continue;
            };
            let running: Vec<&ApplicationInstance> = application
                .instances
                .iter()
                .filter(|i| i.environment.as_ref().is_some_and(|e| envs.contains(e)))
                .collect();
            let mut sdks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for sdk in running.iter().filter_map(|i| i.sdk_version.as_deref()) {
                let (sdk_name, version) = sdk.split_once(':').unwrap_or((sdk, ""));
                let versions = sdks.entry(sdk_name.to_owned()).or_default();
                if !version.is_empty() {
                    versions.insert(version.to_owned());
                }
            }
            let item = ProjectApplication {
                environments: envs.into_iter().collect(),
                instances: running.iter().map(|i| i.instance_id.clone()).collect(),
                sdks: sdks
                    .into_iter()
                    .map(|(name, versions)| ProjectApplicationSdk {
                        name,
                        versions: versions.into_iter().collect(),
                    })
                    .collect(),
                name,
            };
            let matches = needle.as_deref().is_none_or(|q| {
                let has = |text: &str| text.to_lowercase().contains(q);
                has(&item.name)
                    || item.environments.iter().any(|e| has(e))
                    || item.instances.iter().any(|i| has(i))
                    || running
                        .iter()
                        .filter_map(|i| i.sdk_version.as_deref())
                        .any(has)
            });
            if matches {
                applications.push(item);
            }
        }
        if descending {
            applications.reverse();
        }
        let total = applications.len();
        Ok(ProjectApplications {
            total,
            applications: applications.into_iter().skip(offset).take(limit).collect(),
        })
    }

    /// The registered application `name`, or Unleash's 404.
    async fn registered_application(&self, name: &str) -> Result<Application> {
        if name.starts_with(super::records::SEP) {
            return Err(application_not_found(name));
        }
        let key = application_key(name);
        decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| application_not_found(name))
    }

    /// Every feature, archived ones included, by name.
    async fn features_by_name(&self) -> Result<BTreeMap<String, FeatureRecord>> {
        let (_, features) = self
            .reader()
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        Ok(features.into_iter().map(|f| (f.name.clone(), f)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::is_outdated;

    #[test]
    fn sdks_older_than_unleash_minimums_are_outdated() {
        assert!(is_outdated("unleash-client-node:5.3.1"));
        assert!(!is_outdated("unleash-client-node:5.3.2"));
        assert!(!is_outdated("unleash-client-node:6.0.0"));
        assert!(!is_outdated("unleash-client-rust:0.1.0"));
        assert!(!is_outdated("unleash-client-java:beta"));
        assert!(!is_outdated("no-version"));
    }
}
