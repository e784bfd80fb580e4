//! A project at a glance (`GET /api/admin/projects/{projectId}/status`): its events per day
//! over the last year, its keys, members and segments, its health, how many of its flags are
//! stale or potentially stale, and where its flags are in their lifecycle.

use std::collections::BTreeMap;

use chrono::{DateTime, Months, Utc};

use super::ToggleAdmin;
use super::keys::all_keys;
use super::project_health::{FlagAge, StaleCounts};
use super::reader::Reader;
use super::records::{FeatureRecord, decode_opt, project_key, project_not_found};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{
    ActivityCount, ArchivedSummary, KeyAccess, LifecycleEntry, LifecycleStage, LifecycleSummary,
    Project, ProjectHealthNow, ProjectResources, ProjectStatus, Segment, StageSummary, StaleFlags,
};
use crate::store::{Collection, EventQuery};

/// How many events one read of the log brings.
const PAGE: usize = 1000;

/// A day, in milliseconds.
const DAY_MILLIS: f64 = 86_400_000.0;

impl ToggleAdmin {
    /// The status of `project` (`GET /api/admin/projects/{projectId}/status`, Unleash's
    /// `projectStatusSchema`), computed now:
    ///
    /// * `activityCountByDate`: how many events the project recorded each day (UTC) of the
    ///   last year, oldest first, days without any left out;
    /// * `resources`: the client and frontend keys naming it (keys for every project not
    ///   counted, as in Unleash), the users holding a role in it (directly or through a
    ///   group), the segments that belong to it;
    /// * `health.current`: its health rating, as
    ///   [`project_health_report`](Self::project_health_report) computes it;
    /// * `staleFlags.total`: its flags that are not archived and are stale or potentially
    ///   stale (older than their feature type's lifetime);
    /// * `lifecycleSummary`: how many of its flags that are not archived are in each stage
    ///   now (their last stage, as [`feature_lifecycle`](Self::feature_lifecycle) derives
    ///   it), how many are archived (and in the last 30 days), and for each stage the
    ///   average number of days its flags (archived ones included) spent in it before
    ///   entering the next, rounded half away from zero; `null` when none left it.
    ///
    /// Any admin-API key may read it, as any project read; an unknown project →
    /// [`Error::NotFound`](crate::Error::NotFound).
    pub async fn project_status(&self, caller: &Caller, project: &str) -> Result<ProjectStatus> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let pkey = project_key(project);
        decode_opt::<Project>(&pkey, view.get(&pkey).await?.as_ref())?
            .ok_or_else(|| project_not_found(project))?;
        let now = Utc::now();
        let lifecycles = self.lifecycles_in(reader, |f| f.project == project).await?;
        let counts = StaleCounts::of(
            lifecycles
                .iter()
                .filter(|(f, _)| !f.archived)
                .map(|(f, _)| FlagAge {
                    stale: f.stale,
                    feature_type: &f.feature_type,
                    created_at: Some(f.created_at),
                }),
            &self.lifetimes_in(reader).await?,
            now,
        );
        let api_tokens = all_keys(reader)
            .await?
            .iter()
            .filter(|(_, _, info)| {
                matches!(&info.access, KeyAccess::Client { projects, .. }
                    if projects.iter().any(|p| p == project))
            })
            .count() as u64;
        let (_, segments) = reader.list_decoded::<Segment>(Collection::Segments).await?;
        let segments = segments
            .iter()
            .filter(|s| s.project.as_deref() == Some(project))
            .count() as u64;
        Ok(ProjectStatus {
            activity_count_by_date: self.activity_by_date(project, now).await?,
            resources: ProjectResources {
                api_tokens,
                members: self.members_in(reader, project).await?,
                segments,
            },
            health: ProjectHealthNow {
                current: counts.health(),
            },
            lifecycle_summary: lifecycle_summary(&lifecycles, now),
            stale_flags: StaleFlags {
                total: counts.stale + counts.potentially_stale,
            },
        })
    }

    /// How many events `project` recorded each day (UTC) of the year before `now`, oldest
    /// first. Reads the project's events newest first until one is older.
    async fn activity_by_date(
        &self,
        project: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<ActivityCount>> {
        let since = now.checked_sub_months(Months::new(12)).unwrap_or(now);
        let mut days: BTreeMap<String, u64> = BTreeMap::new();
        let mut query = EventQuery::newest(PAGE).project(project);
        loop {
            let page = self.store.query_events(&query).await?;
            let full = page.events.len() >= query.limit;
            let Some(last) = page.events.last().map(|e| e.id) else {
                break;
            };
            let mut older = false;
            for event in &page.events {
                if event.event.created_at < since {
                    older = true;
                    continue;
                }
                *days
                    .entry(event.event.created_at.date_naive().to_string())
                    .or_default() += 1;
            }
            if older || !full {
                break;
            }
            query = query.before(last);
        }
        Ok(days
            .into_iter()
            .map(|(date, count)| ActivityCount { date, count })
            .collect())
    }
}

/// Where the flags of `lifecycles` (a project's, archived ones included, each with the
/// stages it went through) are in their lifecycle at `now` (see
/// [`ToggleAdmin::project_status`]).
fn lifecycle_summary(
    lifecycles: &[(FeatureRecord, Vec<LifecycleEntry>)],
    now: DateTime<Utc>,
) -> LifecycleSummary {
    let stages = [
        LifecycleStage::Initial,
        LifecycleStage::PreLive,
        LifecycleStage::Live,
        LifecycleStage::Completed,
    ];
    let mut current = [0u64; 4];
    let mut durations: [Vec<f64>; 4] = Default::default();
    let mut archived = ArchivedSummary {
        current_flags: 0,
        last30_days: 0,
    };
    let slot = |stage: LifecycleStage| stages.iter().position(|s| *s == stage);
    for (record, entries) in lifecycles {
        if record.archived {
            archived.current_flags += 1;
            if record
                .archived_at
                .is_some_and(|at| at >= now - chrono::Duration::days(30))
            {
                archived.last30_days += 1;
            }
        } else if let Some(i) = entries.last().and_then(|e| slot(e.stage)) {
            current[i] += 1;
        }
        // Time in a stage: until the next stage was entered (a stage entered at the same
        // moment is no next one).
        for entry in entries {
            let Some(i) = slot(entry.stage) else {
                continue;
            };
            let next = entries
                .iter()
                .map(|e| e.entered_stage_at)
                .filter(|at| *at > entry.entered_stage_at)
                .min();
            if let Some(next) = next {
                let millis = (next - entry.entered_stage_at).num_milliseconds() as f64;
                durations[i].push(millis / DAY_MILLIS);
            }
        }
    }
    let summary = |i: usize| StageSummary {
        average_days: (!durations[i].is_empty())
            .then(|| (durations[i].iter().sum::<f64>() / durations[i].len() as f64).round()),
        current_flags: current[i],
    };
    LifecycleSummary {
        initial: summary(0),
        pre_live: summary(1),
        live: summary(2),
        completed: summary(3),
        archived,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, archived_days_ago: Option<i64>, now: DateTime<Utc>) -> FeatureRecord {
        FeatureRecord {
            name: name.to_owned(),
            project: "p".to_owned(),
            feature_type: "release".to_owned(),
            description: None,
            impression_data: false,
            stale: false,
            archived: archived_days_ago.is_some(),
            archived_at: archived_days_ago.map(|d| now - chrono::Duration::days(d)),
            created_at: now - chrono::Duration::days(100),
            created_by: None,
            collaborators: Vec::new(),
        }
    }

    fn entries(stages: &[(LifecycleStage, i64)], now: DateTime<Utc>) -> Vec<LifecycleEntry> {
        stages
            .iter()
            .map(|(stage, days_ago)| LifecycleEntry {
                stage: *stage,
                status: None,
                entered_stage_at: now - chrono::Duration::days(*days_ago),
            })
            .collect()
    }

    #[test]
    fn stages_now_and_the_average_days_spent_in_each() {
        use LifecycleStage::*;
        let now = Utc::now();
        let lifecycles = vec![
            // 10 days initial, then pre-live since.
            (
                record("a", None, now),
                entries(&[(Initial, 30), (PreLive, 20)], now),
            ),
            // 3 days initial, 4 pre-live, live since.
            (
                record("b", None, now),
                entries(&[(Initial, 10), (PreLive, 7), (Live, 3)], now),
            ),
            // Initial only.
            (record("c", None, now), entries(&[(Initial, 1)], now)),
            // Archived 40 days ago after 20 days initial, and 5 days ago after 1.
            (
                record("d", Some(40), now),
                entries(&[(Initial, 60), (Archived, 40)], now),
            ),
            (
                record("e", Some(5), now),
                entries(&[(Initial, 6), (Archived, 5)], now),
            ),
        ];
        let summary = lifecycle_summary(&lifecycles, now);
        assert_eq!(summary.initial.current_flags, 1);
        assert_eq!(summary.pre_live.current_flags, 1);
        assert_eq!(summary.live.current_flags, 1);
        assert_eq!(summary.completed.current_flags, 0);
        // (10 + 3 + 20 + 1) / 4 = 8.5 → 9; pre-live: only b left it, after 4 days.
        assert_eq!(summary.initial.average_days, Some(9.0));
        assert_eq!(summary.pre_live.average_days, Some(4.0));
        assert_eq!(summary.live.average_days, None);
        assert_eq!(summary.completed.average_days, None);
        assert_eq!(
            summary.archived,
            ArchivedSummary {
                current_flags: 2,
                last30_days: 1
            }
        );
    }
}
