//! A feature environment as a variant change reads and writes it: only what the variant
//! operations need is decoded (the project's environments, the feature's project and
//! archived flag, the variant list); the rest of the record (its strategies) stays the stored
//! JSON text and is written back as it is.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::author::Author;
use super::event;
use super::reader::Reader;
use super::records::{
    decode_ref, encode, feature_environment_found, feature_environment_keys, revision_of,
};
use super::variant_writers::VariantsChange;
use crate::error::{Error, Result};
use crate::model::{Json, Variant};
use crate::store::{ChangeSet, Key, NewEvent, Revision, Versioned};

/// A feature environment as read for a change, with the revisions to commit against.
///
/// Only what the variant operations need is decoded: the project's environments, the
/// feature's project and archived flag (once), and the variant list; the rest of the feature
/// environment (its strategies) stays the stored JSON and is written back as it is.
pub(super) struct Target {
    feature_key: Key,
    feature_revision: Revision,
    pub(super) archived: bool,
    pub(super) fe_key: Key,
    fe_record: Option<Versioned>,
    project_key: Key,
    project_revision: Revision,
    environment_key: Key,
    environment_revision: Revision,
}

impl Target {
    /// Expect every record the decision read at the revision it read: a decision view may
    /// show any of them stale (see [`Store::decision_view`](crate::store::Store::decision_view)).
    fn expect_read(&self, changes: &mut ChangeSet) {
        changes
            .expect_revision(self.fe_key.clone(), revision_of(self.fe_record.as_ref()))
            .expect_revision(self.feature_key.clone(), self.feature_revision)
            .expect_revision(self.project_key.clone(), self.project_revision)
            .expect_revision(self.environment_key.clone(), self.environment_revision);
    }

    /// The change set that writes `list` as the variants of the feature environment
    /// `stored` (its `enabled` and strategies written back as they were), expecting every
    /// record the decision read, with `events`.
    pub(super) fn write_list(
        &self,
        stored: &StoredFeatureEnvironment<'_>,
        list: &RawValue,
        events: Vec<NewEvent>,
    ) -> Result<ChangeSet> {
        let record = encode(
            &self.fe_key,
            &UpdatedFeatureEnvironment {
                enabled: stored.enabled,
                variants: list,
                strategies: match stored.strategies {
                    Some(strategies) => strategies,
                    None => empty_list(),
                },
            },
        )?;
        let mut changes = ChangeSet::new();
        self.expect_read(&mut changes);
        changes.put(self.fe_key.clone(), record);
        for event in events {
            changes.event(event);
        }
        Ok(changes)
    }

    /// The `feature-environment-variants-updated` event of `author` changing the list from
    /// `old` to `new` in `names` (project, feature, environment).
    pub(super) fn variants_event(
        &self,
        author: &Author,
        (project, feature, environment): (&str, &str, &str),
        old: &RawValue,
        new: &RawValue,
    ) -> Result<NewEvent> {
        let pre_data = encode(&self.fe_key, &VariantsEventData { variants: old })?;
        let data = encode(&self.fe_key, &VariantsEventData { variants: new })?;
        Ok(event(
            author,
            "feature-environment-variants-updated",
            Some(project),
            Some(feature),
            Some(environment),
            Some(pre_data),
            Some(data),
        ))
    }

    /// The stored feature environment, its lists still JSON text (`[]` lists when it has no
    /// record yet: records are written on first change).
    pub(super) fn stored(&self) -> Result<StoredFeatureEnvironment<'_>> {
        match &self.fe_record {
            Some(record) => decode_ref(&self.fe_key, &record.value),
            None => Ok(StoredFeatureEnvironment::default()),
        }
    }
}

/// The JSON text `[]`.
fn empty_list() -> &'static RawValue {
    const EMPTY: &str = "[]";
    // `[]` is valid JSON, so this never fails; a `null` would be as harmless.
    serde_json::from_str(EMPTY).unwrap_or(RawValue::NULL)
}

/// A stored feature environment (the facade's `FeatureEnvironmentRecord`), borrowed: the
/// variant list and the strategies stay the stored JSON text. A patch then parses only the
/// variant list, and writes the strategies back as they were without decoding them.
#[derive(Deserialize, Default)]
pub(super) struct StoredFeatureEnvironment<'a> {
    #[serde(default)]
    enabled: bool,
    #[serde(borrow, default)]
    variants: Option<&'a RawValue>,
    #[serde(borrow, default)]
    strategies: Option<&'a RawValue>,
}

impl<'a> StoredFeatureEnvironment<'a> {
    pub(super) fn variants(&self) -> &'a RawValue {
        match self.variants {
            Some(list) => list,
            None => empty_list(),
        }
    }
}

/// A feature environment record as written by a variant change.
#[derive(Serialize)]
struct UpdatedFeatureEnvironment<'a> {
    enabled: bool,
    variants: &'a RawValue,
    strategies: &'a RawValue,
}

/// The data of a `feature-environment-variants-updated` event: `{"variants": […]}`.
#[derive(Serialize)]
struct VariantsEventData<'a> {
    variants: &'a RawValue,
}

/// Read a feature environment for a change, with the 404s in a fixed order: project,
/// feature (in that project), environment, environment of the project.
pub(super) async fn read_target(
    reader: Reader<'_>,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<Target> {
    let keys = feature_environment_keys(project, feature, environment);
    let records = reader.read(&keys).await?;
    let archived = feature_environment_found(project, feature, environment, &keys, &records)?;
    let [
        project_record,
        feature_record,
        environment_record,
        fe_record,
    ] = records;
    let project_revision = revision_of(project_record.as_ref());
    let feature_revision = revision_of(feature_record.as_ref());
    let environment_revision = revision_of(environment_record.as_ref());
    let [project_key, feature_key, environment_key, fe_key] = keys;
    Ok(Target {
        feature_key,
        feature_revision,
        archived,
        fe_key,
        fe_record,
        project_key,
        project_revision,
        environment_key,
        environment_revision,
    })
}

/// The list `change` makes of `list` (the stored JSON text of the record at `key`): the
/// normalised variants, and as JSON text.
pub(super) fn next_list(
    key: &Key,
    list: &RawValue,
    change: VariantsChange<'_>,
) -> Result<(Vec<Variant>, Json)> {
    let variants = match change {
        VariantsChange::Patch(patch) => {
            let current: Value = decode_text(key, list)?;
            let patched = crate::variants::apply_patch_to(current, patch)?;
            crate::variants::normalise_variants(&patched)?
        }
        VariantsChange::Replace(list) => crate::variants::normalise_variants(list)?,
    };
    let text = encode(key, &variants)?;
    Ok((variants, text))
}

/// Decode a member of the record at `key` from its stored JSON text.
pub(super) fn decode_text<'a, T: Deserialize<'a>>(key: &Key, text: &'a RawValue) -> Result<T> {
    serde_json::from_str(text.get()).map_err(|source| {
        Error::Store(crate::store::StoreError::Encoding {
            what: format!("record {key}"),
            source,
        })
    })
}
