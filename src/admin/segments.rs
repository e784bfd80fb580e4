//! Segments: named constraint sets strategies attach by id (create, read, list, update,
//! delete, the strategies using one, the segments of a strategy, attaching them to a
//! strategy).

use super::reader::Reader;
use super::records::{
    FeatureEnvironmentRecord, FeatureRecord, SEP, SequenceRecord, decode, decode_opt, encode,
    feature_environment_key, feature_key, project_key, segment_key, segment_sequence_key,
};
use super::records::{flag_list, in_use, use_details};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{Issues, check_constraints};
use crate::model::{NewSegment, Segment};
use crate::model::{Permission, StrategySegments, StrategyUse};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::{Collection, Json, Key, Revision};

impl ToggleAdmin {
    /// Create a segment. Needs `CREATE_SEGMENT` (in the segment's project when it has one).
    ///
    /// The name must be 1–100 characters and not taken by another segment
    /// ([`Error::NameExists`]); the project, when given, must exist; constraints are checked
    /// per operator against the context fields as for strategies (every problem listed). The
    /// id is the next of a counter, starting at 1. Event `segment-created`.
    pub async fn create_segment(&self, caller: &Caller, segment: &NewSegment) -> Result<Segment> {
        let check = match &segment.project {
            Some(project) => Need::project(Permission::CreateSegment, project),
            None => Need::root(Permission::CreateSegment),
        };
        let permit = self.permit(caller, &[check]).await?;
        let raw = segment_input(segment)?;
        let raw = &raw;
        self.change("create_segment", permit, |tx| {
            Box::pin(async move {
                let constraints = check_segment(tx.reader(), segment, raw, None).await?;
                let seq_key = segment_sequence_key();
                let [seq_record] = tx.reader().read(std::array::from_ref(&seq_key)).await?;
                let mut sequence: SequenceRecord =
                    decode_opt(&seq_key, seq_record.as_ref())?.unwrap_or_default();
                sequence.last += 1;
                let created = Segment {
                    id: sequence.last,
                    name: segment.name.clone(),
                    description: segment.description.clone(),
                    project: segment.project.clone(),
                    constraints,
                    created_at: Some(chrono::Utc::now()),
                    created_by: Some(tx.actor().to_owned()),
                };
                let key = segment_key(created.id);
                let value = encode(&key, &created)?;
                tx.expect_revision(key.clone(), Revision::ABSENT)
                    .put(seq_key.clone(), encode(&seq_key, &sequence)?)
                    .put(key, value.clone())
                    .record(
                        "segment-created",
                        created.project.as_deref(),
                        None,
                        None,
                        None,
                        Some(value),
                    );
                Ok(created)
            })
        })
        .await
    }

    /// Every segment, by id. Any valid key may read them.
    pub async fn segments(&self, caller: &Caller) -> Result<Vec<Segment>> {
        self.require(caller, &[]).await?;
        Ok(self.reader().segment_list().await?.1)
    }

    /// The segment `id`.
    pub async fn segment(&self, caller: &Caller, id: i64) -> Result<Segment> {
        self.require(caller, &[]).await?;
        let key = segment_key(id);
        decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .ok_or_else(|| Error::not_found(format!("There's no segment with id {id}.")))
    }
}

impl ToggleAdmin {
    /// Replace the segment `id`'s name, description, project and constraints. Needs
    /// `UPDATE_SEGMENT`.
    ///
    /// The rules of [`create_segment`](Self::create_segment) (the name may stay the
    /// segment's own). A segment moved into a project must not be used by strategies of
    /// flags in other projects (400 naming them), as Unleash checks. Event `segment-updated`
    /// with the segment before and after; an update that changes nothing writes nothing.
    pub async fn update_segment(
        &self,
        caller: &Caller,
        id: i64,
        segment: &NewSegment,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateSegment)])
            .await?;
        let raw = segment_input(segment)?;
        let raw = &raw;
        self.change("update_segment", permit, |tx| {
            Box::pin(async move {
                let key = segment_key(id);
                let current: Segment =
                    decode_opt(&key, tx.get(&key).await?.as_ref())?.ok_or_else(|| segment_not_found(id))?;
                let constraints = check_segment(tx.reader(), segment, raw, Some(id)).await?;
                if let Some(project) = &segment.project {
                    let elsewhere: Vec<StrategyUse> = tx.reader().strategy_uses(|s| {
                        s.segments.contains(&id)
                    })
                    .await?
                    .into_iter()
                    .filter(|u| &u.project_id != project)
                    .collect();
                    if !elsewhere.is_empty() {
                        return Err(Error::validation(
                            format!(
                                "The segment is used by strategies of flags outside project \"{project}\": {}.",
                                flag_list(&elsewhere)
                            ),
                            use_details(&elsewhere),
                        ));
                    }
                }
                let updated = Segment {
                    id,
                    name: segment.name.clone(),
                    description: segment.description.clone(),
                    project: segment.project.clone(),
                    constraints,
                    created_at: current.created_at,
                    created_by: current.created_by.clone(),
                };
                tx.replace(&key, &current, &updated, "segment-updated", updated.project.as_deref())?;
                Ok(())
            })
        })
        .await
    }

    /// Delete the segment `id`. Needs `UPDATE_SEGMENT` (which holds Unleash's
    /// `DELETE_SEGMENT` here).
    ///
    /// Refused while any flag's strategy uses it: [`Error::InUse`] (409 `ConflictError`)
    /// naming each flag, strategy and environment in `details`, where Unleash 6.10.1 answers
    /// a bare 409 without saying which. The check and the deletion are one commit: a writer
    /// attaching the segment meanwhile makes one of the two retry and see the other. Event
    /// `segment-deleted` with the segment as `preData`.
    pub async fn delete_segment(&self, caller: &Caller, id: i64) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateSegment)])
            .await?;
        self.change("delete_segment", permit, |tx| {
            Box::pin(async move {
                let key = segment_key(id);
                let record = tx.get(&key).await?;
                let current: Segment =
                    decode_opt(&key, record.as_ref())?.ok_or_else(|| segment_not_found(id))?;
                let uses = tx
                    .reader()
                    .strategy_uses(|s| s.segments.contains(&id))
                    .await?;
                if !uses.is_empty() {
                    return Err(in_use(&format!("The segment \"{}\"", current.name), &uses));
                }
                tx.delete(key.clone()).record(
                    "segment-deleted",
                    current.project.as_deref(),
                    None,
                    None,
                    Some(encode(&key, &current)?),
                    None,
                );
                Ok(())
            })
        })
        .await
    }

    /// The flags' strategies that use the segment `id` (404 when there is no such
    /// segment), by project, flag, environment and strategy id.
    pub async fn segment_strategies(&self, caller: &Caller, id: i64) -> Result<Vec<StrategyUse>> {
        self.require(caller, &[]).await?;
        let key = segment_key(id);
        let [record] = self.reader().read(std::array::from_ref(&key)).await?;
        if record.is_none() {
            return Err(segment_not_found(id));
        }
        self.reader()
            .strategy_uses(|s| s.segments.contains(&id))
            .await
    }

    /// The segments the flag strategy `strategy_id` uses, by id: `GET
    /// /api/admin/segments/strategies/{strategyId}`. Any valid key may read them; a strategy
    /// that does not exist uses none (as in Unleash, no 404).
    pub async fn strategy_segments(
        &self,
        caller: &Caller,
        strategy_id: &str,
    ) -> Result<Vec<Segment>> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let reader = Reader::View(view.as_ref());
        let listing = reader.list(Collection::FeatureEnvironments, "").await?;
        let mut ids: Vec<i64> = Vec::new();
        for (id, record) in &listing.records {
            let key = Key::new(Collection::FeatureEnvironments, id.clone());
            let value: FeatureEnvironmentRecord = decode(&key, &record.value)?;
            if let Some(strategy) = value
                .strategies
                .iter()
                .find(|s| s.id.as_deref() == Some(strategy_id))
            {
                ids.clone_from(&strategy.segments);
                break;
            }
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (_, segments) = reader.segment_list().await?;
        Ok(segments
            .into_iter()
            .filter(|s| ids.contains(&s.id))
            .collect())
    }

    /// Whether `name` is free for a new segment: `Ok` when it is, [`Error::NameExists`]
    /// when a segment has it, a validation error when it is not a valid segment name.
    pub async fn validate_segment_name(&self, caller: &Caller, name: &str) -> Result<()> {
        self.require(caller, &[]).await?;
        check_segment_name(name)?;
        let (_, existing) = self.reader().segment_list().await?;
        if existing.iter().any(|s| s.name == name) {
            return Err(segment_name_taken(name));
        }
        Ok(())
    }

    /// Make the segments of the strategy `strategy_id` (of a flag of `project_id` in
    /// `environment_id`) exactly `segment_ids`. Needs `UPDATE_FEATURE_STRATEGY` in the
    /// project.
    ///
    /// Each segment must exist and be global or of the project (400 naming the first that is
    /// not, at `segmentIds[i]`); the strategy must exist there (404). Unleash 6.10.1 records
    /// no event for this change; here it is `feature-strategy-update` with the strategy
    /// before and after, as for any other change of a strategy. Attaching the segments the
    /// strategy has writes nothing.
    pub async fn set_strategy_segments(
        &self,
        caller: &Caller,
        input: &StrategySegments,
    ) -> Result<()> {
        let permit = self
            .permit(
                caller,
                &[Need::project(
                    Permission::UpdateFeatureStrategy,
                    &input.project_id,
                )],
            )
            .await?;
        let mut wanted: Vec<i64> = Vec::new();
        for id in &input.segment_ids {
            if !wanted.contains(id) {
                wanted.push(*id);
            }
        }
        let wanted = &wanted;
        self.change("set_strategy_segments", permit, |tx| {
            Box::pin(async move {
                let project = input.project_id.as_str();
                let environment = input.environment_id.as_str();
                let [project_record] = tx.read(&[project_key(project)]).await?;
                if project_record.is_none() {
                    return Err(super::records::project_not_found(project));
                }
                let (_, segments) = tx.reader().segment_list().await?;
                for (i, id) in input.segment_ids.iter().enumerate() {
                    match segments.iter().find(|s| s.id == *id) {
                        None => {
                            return Err(Error::invalid_at(
                                format!("segmentIds[{i}]"),
                                format!("there is no segment with id {id}"),
                            ));
                        }
                        Some(s) if s.project.as_deref().is_some_and(|p| p != project) => {
                            return Err(Error::invalid_at(
                                format!("segmentIds[{i}]"),
                                format!(
                                    "the segment \"{}\" (id {id}) belongs to project \"{}\", not \"{project}\"",
                                    s.name,
                                    s.project.as_deref().unwrap_or_default()
                                ),
                            ));
                        }
                        Some(_) => {}
                    }
                }
                let not_found = || {
                    Error::not_found(format!(
                        "There's no strategy with id \"{}\" in environment \"{environment}\" of project \"{project}\".",
                        input.strategy_id
                    ))
                };
                let listing = tx.list(Collection::FeatureEnvironments, "").await?;
                let mut found = None;
                for (id, record) in &listing.records {
                    let Some((feature, env)) = id.split_once(SEP) else {
                        continue;
                    };
                    if env != environment {
                        continue;
                    }
                    let key = Key::new(Collection::FeatureEnvironments, id.clone());
                    let value: FeatureEnvironmentRecord = decode(&key, &record.value)?;
                    if value
                        .strategies
                        .iter()
                        .any(|s| s.id.as_deref() == Some(input.strategy_id.as_str()))
                    {
                        found = Some((feature.to_owned(), value));
                        break;
                    }
                }
                let (feature, mut value) = found.ok_or_else(not_found)?;
                let fkey = feature_key(&feature);
                let flag: Option<FeatureRecord> = decode_opt(&fkey, tx.get(&fkey).await?.as_ref())?;
                if flag.is_none_or(|f| f.project != project) {
                    return Err(not_found());
                }
                let Some(strategy) = value
                    .strategies
                    .iter_mut()
                    .find(|s| s.id.as_deref() == Some(input.strategy_id.as_str()))
                else {
                    return Err(not_found());
                };
                if &strategy.segments == wanted {
                    return Ok(());
                }
                let before = Json::of(&*strategy);
                strategy.segments.clone_from(wanted);
                let after = Json::of(&*strategy);
                let key = feature_environment_key(&feature, environment);
                tx.put(key.clone(), encode(&key, &value)?).record(
                    "feature-strategy-update",
                    Some(project),
                    Some(&feature),
                    Some(environment),
                    Some(before),
                    Some(after),
                );
                Ok(())
            })
        })
        .await
    }
}

/// The 404 of a segment.
fn segment_not_found(id: i64) -> Error {
    Error::not_found(format!("There's no segment with id {id}."))
}

fn segment_name_taken(name: &str) -> Error {
    Error::name_exists(format!("A segment named \"{name}\" already exists."))
}

/// A segment's name: 1–100 characters, not blank, no control characters.
fn check_segment_name(name: &str) -> Result<()> {
    let length = name.chars().count();
    if !(1..=100).contains(&length) || name.trim().is_empty() {
        return Err(Error::invalid_at(
            "name",
            "a segment name has 1–100 characters",
        ));
    }
    if let Some(problem) = display_name_problem(name, MAX_NAME) {
        return Err(Error::invalid_at(
            "name",
            format!("a segment name {problem}"),
        ));
    }
    Ok(())
}

/// The checks of a segment's body that need no reading: its name; its constraints as JSON,
/// for [`check_segment`].
fn segment_input(segment: &NewSegment) -> Result<serde_json::Value> {
    check_segment_name(&segment.name)?;
    serde_json::to_value(&segment.constraints).map_err(|e| {
        Error::invalid_at(
            "constraints",
            format!("the constraints cannot be encoded: {e}"),
        )
    })
}

/// The checks of a segment's body against the store (through `reader`): its constraints
/// against the context fields, its name free (but for the segment `own`, when updating),
/// its project existing. Returns the constraints.
async fn check_segment(
    reader: Reader<'_>,
    segment: &NewSegment,
    raw: &serde_json::Value,
    own: Option<i64>,
) -> Result<Vec<crate::model::Constraint>> {
    let (_fields_rev, fields) = reader.context_field_map().await?;
    let mut issues = Issues::default();
    let lookup = |name: &str| fields.get(name);
    let constraints = check_constraints(Some(raw), "constraints", &lookup, &mut issues);
    if let Some(error) = issues.into_error() {
        return Err(error);
    }
    let (_segments_rev, existing) = reader.segment_list().await?;
    if existing
        .iter()
        .any(|s| s.name == segment.name && Some(s.id) != own)
    {
        return Err(segment_name_taken(&segment.name));
    }
    if let Some(project) = &segment.project {
        let key = project_key(project);
        let [record] = reader.read(std::array::from_ref(&key)).await?;
        if record.is_none() {
            // A reference in the body, not the resource addressed: a 400.
            return Err(Error::invalid_at(
                "project",
                format!(
                    "there is no project named {}",
                    serde_json::Value::from(project.as_str())
                ),
            ));
        }
    }
    Ok(constraints.unwrap_or_default())
}
