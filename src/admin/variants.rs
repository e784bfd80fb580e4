//! The variants of a feature in an environment: patch (the first operation of the
//! specification), replace, read.

use json_patch::Patch;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::reader::Reader;
use super::records::feature_environment_key;
use super::records::{
    decode_ref, encode, feature_environment_found, feature_environment_keys, revision_of,
};
use std::sync::Arc;

use tokio::sync::OwnedMutexGuard;

use super::variant_writers::{Outcome, Target as WriteTarget, VariantsChange, Writer, echo};
use super::{Authorised, Check, MAX_ATTEMPTS, ToggleAdmin, contention, event, stored_text};
use crate::auth::{Caller, Permission};
use crate::error::{Error, Result};
use crate::model::{FeatureVariants, Json, Variant};
use crate::store::{ChangeSet, Key, NewEvent, Revision, StoreError, Versioned};

/// The version of the feature-variants schema, sent as `version` (not a revision).
const VARIANTS_SCHEMA_VERSION: u32 = 1;

/// A feature environment as read for a change, with the revisions to commit against.
///
/// Only what the variant operations need is decoded: the project's environments, the
/// feature's project and archived flag (once), and the variant list; the rest of the feature
/// environment (its strategies) stays the stored JSON and is written back as it is.
struct Target {
    feature_key: Key,
    feature_revision: Revision,
    archived: bool,
    fe_key: Key,
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
    fn write_list(
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

    /// The `feature-environment-variants-updated` event of `caller` changing the list from
    /// `old` to `new` in `names` (project, feature, environment).
    fn variants_event(
        &self,
        caller: &Caller,
        (project, feature, environment): (&str, &str, &str),
        old: &RawValue,
        new: &RawValue,
    ) -> Result<NewEvent> {
        let pre_data = encode(&self.fe_key, &VariantsEventData { variants: old })?;
        let data = encode(&self.fe_key, &VariantsEventData { variants: new })?;
        Ok(event(
            caller,
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
    fn stored(&self) -> Result<StoredFeatureEnvironment<'_>> {
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
struct StoredFeatureEnvironment<'a> {
    #[serde(default)]
    enabled: bool,
    #[serde(borrow, default)]
    variants: Option<&'a RawValue>,
    #[serde(borrow, default)]
    strategies: Option<&'a RawValue>,
}

impl<'a> StoredFeatureEnvironment<'a> {
    fn variants(&self) -> &'a RawValue {
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

impl ToggleAdmin {
    /// Apply a JSON Patch (RFC 6902) to the variants of `feature` in `environment`, and return
    /// the resulting variants: `PATCH
    /// /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants`.
    ///
    /// Needs `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` in the project and environment.
    ///
    /// * The patch applies to the variant list itself (`/0`, `/-`, `/1/weight`), strictly as
    ///   RFC 6902 and all-or-nothing: an index past the end, a missing member, a path without
    ///   a leading `/` or a non-numeric index fails with a 400 `Could not apply provided
    ///   patch: …` naming the operation. (Unleash silently appends, ignores or adds instead.)
    /// * 404 when the project does not exist, the feature does not exist **in that project**
    ///   (Unleash ignores the project), the environment does not exist, or the project does
    ///   not have the environment; the message says which. An archived feature → 400 (Unleash
    ///   patches it).
    /// * The result is validated as a whole and every problem is listed with its path;
    ///   `weightType` defaults to `variable` (Unleash silently drops such a variant) and
    ///   `stickiness` to `default`. Weights are distributed and the list sorted exactly as
    ///   Unleash does.
    /// * One `feature-environment-variants-updated` event with the old and new lists is
    ///   committed with the change. Concurrent patches never lose an update: each commits
    ///   against the revision it read and re-reads on conflict. Changes of the same feature
    ///   environment that arrive together on one instance are applied one after the other
    ///   in arrival order and committed together (one commit, one event each), each answered
    ///   with the list its own change made.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toggle_admin::{MemoryStore, ToggleAdmin, model::{Environment, Project}, admin::NewFeature};
    /// # let admin = ToggleAdmin::new(MemoryStore::new());
    /// # let key = admin.bootstrap_admin_key("ops").await?;
    /// # let caller = admin.authenticate(Some(&key.secret)).await?;
    /// # admin.create_environment(&caller, &Environment {
    /// #     name: "production".into(), environment_type: "production".into(), ..Default::default()
    /// # }).await?;
    /// # admin.create_project(&caller, &Project {
    /// #     id: "shop".into(), name: "Shop".into(), environments: vec!["production".into()],
    /// #     ..Default::default()
    /// # }).await?;
    /// # admin.create_feature(&caller, "shop", &NewFeature { name: "checkout".into(), ..Default::default() }).await?;
    /// // The body as the HTTP API takes it; `decode_patch` refuses `test` and names the bad
    /// // operation.
    /// let patch = toggle_admin::variants::decode_patch(&serde_json::json!([
    ///     { "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0 } },
    ///     { "op": "add", "path": "/-", "value": { "name": "green", "weight": 0 } },
    /// ]))?;
    /// let result = admin.patch_variants(&caller, "shop", "checkout", "production", &patch).await?;
    /// // Weights are distributed as Unleash does: the variable variants share 1000.
    /// let weights: Vec<u32> = result.variants.iter().map(|v| v.weight).collect();
    /// assert_eq!(weights, [500, 500]);
    /// # Ok(()) }
    /// ```
    pub async fn patch_variants(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        patch: &Patch,
    ) -> Result<FeatureVariants> {
        let first = self
            .require_variants_permission(caller, project, environment)
            .await?;
        let change = VariantsChange::Patch(patch);
        self.change_variants(first, caller, project, feature, environment, change)
            .await
    }

    /// Replace the variants of `feature` in `environment`: `PUT …/variants`. The same
    /// permission, checks, validation, weighting, ordering and event as
    /// [`patch_variants`](Self::patch_variants).
    pub async fn set_variants(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        variants: &[Variant],
    ) -> Result<FeatureVariants> {
        let document = serde_json::to_value(variants)
            .map_err(|e| Error::invalid_at("", format!("the variants cannot be encoded: {e}")))?;
        self.set_variants_json(caller, project, feature, environment, &document)
            .await
    }

    /// [`set_variants`](Self::set_variants) with the list as raw JSON (the HTTP body), so
    /// that every problem in it can be reported with its path.
    pub async fn set_variants_json(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        variants: &Value,
    ) -> Result<FeatureVariants> {
        let first = self
            .require_variants_permission(caller, project, environment)
            .await?;
        let change = VariantsChange::Replace(variants);
        self.change_variants(first, caller, project, feature, environment, change)
            .await
    }

    /// The variants of `feature` in `environment`: `GET …/variants`. Any valid key may read
    /// them; the same 404s as [`patch_variants`](Self::patch_variants).
    pub async fn variants(
        &self,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
    ) -> Result<FeatureVariants> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let target = self
            .read_target(Reader::View(view.as_ref()), project, feature, environment)
            .await?;
        let stored = target.stored()?;
        Ok(FeatureVariants {
            version: VARIANTS_SCHEMA_VERSION,
            variants: decode_text(&target.fe_key, stored.variants())?,
        })
    }

    /// Decide whether `caller`, authenticated in this same request, may change variants of
    /// `project` in `environment`. It comes before the input is looked at (the HTTP order
    /// of checks: permission before body shape); the decision then serves the change's
    /// first attempt. The key's record is not read again: the decision rests on the record
    /// the authentication read, whose revision the commit expects (see
    /// [`require_as_authenticated`](Self::require_as_authenticated)).
    pub(crate) async fn require_variants_permission(
        &self,
        caller: &Caller,
        project: &str,
        environment: &str,
    ) -> Result<Authorised> {
        self.require_as_authenticated(caller, &variants_checks(project, environment))
            .await
    }

    /// Authenticate `secret` and decide its permission to change variants of `project` in
    /// `environment` (what [`require_variants_permission`](Self::require_variants_permission)
    /// decides), for the HTTP adapter. The key's record is the one a decision view shows
    /// ([`authenticate_to_commit`](Self::authenticate_to_commit)): the change commits with
    /// its revision as a precondition, so a key revoked or changed since is refused at the
    /// commit's retry. A refusal decided on that record is decided again on the store's
    /// current record when the two differ.
    pub(crate) async fn authorise_variants_change(
        &self,
        secret: Option<&str>,
        project: &str,
        environment: &str,
    ) -> Result<(Caller, Authorised)> {
        let caller = self.authenticate_to_commit(secret).await?;
        let refusal = match self
            .require_variants_permission(&caller, project, environment)
            .await
        {
            Ok(authorised) => return Ok((caller, authorised)),
            Err(refusal) => refusal,
        };
        let current = self.authenticate(secret).await?;
        if current.revision == caller.revision {
            return Err(refusal);
        }
        let authorised = self
            .require_variants_permission(&current, project, environment)
            .await?;
        Ok((current, authorised))
    }

    /// Read-decide-submit the variant list, authorised by `first` on the first attempt (from
    /// [`require_variants_permission`](Self::require_variants_permission), which the HTTP
    /// adapter calls before reading the body). Concurrent changes of the same feature
    /// environment are combined into one commit (see `variant_writers.rs`).
    pub(crate) async fn change_variants(
        &self,
        first: Authorised,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        change: VariantsChange<'_>,
    ) -> Result<FeatureVariants> {
        let target: WriteTarget = (
            project.to_owned(),
            feature.to_owned(),
            environment.to_owned(),
        );
        let mut ticket = self.writers.enqueue(&target, first, caller, change);
        let queue = Arc::clone(&ticket.queue);
        let outcome = loop {
            let turn = tokio::select! {
                biased;
                outcome = &mut ticket.answer => break outcome,
                // A leader took this change: nothing to do but wait for the answer.
                () = ticket.taken.notified() => None,
                turn = Arc::clone(&queue.turn).lock_owned() => Some(turn),
            };
            let Some(turn) = turn else {
                break (&mut ticket.answer).await;
            };
            let batch = queue.take();
            if batch.is_empty() {
                // A leader before took this change; its answer comes.
                continue;
            }
            if batch.len() == 1 && ticket.is_mine(&batch[0]) {
                // Only this change: decided here, as before combining (nobody to strand).
                self.lead(turn, batch, target.clone()).await;
                continue;
            }
            // The lead runs in a task of its own, so that this request being dropped (its
            // client gone) does not strand the other writers of the batch. It answers every
            // writer it took, this one's too if it was among them.
            let lead = {
                let (admin, target) = (self.clone(), target.clone());
                tokio::spawn(async move { admin.lead(turn, batch, target).await })
            };
            let _ = lead.await;
        };
        drop(ticket);
        self.writers.forget(&target, queue);
        match outcome {
            Ok(Outcome::Done(result)) => result,
            Ok(Outcome::Alone) => {
                self.change_variants_alone(None, caller, project, feature, environment, change)
                    .await
            }
            Err(_) => Err(Error::internal(
                "the writer deciding this variants change stopped before answering",
                None,
            )),
        }
    }

    /// Decide and commit `batch`, the changes waiting on `target` (see `variant_writers.rs`),
    /// holding the queue's `turn` until the commit is accepted. Answers every writer.
    async fn lead(&self, turn: OwnedMutexGuard<()>, batch: Vec<Writer>, target: WriteTarget) {
        let (project, feature, environment) = (&target.0, &target.1, &target.2);
        let checks = variants_checks(project, environment);
        let mut writers = batch;
        let mut turn = Some(turn);
        for attempt in 1..=MAX_ATTEMPTS {
            // Each writer's permission: the decision made before its body was read on the
            // first attempt, decided afresh after a conflict.
            let mut authorised: Option<Authorised> = None;
            let mut kept = Vec::with_capacity(writers.len());
            for mut writer in writers {
                match self
                    .authorise_attempt_deciding(&mut writer.first, &writer.caller, &checks)
                    .await
                {
                    Ok(decision) => {
                        authorised = Some(match authorised {
                            Some(all) => all.and(decision),
                            None => decision,
                        });
                        kept.push(writer);
                    }
                    Err(error) => writer.answer(Outcome::Done(Err(error))),
                }
            }
            writers = kept;
            let Some(authorised) = authorised else {
                return;
            };
            let fe_key = feature_environment_key(feature, environment);
            let decision_turn = self.locks.lock(&fe_key).await;
            let decided = match self
                .decide_batch(&mut writers, project, feature, environment)
                .await
            {
                Ok(decided) => decided,
                Err(()) => {
                    for writer in writers {
                        writer.answer(Outcome::Alone);
                    }
                    return;
                }
            };
            let Some((changes, results)) = decided else {
                // Every change failed on its own and was answered.
                return;
            };
            if stored_text::refuse_nul(&changes).is_err() {
                // Whose change holds it is for each to find out alone.
                for writer in writers {
                    writer.answer(Outcome::Alone);
                }
                return;
            }
            match self.submit_as(&authorised, changes).await {
                Ok(accepted) => {
                    drop(decision_turn);
                    drop(turn.take());
                    match accepted.durable().await {
                        Ok(_) => {
                            for (writer, result) in writers.into_iter().zip(results) {
                                writer.answer(Outcome::Done(Ok(result)));
                            }
                        }
                        Err(error) => {
                            let error = Error::from(error);
                            for writer in writers {
                                writer.answer(Outcome::Done(Err(echo(&error))));
                            }
                        }
                    }
                    return;
                }
                Err(Error::Store(StoreError::Conflict(changed))) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!(%changed, "patch_variants: conflict, reading again");
                }
                Err(error) => {
                    let error = match error {
                        Error::Store(StoreError::Conflict(_)) => contention("patch_variants"),
                        other => other,
                    };
                    for writer in writers {
                        writer.answer(Outcome::Done(Err(echo(&error))));
                    }
                    return;
                }
            }
        }
    }

    /// Read the feature environment and apply each writer's change in turn. A change that
    /// fails is removed from `writers` and answered with its error, or, on a view that may
    /// lag, sent to decide alone. `Err(())` when the batch
    /// cannot be decided as a whole (read failed, 404, archived); `Ok(None)` when no change
    /// is left; else the change set and each remaining writer's result, in order.
    async fn decide_batch(
        &self,
        writers: &mut Vec<Writer>,
        project: &str,
        feature: &str,
        environment: &str,
    ) -> std::result::Result<Option<(ChangeSet, Vec<FeatureVariants>)>, ()> {
        let view = self.store.decision_view().await.map_err(drop)?;
        let target = self
            .read_target(Reader::View(view.as_ref()), project, feature, environment)
            .await
            .map_err(drop)?;
        if target.archived {
            return Err(());
        }
        let stored = target.stored().map_err(drop)?;
        let mut current = Json::from_raw(stored.variants().to_owned());
        let mut events = Vec::with_capacity(writers.len());
        let mut results = Vec::with_capacity(writers.len());
        let mut kept = Vec::with_capacity(writers.len());
        let mut refused = Vec::new();
        for writer in writers.drain(..) {
            match next_list(&target.fe_key, current.as_raw(), writer.change.borrowed()) {
                Ok((variants, list)) => match target.variants_event(
                    &writer.caller,
                    (project, feature, environment),
                    current.as_raw(),
                    list.as_raw(),
                ) {
                    Ok(event) => {
                        events.push(event);
                        results.push(FeatureVariants {
                            version: VARIANTS_SCHEMA_VERSION,
                            variants,
                        });
                        current = list;
                        kept.push(writer);
                    }
                    Err(error) => refused.push((writer, error)),
                },
                Err(error) => refused.push((writer, error)),
            }
        }
        let lagging = view.may_lag();
        for (writer, error) in refused {
            // A refusal decided on a view that may lag is confirmed alone, on one that does
            // not (a refused change is not in the batch, so the others stand).
            writer.answer(if lagging {
                Outcome::Alone
            } else {
                Outcome::Done(Err(error))
            });
        }
        *writers = kept;
        if writers.is_empty() {
            return Ok(None);
        }
        let changes = target
            .write_list(&stored, current.as_raw(), events)
            .map_err(drop)?;
        Ok(Some((changes, results)))
    }

    /// One change decided and committed on its own: what a writer of a batch that could not
    /// be decided as a whole does (see `variant_writers.rs`), so that it gets exactly its own
    /// request's answer. `first` is a permission decision still unused, if any.
    async fn change_variants_alone(
        &self,
        first: Option<Authorised>,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        change: VariantsChange<'_>,
    ) -> Result<FeatureVariants> {
        let fe_key = feature_environment_key(feature, environment);
        let checks = variants_checks(project, environment);
        let mut first = first;
        retrying!("patch_variants", async {
            // After a conflict (the key revoked, the user's access changed) the permission
            // is decided again with the rest.
            let authorised = self.authorise_attempt(&mut first, caller, &checks).await?;
            // Writers of this feature environment decide one after the other, on the latest
            // accepted state, and wait for durability after letting the next one decide.
            let turn = self.locks.lock(&fe_key).await;
            // This path answers refusals, so it decides on a view that does not lag.
            let mut view = self.store.decision_view().await?;
            if view.may_lag() {
                view = self.store.view().await?;
            }
            let target = self
                .read_target(Reader::View(view.as_ref()), project, feature, environment)
                .await?;
            if target.archived {
                return Err(Error::invalid_at(
                    "featureName",
                    format!(
                        "The feature \"{feature}\" is archived; archived features cannot be changed."
                    ),
                ));
            }
            let stored = target.stored()?;
            let old_list = stored.variants();
            let (variants, new_list) = next_list(&target.fe_key, old_list, change)?;
            let event = target.variants_event(
                caller,
                (project, feature, environment),
                old_list,
                new_list.as_raw(),
            )?;
            let changes = target.write_list(&stored, new_list.as_raw(), vec![event])?;
            let accepted = self.submit_as(&authorised, changes).await?;
            drop(turn);
            accepted.durable().await?;
            Ok(FeatureVariants {
                version: VARIANTS_SCHEMA_VERSION,
                variants,
            })
        })
    }

    /// Read a feature environment for a change, with the 404s in a fixed order: project,
    /// feature (in that project), environment, environment of the project.
    async fn read_target(
        &self,
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
}

/// The list `change` makes of `list` (the stored JSON text of the record at `key`): the
/// normalised variants, and as JSON text.
fn next_list(
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

/// The permission a variant change needs.
fn variants_checks<'a>(project: &'a str, environment: &'a str) -> [Check<'a>; 1] {
    [Check::environment(
        Permission::UpdateFeatureEnvironmentVariants,
        project,
        environment,
    )]
}

/// Decode a member of the record at `key` from its stored JSON text.
fn decode_text<'a, T: Deserialize<'a>>(key: &Key, text: &'a RawValue) -> Result<T> {
    serde_json::from_str(text.get()).map_err(|source| {
        Error::Store(crate::store::StoreError::Encoding {
            what: format!("record {key}"),
            source,
        })
    })
}
