//! A feature's lifecycle: the stages it went through (`initial`, `pre-live`, `live`,
//! `completed`, `archived`), marking it completed and taking that back, and how many
//! features are in each stage.
//!
//! Only the completion is stored (its status and when); the other stages are derived, so
//! they can never disagree with the feature and its event log:
//!
//! * `initial`: entered when the feature was created, or last revived (a revived feature
//!   starts its lifecycle again, as in Unleash);
//! * `pre-live`: entered when the feature was first turned on in any environment since;
//! * `live`: entered when it was first turned on in an environment of type `production`;
//! * `completed`: entered when it was marked completed (until that is taken back);
//! * `archived`: entered when it was archived.
//!
//! "Turned on" is read from the `feature-environment-enabled` events every path that turns
//! a feature on writes (an environment that is on without such an event counts from the
//! start of the lifecycle). Unleash 6.10.1 moves a feature to `pre-live` and `live` when its
//! SDKs report metrics from such environments; here a feature is live once it is on in
//! production, which is what those metrics would show, without depending on SDK traffic.
//! Stages stay entered: a feature turned off again is still `live`.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::reader::Reader;
use super::records::{
    FeatureEnvironmentRecord, FeatureLifecycleRecord, FeatureRecord, SEP, decode,
    feature_lifecycle_key,
};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::Result;
use crate::model::{
    Environment, LifecycleCompletion, LifecycleCount, LifecycleEntry, LifecycleStage, Permission,
};
use crate::store::{Collection, Event, EventQuery, Json, Key};

/// The event every path that turns a feature on in an environment writes.
const ENABLED: &str = "feature-environment-enabled";

/// The event of a revival, which starts a feature's lifecycle again.
const REVIVED: &str = "feature-revived";

/// How many events one read of the log asks for.
const PAGE: usize = 1000;

impl ToggleAdmin {
    /// The stages `feature` of `project` went through, in order, each with when it entered
    /// it (and, for `completed`, its status): `GET
    /// /api/admin/projects/{projectId}/features/{featureName}/lifecycle`. Any valid key may
    /// read it; archived features too.
    ///
    /// Only the completion is stored; the other stages are derived: `initial` when the
    /// feature was created (or last revived: a revived feature starts again, as in Unleash),
    /// `pre-live` when it was first turned on in any environment since, `live` when first
    /// turned on in an environment of type `production` (Unleash waits for SDK metrics from
    /// such an environment), `completed` while it is marked so, `archived` while archived.
    /// "Turned on" is read from the `feature-environment-enabled` events; a stage, once
    /// entered, stays (a feature turned off again is still `live`).
    pub async fn feature_lifecycle(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
    ) -> Result<Vec<LifecycleEntry>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let (record, completion): (FeatureRecord, Option<FeatureLifecycleRecord>) = reader
            .feature_with(project, feature, feature_lifecycle_key(feature))
            .await?;
        let types = environment_types(reader).await?;
        let on_now = reader
            .list(Collection::FeatureEnvironments, &format!("{feature}{SEP}"))
            .await?;
        let mut enabled_now = Vec::new();
        for (id, stored) in &on_now.records {
            let key = Key::new(Collection::FeatureEnvironments, id.clone());
            let fe: FeatureEnvironmentRecord = decode(&key, &stored.value)?;
            if fe.enabled
                && let Some((_, environment)) = id.split_once(SEP)
            {
                enabled_now.push(environment.to_owned());
            }
        }
        let mut history = Vec::new();
        for event_type in [ENABLED, REVIVED] {
            history.extend(
                self.feature_events(
                    EventQuery::newest(PAGE)
                        .feature(feature)
                        .event_type(event_type),
                )
                .await?,
            );
        }
        Ok(stages(
            &record,
            &types,
            &enabled_now,
            &history,
            completion.as_ref(),
        ))
    }

    /// How many features (archived included) are in each stage now: `GET
    /// /api/admin/lifecycle/count`. Any valid key may read it.
    pub async fn lifecycle_count(&self, caller: &Caller) -> Result<LifecycleCount> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let mut count = LifecycleCount::default();
        for (_, entries) in self
            .lifecycles_in(Reader::View(view.as_ref()), |_| true)
            .await?
        {
            let slot = match entries.last().map(|e| e.stage) {
                Some(LifecycleStage::PreLive) => &mut count.pre_live,
                Some(LifecycleStage::Live) => &mut count.live,
                Some(LifecycleStage::Completed) => &mut count.completed,
                Some(LifecycleStage::Archived) => &mut count.archived,
                Some(LifecycleStage::Initial) | None => &mut count.initial,
            };
            *slot += 1;
        }
        Ok(count)
    }

    /// The stages each feature that `wanted` selects (archived ones included) went through,
    /// as [`feature_lifecycle`](Self::feature_lifecycle) shows them, with its record; read
    /// through `reader`, and the event log.
    pub(super) async fn lifecycles_in(
        &self,
        reader: Reader<'_>,
        wanted: impl Fn(&FeatureRecord) -> bool,
    ) -> Result<Vec<(FeatureRecord, Vec<LifecycleEntry>)>> {
        let (_, features) = reader
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let features: Vec<FeatureRecord> = features.into_iter().filter(|f| wanted(f)).collect();
        if features.is_empty() {
            return Ok(Vec::new());
        }
        let types = environment_types(reader).await?;
        let mut enabled_now: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (id, stored) in &reader
            .list(Collection::FeatureEnvironments, "")
            .await?
            .records
        {
            let key = Key::new(Collection::FeatureEnvironments, id.clone());
            let fe: FeatureEnvironmentRecord = decode(&key, &stored.value)?;
            if fe.enabled
                && let Some((feature, environment)) = id.split_once(SEP)
            {
                enabled_now
                    .entry(feature.to_owned())
                    .or_default()
                    .push(environment.to_owned());
            }
        }
        let mut completions: BTreeMap<String, FeatureLifecycleRecord> = BTreeMap::new();
        for (id, stored) in &reader
            .list(Collection::FeatureLifecycles, "")
            .await?
            .records
        {
            completions.insert(
                id.clone(),
                decode(&feature_lifecycle_key(id), &stored.value)?,
            );
        }
        let mut history: BTreeMap<String, Vec<Event>> = BTreeMap::new();
        for event_type in [ENABLED, REVIVED] {
            for event in self
                .feature_events(EventQuery::newest(PAGE).event_type(event_type))
                .await?
            {
                if let Some(feature) = event.event.feature_name.clone() {
                    history.entry(feature).or_default().push(event);
                }
            }
        }
        Ok(features
            .into_iter()
            .map(|record| {
                let entries = stages(
                    &record,
                    &types,
                    enabled_now.get(&record.name).map_or(&[][..], Vec::as_slice),
                    history.get(&record.name).map_or(&[][..], Vec::as_slice),
                    completions.get(&record.name),
                );
                (record, entries)
            })
            .collect())
    }

    /// Mark `feature` of `project` completed, `kept` or `discarded` (with an optional
    /// `statusValue`): `POST …/lifecycle/complete`. Needs `UPDATE_FEATURE` in the project.
    /// Completing it again replaces the status (and keeps when it was first completed);
    /// the same status again writes nothing. Event `feature-completed` with the status.
    pub async fn complete_feature<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        completion: &LifecycleCompletion,
    ) -> Result<()> {
        let permit = self
            .admit(authority.into(), &lifecycle_needs(project))
            .await?;
        self.change("complete_feature", permit, |tx| {
            Box::pin(async move {
                let key = feature_lifecycle_key(feature);
                let (_, current): (_, Option<FeatureLifecycleRecord>) = tx
                    .reader()
                    .feature_with(project, feature, key.clone())
                    .await?;
                let next = FeatureLifecycleRecord {
                    completed_at: current.as_ref().map_or_else(Utc::now, |c| c.completed_at),
                    status: completion.status,
                    status_value: completion.status_value.clone(),
                };
                if current.as_ref() == Some(&next) {
                    return Ok(());
                }
                let record = super::records::encode(&key, &next)?;
                tx.put(key, record).record(
                    "feature-completed",
                    Some(project),
                    Some(feature),
                    None,
                    None,
                    Some(Json::of(completion)),
                );
                Ok(())
            })
        })
        .await
    }

    /// Take back the completion of `feature` of `project`: `POST …/lifecycle/uncomplete`.
    /// Needs `UPDATE_FEATURE` in the project. A feature not completed changes nothing;
    /// otherwise event `feature-uncompleted`.
    pub async fn uncomplete_feature<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
    ) -> Result<()> {
        let permit = self
            .admit(authority.into(), &lifecycle_needs(project))
            .await?;
        self.change("uncomplete_feature", permit, |tx| {
            Box::pin(async move {
                let key = feature_lifecycle_key(feature);
                let (_, current): (_, Option<FeatureLifecycleRecord>) = tx
                    .reader()
                    .feature_with(project, feature, key.clone())
                    .await?;
                let Some(current) = current else {
                    return Ok(());
                };
                tx.delete(key).record(
                    "feature-uncompleted",
                    Some(project),
                    Some(feature),
                    None,
                    Some(Json::of(&LifecycleCompletion {
                        status: current.status,
                        status_value: current.status_value,
                    })),
                    None,
                );
                Ok(())
            })
        })
        .await
    }

    /// Every event `query` matches, newest first, read a page at a time.
    async fn feature_events(&self, query: EventQuery) -> Result<Vec<Event>> {
        let mut query = query;
        let mut out = Vec::new();
        loop {
            let page = self.store.query_events(&query).await?;
            let Some(last) = page.events.last().map(|e| e.id) else {
                return Ok(out);
            };
            let full = page.events.len() >= query.limit;
            out.extend(page.events);
            if !full {
                return Ok(out);
            }
            query = query.before(last);
        }
    }
}

/// The earlier of `slot` and `at`.
fn earliest(slot: Option<DateTime<Utc>>, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    Some(slot.map_or(at, |s| s.min(at)))
}

/// `UPDATE_FEATURE` in `project`.
fn lifecycle_needs(project: &str) -> [Need<'_>; 1] {
    [Need::project(Permission::UpdateFeature, project)]
}

/// Every environment's type, by name.
async fn environment_types(reader: Reader<'_>) -> Result<BTreeMap<String, String>> {
    let (_, environments) = reader
        .list_decoded::<Environment>(Collection::Environments)
        .await?;
    Ok(environments
        .into_iter()
        .map(|e| (e.name, e.environment_type))
        .collect())
}

/// The stages of `record` (see the [module docs](self)): `types` the environments' types,
/// `enabled_now` the environments it is on in, `history` its `feature-environment-enabled`
/// and `feature-revived` events (others are ignored), `completion` what is stored.
fn stages(
    record: &FeatureRecord,
    types: &BTreeMap<String, String>,
    enabled_now: &[String],
    history: &[Event],
    completion: Option<&FeatureLifecycleRecord>,
) -> Vec<LifecycleEntry> {
    let of_this = |e: &&Event| e.event.feature_name.as_deref() == Some(record.name.as_str());
    // A feature deleted and created again under the same name starts afresh, and so does a
    // revived one.
    // Stores may keep event times to the microsecond only: an event of the same moment as
    // the feature's creation must not fall before it.
    let slack = chrono::Duration::milliseconds(1);
    let start = history
        .iter()
        .filter(of_this)
        .filter(|e| {
            e.event.event_type == REVIVED && e.event.created_at >= record.created_at - slack
        })
        .map(|e| e.event.created_at)
        .max()
        .unwrap_or(record.created_at);
    let is_production = |environment: &str| {
        types
            .get(environment)
            .is_some_and(|t| t.as_str() == "production")
    };
    let mut first_on: Option<DateTime<Utc>> = None;
    let mut first_live: Option<DateTime<Utc>> = None;
    for event in history
        .iter()
        .filter(of_this)
        .filter(|e| e.event.event_type == ENABLED && e.event.created_at >= start - slack)
    {
        let at = event.event.created_at.max(start);
        first_on = earliest(first_on, at);
        if event
            .event
            .environment
            .as_deref()
            .is_some_and(is_production)
        {
            first_live = earliest(first_live, at);
        }
    }
    // On without an event to say since when: since the lifecycle started.
    for environment in enabled_now {
        first_on = first_on.or(Some(start));
        if is_production(environment) {
            first_live = first_live.or(Some(start));
        }
    }
    // Live is also on: pre-live is entered no later than live.
    if let Some(live) = first_live {
        first_on = earliest(first_on, live);
    }
    let entry = |stage, at| LifecycleEntry {
        stage,
        status: None,
        entered_stage_at: at,
    };
    let mut entries = vec![entry(LifecycleStage::Initial, start)];
    if let Some(at) = first_on {
        entries.push(entry(LifecycleStage::PreLive, at));
    }
    if let Some(at) = first_live {
        entries.push(entry(LifecycleStage::Live, at));
    }
    if let Some(completion) = completion {
        entries.push(LifecycleEntry {
            stage: LifecycleStage::Completed,
            status: Some(completion.status),
            entered_stage_at: completion.completed_at,
        });
    }
    if record.archived {
        entries.push(entry(
            LifecycleStage::Archived,
            record.archived_at.unwrap_or(start),
        ));
    }
    entries
}
