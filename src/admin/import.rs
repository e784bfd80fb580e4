//! Import toggles (the second operation of the specification) and its dry run.

use std::collections::{BTreeMap, BTreeSet};

use chrono::Utc;
use serde_json::Value;

use super::author::Author;
use super::catalog::tag_type_record;
use super::export::{meta_of, state_of};
use super::reader::Reader;
use super::records::{
    ContextFieldRecord, FeatureDependenciesRecord, FeatureEnvironmentRecord, FeatureRecord,
    FeatureTagsRecord, context_field_key, decode, decode_opt, encode, environment_key,
    feature_dependencies_key, feature_environment_key, feature_key, feature_tags_key, project_key,
    tag_type_key,
};
use super::{Need, ToggleAdmin, event};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::import::{
    ExistingFeature, ImportWrites, Outcome, Snapshot, items_of, permission_display_name, plan,
    preview, unleash_findings,
};
use crate::model::{
    ImportBody, ImportMode, ImportPlan, ImportReport, ImportValidation, ValidationItem,
};
use crate::store::{ChangeSet, Collection};

/// What an import read: the snapshot for the domain, and the features' records as stored.
struct ImportRead {
    snapshot: Snapshot,
    features: BTreeMap<String, FeatureRecord>,
}

impl ToggleAdmin {
    /// Import toggles into a project and environment: `POST
    /// /api/admin/features-batch/import`, from the typed body. See [`import_toggles_json`](Self::import_toggles_json).
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
    /// let body: toggle_admin::model::ImportBody = serde_json::from_value(serde_json::json!({
    ///     "project": "shop",
    ///     "environment": "production",
    ///     "data": {
    ///         "features": [{ "name": "checkout", "type": "release" }],
    ///         "featureStrategies": [],
    ///         "featureEnvironments": [{ "name": "checkout", "enabled": true }],
    ///         "tagTypes": []
    ///     }
    /// }))?;
    /// let report = admin.import_toggles(&caller, &body).await?;
    /// assert_eq!(report.created, ["checkout"]);
    /// let feature = admin.feature(&caller, "shop", "checkout").await?;
    /// assert_eq!(feature.name, "checkout");
    /// # Ok(()) }
    /// ```
    pub async fn import_toggles(&self, caller: &Caller, body: &ImportBody) -> Result<ImportReport> {
        self.import_toggles_json(caller, &body_value(body)?).await
    }

    /// [`import_toggles`](Self::import_toggles) under `mode`: `POST
    /// /api/admin/features-batch/import?mode=…`.
    ///
    /// * [`ImportMode::Replace`] (the default, Unleash's behaviour): every feature of the
    ///   document is made as the document describes it in the target environment.
    /// * [`ImportMode::CreateMissing`]: only the features the store lacks are created; the
    ///   existing ones are left exactly as they are, with no event, and reported in
    ///   [`ImportReport::skipped_existing`].
    ///
    /// In both, an import that changes nothing writes nothing: no event (not even
    /// `features-imported`), no new revision. [`plan_import`](Self::plan_import) says
    /// beforehand what it would do.
    pub async fn import_toggles_with(
        &self,
        caller: &Caller,
        body: &ImportBody,
        mode: ImportMode,
    ) -> Result<ImportReport> {
        self.import_toggles_json_with(caller, &body_value(body)?, mode)
            .await
    }

    /// What [`import_toggles_with`](Self::import_toggles_with) would do, with nothing written
    /// (no event, no revision): `POST /api/admin/features-batch/plan?mode=…`. Any valid key may
    /// plan, as any may [validate](Self::validate_import); the import itself then needs its
    /// permissions.
    ///
    /// The body is checked exactly as the import checks it: a bad one is the same
    /// [`Error::Validation`] listing every problem (a missing target the same
    /// [`Error::NotFound`]). Each feature of the document is then `create`, `update` (with
    /// its changes: old and new values at JSON pointers into the feature's document),
    /// `unchanged` or `skip` (archived, or existing under [`ImportMode::CreateMissing`]); the
    /// context fields and tag types the import would create are listed.
    ///
    /// **Normalisation.** The document is compared with the store after both are put in the
    /// form the store holds: the document as the import would write it (variable variant
    /// weights distributed, defaults filled in, `flexibleRollout` parameters defaulted,
    /// segment ids mapped, tags sorted, a stored strategy the document describes unchanged
    /// kept with its id and sort order), the store as it is. So a document planned against
    /// the server it was exported from, or right after it was applied, plans every feature
    /// as `unchanged`; and a feature plans as `unchanged` exactly when the import would write
    /// nothing for it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use toggle_admin::{MemoryStore, ToggleAdmin, model::{Environment, Project}};
    /// use toggle_admin::model::{ImportMode, PlanAction};
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
    /// let body: toggle_admin::model::ImportBody = serde_json::from_value(serde_json::json!({
    ///     "project": "shop",
    ///     "environment": "production",
    ///     "data": {
    ///         "features": [{ "name": "checkout", "type": "release" }],
    ///         "featureStrategies": [],
    ///         "featureEnvironments": [{ "name": "checkout", "enabled": true }],
    ///         "tagTypes": []
    ///     }
    /// }))?;
    /// let plan = admin.plan_import(&caller, &body, ImportMode::Replace).await?;
    /// assert_eq!(plan.features[0].action, PlanAction::Create);
    /// admin.import_toggles_with(&caller, &body, ImportMode::Replace).await?;
    /// let again = admin.plan_import(&caller, &body, ImportMode::Replace).await?;
    /// assert_eq!(again.features[0].action, PlanAction::Unchanged);
    /// assert!(!again.has_changes());
    /// # Ok(()) }
    /// ```
    pub async fn plan_import(
        &self,
        caller: &Caller,
        body: &ImportBody,
        mode: ImportMode,
    ) -> Result<ImportPlan> {
        self.plan_import_json(caller, &body_value(body)?, mode)
            .await
    }

    /// [`plan_import`](Self::plan_import) from the raw JSON body, so that every problem (and
    /// every unknown key) is reported with its path.
    pub async fn plan_import_json(
        &self,
        caller: &Caller,
        body: &Value,
        mode: ImportMode,
    ) -> Result<ImportPlan> {
        self.require(caller, &[]).await?;
        let view = self.store.view().await?;
        let read = read_for_import(Reader::View(view.as_ref()), body).await?;
        // Ids are not compared: the strategies the import would create need none here.
        let outcome = plan(body, &read.snapshot, mode, &mut String::new);
        let writes = outcome.result.map_err(|issues| {
            issues
                .into_error()
                .unwrap_or_else(|| Error::invalid_at("", "the import is not valid"))
        })?;
        Ok(preview(&read.snapshot, &writes, mode))
    }

    /// Import toggles from the raw JSON body, so that every problem (and every unknown key)
    /// is reported with its path.
    ///
    /// * Everything is checked before anything is written; every problem is listed in one
    ///   [`Error::Validation`] (`details` with paths such as
    ///   `data.featureStrategies[2].segments[0]`). A missing target project or environment is
    ///   an [`Error::NotFound`] when nothing else is wrong.
    /// * The permissions are computed from the payload as Unleash does (`UPDATE_FEATURE`
    ///   always; `CREATE_FEATURE` for new features; `CREATE_TAG_TYPE`,
    ///   `CREATE_CONTEXT_FIELD` for missing ones; `CREATE_FEATURE_STRATEGY` when strategies are
    ///   imported or a default one added; `DELETE_FEATURE_STRATEGY` when imported features
    ///   have strategies in the environment; `UPDATE_FEATURE_ENVIRONMENT_VARIANTS` when
    ///   variants are given), in the target project and environment; all missing ones are
    ///   named in one [`Error::NoAccess`].
    /// * Everything is then written in **one** commit, with an event per change and a final
    ///   `features-imported`; on a concurrent change the import re-reads and decides again.
    ///   An import that changes nothing commits nothing (no event, no new revision).
    ///
    /// Archived features are skipped with everything that belongs to them and reported in
    /// [`ImportReport::skipped_archived`]. The module docs of [`crate::import`] list where
    /// this differs from Unleash.
    pub async fn import_toggles_json(&self, caller: &Caller, body: &Value) -> Result<ImportReport> {
        self.import_toggles_json_with(caller, body, ImportMode::Replace)
            .await
    }

    /// [`import_toggles_json`](Self::import_toggles_json) under `mode` (see
    /// [`import_toggles_with`](Self::import_toggles_with)).
    pub async fn import_toggles_json_with(
        &self,
        caller: &Caller,
        body: &Value,
        mode: ImportMode,
    ) -> Result<ImportReport> {
        // Which permissions the import needs depends on what it changes: decided inside the
        // flow, on what it read.
        let permit = self.permit(caller, &[]).await?;
        self.change("import_toggles", permit, |tx| {
            Box::pin(async move {
                let read = read_for_import(tx.reader(), body).await?;
                let outcome = plan(body, &read.snapshot, mode, &mut || {
                    uuid::Uuid::new_v4().to_string()
                });
                tx.require(caller, &needs(&outcome)).await?;
                let plan = outcome.result.map_err(|issues| {
                    issues
                        .into_error()
                        .unwrap_or_else(|| Error::invalid_at("", "the import is not valid"))
                })?;
                // Nothing to change: nothing written, so nothing committed.
                if plan.changes_nothing() {
                    return Ok(plan.report);
                }
                let (changes, report) = change_set(tx.author(), &read, plan)?;
                tx.write_all(changes);
                Ok(report)
            })
        })
        .await
    }

    /// The dry run of [`import_toggles`](Self::import_toggles): the same checks, nothing
    /// written. Any valid key may run it; the permissions it lacks are listed, not refused.
    pub async fn validate_import(
        &self,
        caller: &Caller,
        body: &ImportBody,
    ) -> Result<ImportValidation> {
        self.validate_import_json(caller, &body_value(body)?).await
    }

    /// [`validate_import`](Self::validate_import) from the raw JSON body:
    /// `POST /api/admin/features-batch/validate`.
    pub async fn validate_import_json(
        &self,
        caller: &Caller,
        body: &Value,
    ) -> Result<ImportValidation> {
        self.require(caller, &[]).await?;
        for (member, wanted) in [
            ("project", "a string"),
            ("environment", "a string"),
            ("data", "an object"),
        ] {
            let fine = match member {
                "data" => body[member].is_object(),
                _ => body[member].is_string(),
            };
            if !fine {
                return Err(Error::invalid_at(
                    format!("/{member}"),
                    format!("`{member}` is required, and must be {wanted}"),
                ));
            }
        }
        let view = self.store.view().await?;
        let read = read_for_import(Reader::View(view.as_ref()), body).await?;
        let outcome = plan(body, &read.snapshot, ImportMode::Replace, &mut || {
            String::new()
        });
        let permissions = match self.require(caller, &needs(&outcome)).await {
            Ok(_) => Vec::new(),
            Err(Error::NoAccess { permissions, .. }) => vec![ValidationItem {
                message: "We detected you are missing the following permissions:".to_owned(),
                affected_items: permissions
                    .iter()
                    .map(|p| permission_display_name(p))
                    .collect(),
            }],
            Err(other) => return Err(other),
        };
        let (mut errors, mut warnings) = unleash_findings(body, &read.snapshot);
        // The warnings Unleash has no message for (ignored unknown keys, tag types listed
        // twice, archived parents), one item each; archived features and custom strategies
        // are already among Unleash's.
        warnings.extend(items_of(
            outcome
                .warnings
                .into_iter()
                .filter(|w| {
                    !w.message.contains(" is archived (in project ")
                        && !w.message.starts_with("the custom strategy ")
                })
                .collect(),
        ));
        if errors.is_empty()
            && let Err(issues) = outcome.result
        {
            let mut all = issues.not_found;
            all.extend(issues.errors);
            errors = items_of(all);
        }
        Ok(ImportValidation {
            errors,
            warnings,
            permissions,
        })
    }
}

/// Read everything the import of `body` depends on.
async fn read_for_import(reader: Reader<'_>, body: &Value) -> Result<ImportRead> {
    let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or_default();
    let (project, environment) = (text("project"), text("environment"));
    let names: BTreeSet<&str> = body
        .pointer("/data/features")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .collect();
    let mut keys = vec![project_key(project), environment_key(environment)];
    for name in &names {
        keys.push(feature_environment_key(name, environment));
        keys.push(feature_tags_key(name));
    }
    let records = reader.get_all(&keys).await?;
    let mut snapshot = Snapshot {
        project: decode_opt(&keys[0], records[0].as_ref())?,
        environment_exists: records[1].is_some(),
        ..Snapshot::default()
    };
    for (i, name) in names.iter().enumerate() {
        let (fe_at, tags_at) = (2 + 2 * i, 3 + 2 * i);
        if let Some(fe) =
            decode_opt::<FeatureEnvironmentRecord>(&keys[fe_at], records[fe_at].as_ref())?
        {
            snapshot
                .feature_environments
                .insert((*name).to_owned(), state_of(fe));
        }
        if let Some(tags) =
            decode_opt::<FeatureTagsRecord>(&keys[tags_at], records[tags_at].as_ref())?
        {
            snapshot.tags.insert((*name).to_owned(), tags.tags);
        }
    }
    let (_, all) = reader
        .list_decoded::<FeatureRecord>(Collection::Features)
        .await?;
    let mut features = BTreeMap::new();
    for f in all {
        snapshot.features.insert(
            f.name.clone(),
            ExistingFeature {
                project: f.project.clone(),
                archived: f.archived,
                meta: meta_of(&f),
            },
        );
        features.insert(f.name.clone(), f);
    }
    let listing = reader.list(Collection::FeatureDependencies, "").await?;
    for (id, record) in &listing.records {
        let deps: FeatureDependenciesRecord = decode(&feature_dependencies_key(id), &record.value)?;
        snapshot.dependencies.insert(id.clone(), deps.parents);
    }
    let (_, definitions) = reader.strategy_definition_map().await?;
    let (_, segments) = reader.segment_list().await?;
    let (_, fields) = reader.context_field_map().await?;
    let (_, tag_types) = reader.tag_type_map().await?;
    snapshot.strategy_definitions = definitions;
    snapshot.segments = segments;
    snapshot.context_fields = fields;
    snapshot.tag_types = tag_types;
    Ok(ImportRead { snapshot, features })
}

/// The typed body as JSON, for the raw entry points.
fn body_value(body: &ImportBody) -> Result<Value> {
    serde_json::to_value(body)
        .map_err(|e| Error::invalid_at("", format!("the import body cannot be encoded: {e}")))
}

/// The permissions an outcome needs, in the target project and environment.
fn needs(outcome: &Outcome) -> Vec<Need<'_>> {
    outcome
        .permissions
        .iter()
        .map(|p| Need::environment(*p, &outcome.project, &outcome.environment))
        .collect()
}

/// The plan as one change set (the flow adds every revision read as a precondition), and
/// the report to return once it is committed. The plan is consumed: its strategies, variants, tags and event data move
/// into the change set instead of being copied (an import of 10,000 features carries
/// ~60,000 events).
fn change_set(
    author: &Author,
    read: &ImportRead,
    plan: ImportWrites,
) -> Result<(ChangeSet, ImportReport)> {
    let ImportWrites {
        project,
        environment,
        features,
        feature_environments,
        tag_types,
        context_fields,
        tags,
        dependencies,
        events,
        report,
        outcomes: _,
    } = plan;
    let mut changes = ChangeSet::new();
    let now = Utc::now();
    // The importer becomes a collaborator of every feature the import changes, as in
    // Unleash.
    // Removed strategies and tags are not counted: Unleash records no event for them.
    let changed: BTreeSet<&str> = events
        .iter()
        .filter(|e| !matches!(e.event_type, "feature-strategy-remove" | "feature-untagged"))
        .filter_map(|e| e.feature.as_deref())
        .collect();
    let mut written = BTreeSet::new();
    let shown = author.feature_user();
    for (name, meta, _) in features {
        let key = feature_key(&name);
        let mut record = match read.features.get(&name) {
            Some(existing) => FeatureRecord {
                feature_type: meta.feature_type,
                description: meta.description,
                stale: meta.stale,
                impression_data: meta.impression_data,
                ..existing.clone()
            },
            None => FeatureRecord {
                name,
                project: project.clone(),
                feature_type: meta.feature_type,
                description: meta.description,
                impression_data: meta.impression_data,
                stale: meta.stale,
                archived: false,
                archived_at: None,
                created_at: now,
                created_by: Some(shown.clone()),
                collaborators: Vec::new(),
            },
        };
        if changed.contains(record.name.as_str()) {
            record.touched_by(&shown);
        }
        written.insert(record.name.clone());
        let value = encode(&key, &record)?;
        changes.put(key, value);
    }
    for name in changed.iter().filter(|n| !written.contains(**n)) {
        if let Some(existing) = read.features.get(*name) {
            let mut record = existing.clone();
            record.touched_by(&shown);
            if record != *existing {
                let key = feature_key(name);
                let value = encode(&key, &record)?;
                changes.put(key, value);
            }
        }
    }
    for (name, state) in feature_environments {
        let key = feature_environment_key(&name, &environment);
        let record = FeatureEnvironmentRecord {
            enabled: state.enabled,
            variants: state.variants,
            strategies: state.strategies,
        };
        let value = encode(&key, &record)?;
        changes.put(key, value);
    }
    for tag_type in &tag_types {
        let key = tag_type_key(&tag_type.name);
        let value = encode(&key, &tag_type_record(tag_type))?;
        changes.put(key, value);
    }
    for field in context_fields {
        let key = context_field_key(&field.name);
        let record = ContextFieldRecord {
            name: field.name,
            description: field.description.flatten(),
            stickiness: field.stickiness.unwrap_or(false),
            sort_order: field.sort_order.unwrap_or(0),
            legal_values: field.legal_values.unwrap_or_default(),
            created_at: now,
        };
        let value = encode(&key, &record)?;
        changes.put(key, value);
    }
    for (name, tags) in tags {
        let key = feature_tags_key(&name);
        if tags.is_empty() {
            changes.delete(key);
        } else {
            let value = encode(&key, &FeatureTagsRecord { tags })?;
            changes.put(key, value);
        }
    }
    for (child, parents) in dependencies {
        let key = feature_dependencies_key(&child);
        let value = encode(&key, &FeatureDependenciesRecord { parents })?;
        changes.put(key, value);
    }
    for planned in events {
        // Tag types and context fields belong to no project.
        let global = matches!(
            planned.event_type,
            "tag-type-created" | "context-field-created"
        );
        changes.event(event(
            author,
            planned.event_type,
            (!global).then_some(project.as_str()),
            planned.feature.as_deref(),
            planned.in_environment.then_some(environment.as_str()),
            planned.pre_data,
            planned.data,
        ));
    }
    Ok((changes, report))
}
