//! How healthy a project's flags are (`GET /api/admin/projects/{projectId}/health-report`):
//! which are stale, which are potentially stale (older than their feature type's lifetime),
//! and the health rating Unleash computes from them. The rating here is computed when read,
//! from one consistent view of the store (Unleash stores one that a periodic job refreshes,
//! so its rating lags behind changes).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::ToggleAdmin;
use super::access::access_key;
use super::reader::Reader;
use super::records::{decode_opt, project_key, project_not_found};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{
    Group, Project, ProjectAccessConfiguration, ProjectEnvironment, ProjectHealthReport,
};
use crate::store::Collection;

/// What the health of one flag depends on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlagAge<'a> {
    /// Whether it is marked stale.
    pub stale: bool,
    /// Its feature type (`release`, `kill-switch`, …).
    pub feature_type: &'a str,
    /// When it was created, if known.
    pub created_at: Option<DateTime<Utc>>,
}

/// How many of a project's flags (those not archived) are stale, and how healthy that makes
/// it, as Unleash counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StaleCounts {
    /// Not marked stale (potentially stale ones included): Unleash's `activeCount`.
    pub active: u64,
    /// Marked stale.
    pub stale: u64,
    /// Not marked stale, but at least their type's lifetime old.
    pub potentially_stale: u64,
}

impl StaleCounts {
    /// Count `flags`: `lifetimes` are the feature types' lifetimes in days by type (`None`,
    /// or a type not listed: never potentially stale); a flag is potentially stale when it
    /// is not stale and `now` is at least its lifetime after its creation.
    pub(crate) fn of<'a>(
        flags: impl IntoIterator<Item = FlagAge<'a>>,
        lifetimes: &BTreeMap<String, Option<u32>>,
        now: DateTime<Utc>,
    ) -> Self {
        let mut counts = Self::default();
        for flag in flags {
            if flag.stale {
                counts.stale += 1;
                continue;
            }
            counts.active += 1;
            let lifetime = lifetimes.get(flag.feature_type).copied().flatten();
            if let (Some(days), Some(created_at)) = (lifetime, flag.created_at)
                && now - created_at >= chrono::Duration::days(i64::from(days))
            {
                counts.potentially_stale += 1;
            }
        }
        counts
    }

    /// Unleash's health rating: 100 less the percentage of stale flags and the percentage of
    /// potentially stale ones, rounded half up (JavaScript's `Math.round`); 100 without
    /// flags. Computed in floating point in Unleash's order, so that it rounds as Unleash
    /// does (1 of 8 stale: 87.5 → 88).
    pub(crate) fn health(&self) -> u32 {
        let total = self.active + self.stale;
        if total == 0 {
            return 100;
        }
        let total = total as f64;
        let stale = self.stale as f64 / total * 100.0;
        let potentially_stale = self.potentially_stale as f64 / total * 100.0;
        let rating = (100.0 - stale - potentially_stale + 0.5).floor();
        // Within 0..=100 by construction (neither share counts a flag the other does).
        rating.clamp(0.0, 100.0) as u32
    }
}

/// How many users hold a role in a project with `access`, directly or through one of
/// `groups`, each counted once.
pub(crate) fn member_count(access: &ProjectAccessConfiguration, groups: &[Group]) -> u64 {
    let mut members: BTreeSet<i64> = BTreeSet::new();
    for role in &access.roles {
        members.extend(role.users.iter().copied());
        for group in groups.iter().filter(|g| role.groups.contains(&g.id)) {
            members.extend(group.users.iter().copied());
        }
    }
    members.len() as u64
}

impl ToggleAdmin {
    /// The health report of `project` (`GET /api/admin/projects/{projectId}/health-report`,
    /// Unleash's `healthReportSchema`): the project, its flags that are not archived (as
    /// [`project_features`](Self::project_features) shows them, but their environments
    /// without strategies and variants, as Unleash's overview lists them), how many are stale,
    /// potentially stale (older than their feature type's lifetime, see
    /// [`feature_types`](Self::feature_types)) and active, and the health rating these make
    /// (see [`ProjectHealthReport`]), computed now. Any admin-API key may read it, as any
    /// project read; an unknown project → [`Error::NotFound`](crate::Error::NotFound).
    /// Everything is read from one consistent view of the store.
    pub async fn project_health_report(
        &self,
        caller: &Caller,
        project: &str,
    ) -> Result<ProjectHealthReport> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let pkey = project_key(project);
        let current: Project = decode_opt(&pkey, view.get(&pkey).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let mut features = self.project_features_in(reader, &current).await?;
        // Each flag as Unleash's project overview lists it: its environments' switches and
        // counts, without their strategies, variants or metrics.
        for environment in features
            .iter_mut()
            .flat_map(|f| f.environments.iter_mut().flatten())
        {
            environment.strategies = None;
            environment.variants = None;
            environment.extra.clear();
        }
        let counts = StaleCounts::of(
            features.iter().map(|f| FlagAge {
                stale: f.stale.unwrap_or(false),
                feature_type: f.feature_type.as_deref().unwrap_or_default(),
                created_at: f.created_at.flatten(),
            }),
            &self.lifetimes_in(reader).await?,
            Utc::now(),
        );
        let members = self.members_in(reader, project).await?;
        let Project {
            name,
            description,
            feature_naming,
            feature_limit,
            environments,
            created_at,
            mut default_strategies,
            ..
        } = current;
        Ok(ProjectHealthReport {
            version: 1,
            name,
            description,
            mode: "open".to_owned(),
            default_stickiness: "default".to_owned(),
            feature_limit,
            feature_naming,
            members,
            health: counts.health(),
            environments: environments
                .into_iter()
                .map(|environment| ProjectEnvironment {
                    default_strategy: default_strategies.remove(&environment),
                    environment,
                })
                .collect(),
            features,
            created_at,
            favorite: false,
            potentially_stale_count: counts.potentially_stale,
            active_count: counts.active,
            stale_count: counts.stale,
        })
    }

    /// Every feature type's lifetime in days (`None`: never potentially stale), by type.
    pub(super) async fn lifetimes_in(
        &self,
        reader: Reader<'_>,
    ) -> Result<BTreeMap<String, Option<u32>>> {
        Ok(self
            .feature_types_in(reader)
            .await?
            .into_iter()
            .map(|t| (t.id, t.lifetime_days))
            .collect())
    }

    /// How many users hold a role in `project` (see [`member_count`]).
    pub(super) async fn members_in(&self, reader: Reader<'_>, project: &str) -> Result<u64> {
        let key = access_key(project);
        let [access] = reader.read(std::array::from_ref(&key)).await?;
        let access: ProjectAccessConfiguration =
            decode_opt(&key, access.as_ref())?.unwrap_or_default();
        if access.roles.is_empty() {
            return Ok(0);
        }
        let (_, groups) = reader.list_decoded::<Group>(Collection::Groups).await?;
        Ok(member_count(&access, &groups))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lifetimes() -> BTreeMap<String, Option<u32>> {
        [
            ("release".to_owned(), Some(40)),
            ("operational".to_owned(), Some(7)),
            ("kill-switch".to_owned(), None),
        ]
        .into_iter()
        .collect()
    }

    fn flag(stale: bool, feature_type: &str, age_days: i64, now: DateTime<Utc>) -> FlagAge<'_> {
        FlagAge {
            stale,
            feature_type,
            created_at: Some(now - chrono::Duration::days(age_days)),
        }
    }

    #[test]
    fn one_stale_and_one_potentially_stale_of_four_is_a_health_of_50() {
        let now = Utc::now();
        let counts = StaleCounts::of(
            [
                flag(true, "release", 1, now),
                flag(false, "release", 41, now),
                flag(false, "release", 39, now),
                flag(false, "kill-switch", 4000, now),
            ],
            &lifetimes(),
            now,
        );
        assert_eq!(
            counts,
            StaleCounts {
                active: 3,
                stale: 1,
                potentially_stale: 1
            }
        );
        assert_eq!(counts.health(), 50);
    }

    #[test]
    fn a_stale_flag_is_never_also_potentially_stale() {
        let now = Utc::now();
        let counts = StaleCounts::of([flag(true, "operational", 100, now)], &lifetimes(), now);
        assert_eq!(counts.potentially_stale, 0);
        assert_eq!(counts.health(), 0);
    }

    #[test]
    fn the_lifetime_is_reached_on_its_last_day() {
        let now = Utc::now();
        let exactly = StaleCounts::of([flag(false, "operational", 7, now)], &lifetimes(), now);
        assert_eq!(exactly.potentially_stale, 1);
        let younger = FlagAge {
            stale: false,
            feature_type: "operational",
            created_at: Some(now - chrono::Duration::days(7) + chrono::Duration::seconds(1)),
        };
        let younger = StaleCounts::of([younger], &lifetimes(), now);
        assert_eq!(younger.potentially_stale, 0);
        // An unknown type, or one without a creation time, is never potentially stale.
        let unknown = StaleCounts::of(
            [
                flag(false, "custom", 10_000, now),
                FlagAge {
                    stale: false,
                    feature_type: "release",
                    created_at: None,
                },
            ],
            &lifetimes(),
            now,
        );
        assert_eq!(unknown.potentially_stale, 0);
    }

    #[test]
    fn the_rating_rounds_half_up_as_unleash_does() {
        let counts = |active, stale, potentially_stale| StaleCounts {
            active,
            stale,
            potentially_stale,
        };
        assert_eq!(counts(0, 0, 0).health(), 100);
        assert_eq!(counts(7, 1, 0).health(), 88); // 87.5
        assert_eq!(counts(2, 1, 0).health(), 67); // 66.67
        assert_eq!(counts(4, 0, 1).health(), 75);
        assert_eq!(counts(5, 1, 2).health(), 50);
        assert_eq!(counts(0, 3, 0).health(), 0);
        assert_eq!(counts(3, 0, 3).health(), 0);
    }
}
