//! The variants of a feature in an environment: patch (the first operation of the
//! specification), replace, read.

use json_patch::Patch;
use serde_json::Value;

use super::reader::Reader;
use super::records::feature_environment_key;
use std::sync::Arc;

use tokio::sync::OwnedMutexGuard;

use super::variant_records::{decode_text, next_list, read_target};
use super::variant_writers::{Outcome, Target as WriteTarget, VariantsChange, Writer, echo};
use super::{Authority, MAX_ATTEMPTS, Need, Permit, ToggleAdmin, contention, stored_text};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::Permission;
use crate::model::{FeatureVariants, Json, Variant};
use crate::store::{ChangeSet, Key, StoreError};

/// The version of the feature-variants schema, sent as `version` (not a revision).
pub(super) const VARIANTS_SCHEMA_VERSION: u32 = 1;

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
    /// # use toggle_admin::{MemoryStore, ToggleAdmin, model::{Environment, NewFeature, Project}};
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
    pub async fn patch_variants<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        environment: &str,
        patch: &Patch,
    ) -> Result<FeatureVariants> {
        let permit = self
            .admit_variants_change(authority.into(), project, environment)
            .await?;
        let change = VariantsChange::Patch(patch);
        self.change_variants(permit, project, feature, environment, change)
            .await
    }

    /// Replace the variants of `feature` in `environment`: `PUT …/variants`. The same
    /// permission, checks, validation, weighting, ordering and event as
    /// [`patch_variants`](Self::patch_variants).
    pub async fn set_variants<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        environment: &str,
        variants: &[Variant],
    ) -> Result<FeatureVariants> {
        let document = serde_json::to_value(variants)
            .map_err(|e| Error::invalid_at("", format!("the variants cannot be encoded: {e}")))?;
        self.set_variants_json(authority, project, feature, environment, &document)
            .await
    }

    /// [`set_variants`](Self::set_variants) with the list as raw JSON (the HTTP body), so
    /// that every problem in it can be reported with its path.
    pub async fn set_variants_json<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        project: &str,
        feature: &str,
        environment: &str,
        variants: &Value,
    ) -> Result<FeatureVariants> {
        let permit = self
            .admit_variants_change(authority.into(), project, environment)
            .await?;
        let change = VariantsChange::Replace(variants);
        self.change_variants(permit, project, feature, environment, change)
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
        let target =
            read_target(Reader::View(view.as_ref()), project, feature, environment).await?;
        let stored = target.stored()?;
        Ok(FeatureVariants {
            version: VARIANTS_SCHEMA_VERSION,
            variants: decode_text(&target.fe_key, stored.variants())?,
        })
    }

    /// The permit to change variants of `project` in `environment`, from `authority`. A
    /// caller's key record is not read again: the decision rests on the record its
    /// authentication read, whose revision the commit expects (see
    /// [`permit_as_authenticated`](Self::permit_as_authenticated)).
    async fn admit_variants_change(
        &self,
        authority: Authority<'_>,
        project: &str,
        environment: &str,
    ) -> Result<Permit> {
        let needs = variants_needs(project, environment);
        match authority {
            Authority::Caller(caller) => self.permit_as_authenticated(caller, &needs).await,
            other => self.admit(other, &needs).await,
        }
    }

    /// Authenticate `secret` and admit it to change variants of `project` in `environment`,
    /// before the body is read (the HTTP order of checks: permission before body shape),
    /// on the key's record as a decision view shows it (see
    /// [`permit_secret`](Self::permit_secret)). [`patch_variants`](Self::patch_variants) and
    /// [`set_variants_json`](Self::set_variants_json) take the permit.
    pub async fn permit_variants_change(
        &self,
        secret: Option<&str>,
        project: &str,
        environment: &str,
    ) -> Result<Permit> {
        self.permit_secret(secret, &variants_needs(project, environment))
            .await
    }

    /// Read-decide-submit the variant list, admitted by `permit` on the first attempt.
    /// Concurrent changes of the same feature environment are combined into one commit (see
    /// `variant_writers.rs`).
    async fn change_variants(
        &self,
        permit: Permit,
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
        let caller = permit.caller().clone();
        let mut ticket = self.writers.enqueue(&target, permit, change);
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
                self.change_variants_alone(None, &caller, project, feature, environment, change)
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
        let mut writers = batch;
        let mut turn = Some(turn);
        for attempt in 1..=MAX_ATTEMPTS {
            // Each writer's permission: the decision made before its body was read on the
            // first attempt, decided afresh after a conflict.
            let mut kept = Vec::with_capacity(writers.len());
            for mut writer in writers {
                if attempt > 1 {
                    match self.permit_again_deciding(&writer.permit).await {
                        Ok(permit) => writer.permit = permit,
                        Err(error) => {
                            writer.answer(Outcome::Done(Err(error)));
                            continue;
                        }
                    }
                }
                kept.push(writer);
            }
            writers = kept;
            if writers.is_empty() {
                return;
            }
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
            let permits: Vec<&Permit> = writers.iter().map(|w| &w.permit).collect();
            match self.submit_permitted(&permits, changes).await {
                Ok(accepted) => {
                    drop(decision_turn);
                    drop(turn.take());
                    match accepted.durable().await {
                        Ok(revision) => {
                            self.committed(revision);
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
        let target = read_target(Reader::View(view.as_ref()), project, feature, environment)
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
                    writer.permit.author(),
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
        first: Option<Permit>,
        caller: &Caller,
        project: &str,
        feature: &str,
        environment: &str,
        change: VariantsChange<'_>,
    ) -> Result<FeatureVariants> {
        let fe_key = feature_environment_key(feature, environment);
        let needs = variants_needs(project, environment);
        let mut first = first;
        let mut attempt = 0usize;
        loop {
            attempt += 1;
            // After a conflict (the key revoked, the user's access changed) the permission
            // is decided again with the rest.
            let permit = match first.take() {
                Some(permit) => permit,
                None => self.permit(caller, &needs).await?,
            };
            let outcome = self
                .change_variants_once(&permit, project, feature, environment, change, &fe_key)
                .await;
            match outcome {
                Err(Error::Store(StoreError::Conflict(changed))) if attempt < MAX_ATTEMPTS => {
                    tracing::debug!(%changed, "patch_variants: conflict, reading again");
                }
                Err(Error::Store(StoreError::Conflict(_))) => {
                    return Err(contention("patch_variants"));
                }
                other => return other,
            }
        }
    }

    /// One attempt of [`change_variants_alone`](Self::change_variants_alone).
    async fn change_variants_once(
        &self,
        permit: &Permit,
        project: &str,
        feature: &str,
        environment: &str,
        change: VariantsChange<'_>,
        fe_key: &Key,
    ) -> Result<FeatureVariants> {
        {
            // Writers of this feature environment decide one after the other, on the latest
            // accepted state, and wait for durability after letting the next one decide.
            let turn = self.locks.lock(fe_key).await;
            // This path answers refusals, so it decides on a view that does not lag.
            let mut view = self.store.decision_view().await?;
            if view.may_lag() {
                view = self.store.view().await?;
            }
            let target =
                read_target(Reader::View(view.as_ref()), project, feature, environment).await?;
            if target.archived {
                return Err(super::records::feature_archived(feature));
            }
            let stored = target.stored()?;
            let old_list = stored.variants();
            let (variants, new_list) = next_list(&target.fe_key, old_list, change)?;
            let event = target.variants_event(
                permit.author(),
                (project, feature, environment),
                old_list,
                new_list.as_raw(),
            )?;
            let changes = target.write_list(&stored, new_list.as_raw(), vec![event])?;
            let accepted = self.submit_permitted(&[permit], changes).await?;
            drop(turn);
            let revision = accepted.durable().await?;
            self.committed(revision);
            Ok(FeatureVariants {
                version: VARIANTS_SCHEMA_VERSION,
                variants,
            })
        }
    }
}

/// The permission a variant change needs.
fn variants_needs<'a>(project: &'a str, environment: &'a str) -> [Need<'a>; 1] {
    [Need::environment(
        Permission::UpdateFeatureEnvironmentVariants,
        project,
        environment,
    )]
}
