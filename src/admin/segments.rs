//! Segments: named constraint sets strategies attach by id (create, read, list).

use super::records::{
    SequenceRecord, decode_opt, encode, project_key, segment_key, segment_sequence_key,
};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{Issues, check_constraints};
use crate::model::Permission;
use crate::model::{NewSegment, Segment};
use crate::names::{MAX_NAME, display_name_problem};
use crate::store::Revision;

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
        let length = segment.name.chars().count();
        if !(1..=100).contains(&length) || segment.name.trim().is_empty() {
            return Err(Error::invalid_at(
                "name",
                "a segment name has 1–100 characters",
            ));
        }
        if let Some(problem) = display_name_problem(&segment.name, MAX_NAME) {
            return Err(Error::invalid_at(
                "name",
                format!("a segment name {problem}"),
            ));
        }
        let raw = serde_json::to_value(&segment.constraints).map_err(|e| {
            Error::invalid_at(
                "constraints",
                format!("the constraints cannot be encoded: {e}"),
            )
        })?;
        let raw = &raw;
        self.change("create_segment", permit, |tx| {
            Box::pin(async move {
                let (_fields_rev, fields) = tx.reader().context_field_map().await?;
                let mut issues = Issues::default();
                let lookup = |name: &str| fields.get(name);
                let constraints = check_constraints(Some(raw), "constraints", &lookup, &mut issues);
                if let Some(error) = issues.into_error() {
                    return Err(error);
                }
                let (_segments_rev, existing) = tx.reader().segment_list().await?;
                if existing.iter().any(|s| s.name == segment.name) {
                    return Err(Error::name_exists(format!(
                        "A segment named \"{}\" already exists.",
                        segment.name
                    )));
                }
                if let Some(project) = &segment.project {
                    let key = project_key(project);
                    let [record] = tx.reader().read(std::array::from_ref(&key)).await?;
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
                    constraints: constraints.unwrap_or_default(),
                    created_at: Some(chrono::Utc::now()),
                };
                let key = segment_key(created.id);
                let value = encode(&key, &created)?;
                tx.expect(key.clone(), Revision::ABSENT)
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
