//! The catalogue features draw on: strategy definitions (create, read, list, update,
//! delete, deprecate, reactivate) and tag types (create, read, list, update, delete, validate).

use super::records::in_use;
use super::records::{
    ContextFieldRecord, TagTypeRecord, decode_opt, encode, strategy_definition_key, tag_type_key,
};
use super::{Need, Permit, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::import::{builtin_strategy_definitions, is_builtin_strategy};
use crate::model::Permission;
use crate::model::{
    ContextField, StrategyDefinition, StrategyDefinitionUpdate, TagType, TagTypeUpdate,
};
use crate::names::{MAX_NAME, display_name_problem, name_problem};
use crate::store::{Collection, Json, Key};

impl ToggleAdmin {
    /// Create a custom strategy definition. Needs `CREATE_STRATEGY`. The name must be 1–100
    /// URL-friendly characters and not taken (built-ins included) → [`Error::NameExists`];
    /// parameter names must be unique, their types Unleash's (`string`, `percentage`,
    /// `list`, `number`, `boolean`). Stored as `editable`.
    pub async fn create_strategy_definition(
        &self,
        caller: &Caller,
        definition: &StrategyDefinition,
    ) -> Result<StrategyDefinition> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateStrategy)])
            .await?;
        if let Some(problem) = name_problem(&definition.name, 100) {
            return Err(Error::invalid_at("name", problem));
        }
        parameter_problems(&definition.parameters)?;
        let taken = || {
            Error::name_exists(format!(
                "A strategy named \"{}\" already exists.",
                definition.name
            ))
        };
        if is_builtin_strategy(&definition.name) {
            return Err(taken());
        }
        let created = StrategyDefinition {
            editable: true,
            ..definition.clone()
        };
        let key = strategy_definition_key(&created.name);
        let value = encode(&key, &created)?;
        self.create_absent(
            permit,
            "create_strategy_definition",
            key,
            value,
            "strategy-created",
            taken,
        )
        .await?;
        Ok(created)
    }

    /// Create the record `value` at `key`, which must not exist yet (else `taken()`), with
    /// one `event_type` event carrying it: how the catalogue's named things (strategy
    /// definitions, tag types, context fields) are created. A conflict is decided again, and
    /// only a record that exists is a name clash.
    pub(super) async fn create_absent(
        &self,
        permit: Permit,
        what: &'static str,
        key: Key,
        value: Json,
        event_type: &str,
        taken: impl Fn() -> Error + Send + Sync,
    ) -> Result<()> {
        let (key, value, taken) = (&key, &value, &taken);
        self.change(what, permit, |tx| {
            Box::pin(async move {
                if tx.get(key).await?.is_some() {
                    return Err(taken());
                }
                tx.create(key.clone(), value.clone(), event_type);
                Ok(())
            })
        })
        .await
    }

    /// Every strategy definition, built-ins included, by name. Any valid key may read them.
    pub async fn strategy_definitions(&self, caller: &Caller) -> Result<Vec<StrategyDefinition>> {
        self.require(caller, &[]).await?;
        Ok(self
            .reader()
            .strategy_definition_map()
            .await?
            .1
            .into_values()
            .collect())
    }

    /// The strategy definition `name` (built-in or custom).
    pub async fn strategy_definition(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<StrategyDefinition> {
        self.require(caller, &[]).await?;
        let (_, mut all) = self.reader().strategy_definition_map().await?;
        all.remove(name).ok_or_else(|| strategy_not_found(name))
    }

    /// Delete the custom strategy definition `name`. Needs `CREATE_STRATEGY` (which holds
    /// Unleash's `DELETE_STRATEGY` here).
    ///
    /// A built-in is refused with a 400 naming it (Unleash 6.10.1 answers 500); a definition
    /// a flag's strategy uses is refused with [`Error::InUse`] (409 `ConflictError`, each
    /// strategy in `details`), where Unleash deletes it and leaves the strategies naming a
    /// kind that no longer exists. Event `strategy-deleted` with the definition as
    /// `preData`.
    pub async fn delete_strategy_definition(&self, caller: &Caller, name: &str) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateStrategy)])
            .await?;
        if is_builtin_strategy(name) {
            return Err(Error::invalid_at(
                "name",
                format!("\"{name}\" is a built-in strategy and cannot be deleted"),
            ));
        }
        self.change("delete_strategy_definition", permit, |tx| {
            Box::pin(async move {
                let key = strategy_definition_key(name);
                let current: StrategyDefinition = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| strategy_not_found(name))?;
                let uses = tx.reader().strategy_uses(|s| s.name == name).await?;
                if !uses.is_empty() {
                    return Err(in_use(&format!("The strategy \"{name}\""), &uses));
                }
                tx.delete(key.clone()).record(
                    "strategy-deleted",
                    None,
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

    /// Replace the display name, description and parameters of the custom strategy
    /// definition `name`: `PUT /api/admin/strategies/{name}`. Needs `CREATE_STRATEGY`
    /// (Unleash's `UPDATE_STRATEGY`). Returns the definition as it is now.
    ///
    /// A built-in is refused with a 400 naming it (Unleash 6.10.1 answers 500, `Cannot edit
    /// strategy`); an unknown name is a 404; a `name` in the body other than `name` is a
    /// 400 (Unleash ignores it). The parameters follow the rules of
    /// [`create_strategy_definition`](Self::create_strategy_definition). Strategies already
    /// using the definition keep their parameters, as in Unleash. Event `strategy-updated`
    /// with the definition before and after; an update that changes nothing writes nothing.
    pub async fn update_strategy_definition<'a>(
        &self,
        authority: impl Into<super::Authority<'a>>,
        name: &str,
        update: &StrategyDefinitionUpdate,
    ) -> Result<StrategyDefinition> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::CreateStrategy)])
            .await?;
        if is_builtin_strategy(name) {
            return Err(Error::invalid_at(
                "name",
                format!("\"{name}\" is a built-in strategy and cannot be changed"),
            ));
        }
        if let Some(other) = update.name.as_deref().filter(|n| *n != name) {
            return Err(Error::invalid_at(
                "name",
                format!("the strategy \"{name}\" cannot be renamed to \"{other}\""),
            ));
        }
        parameter_problems(&update.parameters)?;
        self.change("update_strategy_definition", permit, |tx| {
            Box::pin(async move {
                let key = strategy_definition_key(name);
                let current: StrategyDefinition = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| strategy_not_found(name))?;
                let updated = StrategyDefinition {
                    display_name: update.display_name.clone(),
                    description: update.description.clone(),
                    parameters: update.parameters.clone(),
                    ..current.clone()
                };
                tx.replace(&key, &current, &updated, "strategy-updated", None)?;
                Ok(updated)
            })
        })
        .await
    }

    /// Mark the strategy definition `name` deprecated (`deprecated`) or active again. Needs
    /// `CREATE_STRATEGY` (Unleash's `UPDATE_STRATEGY`). Built-ins may be deprecated too, as
    /// in Unleash, except `default`, which Unleash's own UI never offers to deprecate and
    /// which every flag falls back to: refused with a 400. Event `strategy-deprecated` or
    /// `strategy-reactivated`; deprecating a deprecated definition writes nothing. A
    /// deprecated strategy still evaluates; only new uses are discouraged.
    pub async fn set_strategy_deprecated(
        &self,
        caller: &Caller,
        name: &str,
        deprecated: bool,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateStrategy)])
            .await?;
        if deprecated && name == "default" {
            return Err(Error::invalid_at(
                "name",
                "the strategy \"default\" cannot be deprecated",
            ));
        }
        self.change("set_strategy_deprecated", permit, |tx| {
            Box::pin(async move {
                let key = strategy_definition_key(name);
                let stored: Option<StrategyDefinition> =
                    decode_opt(&key, tx.get(&key).await?.as_ref())?;
                let builtin = builtin_strategy_definitions()
                    .into_iter()
                    .find(|d| d.name == name);
                let current = stored
                    .clone()
                    .or_else(|| builtin.clone())
                    .ok_or_else(|| strategy_not_found(name))?;
                if current.deprecated == deprecated {
                    return Ok(());
                }
                let updated = StrategyDefinition {
                    deprecated,
                    ..current.clone()
                };
                // A built-in is stored only while it differs from Unleash's (deprecated).
                if builtin.as_ref() == Some(&updated) {
                    tx.delete(key.clone());
                } else {
                    tx.put(key.clone(), encode(&key, &updated)?);
                }
                tx.record(
                    if deprecated {
                        "strategy-deprecated"
                    } else {
                        "strategy-reactivated"
                    },
                    None,
                    None,
                    None,
                    Some(encode(&key, &current)?),
                    Some(encode(&key, &updated)?),
                );
                Ok(())
            })
        })
        .await
    }

    /// Create a tag type. Needs `CREATE_TAG_TYPE`. The name must be 2–50 URL-friendly
    /// characters and not taken (`simple` included); `color` is `#RRGGBB`.
    pub async fn create_tag_type(&self, caller: &Caller, tag_type: &TagType) -> Result<TagType> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateTagType)])
            .await?;
        if let Some(problem) = crate::import::tag_type_name_problem(&tag_type.name) {
            return Err(Error::invalid_at("name", problem));
        }
        if let Some(Some(color)) = &tag_type.color
            && !crate::import::is_colour(color)
        {
            return Err(Error::invalid_at(
                "color",
                format!("\"{color}\" is not a colour #RRGGBB"),
            ));
        }
        let taken = || {
            Error::name_exists(format!(
                "A tag type named \"{}\" already exists.",
                tag_type.name
            ))
        };
        if tag_type.name == crate::import::SIMPLE_TAG_TYPE {
            return Err(taken());
        }
        let record = tag_type_record(tag_type);
        let key = tag_type_key(&record.name);
        let value = encode(&key, &record)?;
        self.create_absent(
            permit,
            "create_tag_type",
            key,
            value,
            "tag-type-created",
            taken,
        )
        .await?;
        Ok(tag_type_view(&record))
    }

    /// Change the tag type `name`'s description, icon and colour. Needs `CREATE_TAG_TYPE`
    /// (which holds Unleash's `UPDATE_TAG_TYPE` here). `simple` is built in and refused
    /// (400). Event `tag-type-updated`; an update that changes nothing writes nothing.
    pub async fn update_tag_type(
        &self,
        caller: &Caller,
        name: &str,
        tag_type: &TagTypeUpdate,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateTagType)])
            .await?;
        refuse_simple(name)?;
        if let Some(Some(color)) = &tag_type.color
            && !crate::import::is_colour(color)
        {
            return Err(Error::invalid_at(
                "color",
                format!("\"{color}\" is not a colour #RRGGBB"),
            ));
        }
        self.change("update_tag_type", permit, |tx| {
            Box::pin(async move {
                let key = tag_type_key(name);
                let current: TagTypeRecord = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| tag_type_not_found(name))?;
                let mut updated = current.clone();
                if tag_type.description.is_some() {
                    updated.description.clone_from(&tag_type.description);
                }
                if let Some(icon) = &tag_type.icon {
                    updated.icon.clone_from(icon);
                }
                if let Some(color) = &tag_type.color {
                    updated.color.clone_from(color);
                }
                tx.replace(&key, &current, &updated, "tag-type-updated", None)?;
                Ok(())
            })
        })
        .await
    }

    /// Delete the tag type `name`. Needs `CREATE_TAG_TYPE` (which holds Unleash's
    /// `DELETE_TAG_TYPE` here). `simple` is refused (400). While a flag has a tag of the
    /// type, refused with [`Error::InUse`] (409 `ConflictError`) naming the flags, where
    /// Unleash 6.10.1 silently untags them. The type's tags (on no flag) are deleted with it,
    /// a `tag-deleted` event each. Event `tag-type-deleted`.
    pub async fn delete_tag_type(&self, caller: &Caller, name: &str) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateTagType)])
            .await?;
        refuse_simple(name)?;
        self.change("delete_tag_type", permit, |tx| {
            Box::pin(async move {
                let key = tag_type_key(name);
                let current: TagTypeRecord = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| tag_type_not_found(name))?;
                let listing = tx.list(Collection::FeatureTags, "").await?;
                let mut flags = Vec::new();
                for (flag, record) in &listing.records {
                    let tags: super::records::FeatureTagsRecord = super::records::decode(
                        &Key::new(Collection::FeatureTags, flag.clone()),
                        &record.value,
                    )?;
                    if tags.tags.iter().any(|t| t.tag_type == name) {
                        flags.push(format!("\"{flag}\""));
                    }
                }
                flags.sort();
                if !flags.is_empty() {
                    return Err(Error::InUse {
                        message: format!(
                            "The tag type \"{name}\" is in use by the flags {}: remove their tags of this type first.",
                            flags.join(", ")
                        ),
                        details: flags
                            .iter()
                            .map(|f| ErrorDetail::general(format!("flag {f} has a tag of this type")))
                            .collect(),
                    });
                }
                // Its tags on no flag go with it (Unleash's database drops them too).
                let tags = tx
                    .list(Collection::Tags, &format!("{name}{}", super::records::SEP))
                    .await?;
                for (id, record) in &tags.records {
                    tx.delete(Key::new(Collection::Tags, id.clone())).record(
                        "tag-deleted",
                        None,
                        None,
                        None,
                        Some(record.value.clone()),
                        None,
                    );
                }
                tx.delete(key.clone()).record(
                    "tag-type-deleted",
                    None,
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

    /// Whether `tag_type` could be created: `Ok` when its name is valid and free,
    /// [`Error::NameExists`] when taken, a validation error otherwise.
    pub async fn validate_tag_type(&self, caller: &Caller, tag_type: &TagType) -> Result<()> {
        self.require(caller, &[]).await?;
        if let Some(problem) = crate::import::tag_type_name_problem(&tag_type.name) {
            return Err(Error::invalid_at("name", problem));
        }
        let (_, all) = self.reader().tag_type_map().await?;
        if all.contains_key(&tag_type.name) {
            return Err(Error::name_exists(format!(
                "A tag type named \"{}\" already exists.",
                tag_type.name
            )));
        }
        Ok(())
    }

    /// Every tag type, `simple` included, by name.
    pub async fn tag_types(&self, caller: &Caller) -> Result<Vec<TagType>> {
        self.require(caller, &[]).await?;
        Ok(self
            .reader()
            .tag_type_map()
            .await?
            .1
            .into_values()
            .collect())
    }

    /// The tag type `name`.
    pub async fn tag_type(&self, caller: &Caller, name: &str) -> Result<TagType> {
        self.require(caller, &[]).await?;
        let (_, mut all) = self.reader().tag_type_map().await?;
        all.remove(name).ok_or_else(|| tag_type_not_found(name))
    }
}

/// The wire view of a stored context field.
pub(crate) fn context_field_view(record: &ContextFieldRecord) -> ContextField {
    ContextField {
        name: record.name.clone(),
        description: Some(record.description.clone()),
        stickiness: Some(record.stickiness),
        sort_order: Some(record.sort_order),
        legal_values: Some(record.legal_values.clone()),
        created_at: Some(Some(record.created_at)),
        ..ContextField::default()
    }
}

/// The stored form of a tag type.
pub(crate) fn tag_type_record(tag_type: &TagType) -> TagTypeRecord {
    TagTypeRecord {
        name: tag_type.name.clone(),
        description: tag_type.description.clone(),
        icon: tag_type.icon.clone().flatten(),
        color: tag_type.color.clone().flatten(),
    }
}

/// The wire view of a stored tag type.
pub(crate) fn tag_type_view(record: &TagTypeRecord) -> TagType {
    TagType {
        name: record.name.clone(),
        description: record.description.clone(),
        icon: Some(record.icon.clone()),
        color: Some(record.color.clone()),
        ..TagType::default()
    }
}

/// The parameter types Unleash knows.
const PARAMETER_TYPES: [&str; 5] = ["string", "percentage", "list", "number", "boolean"];

/// 400 naming every parameter whose name is empty, repeated, too long or has control
/// characters, or whose type is not one of Unleash's.
fn parameter_problems(parameters: &[crate::model::StrategyParameter]) -> Result<()> {
    let mut problems = Vec::new();
    for (i, parameter) in parameters.iter().enumerate() {
        if parameter.name.is_empty()
            || display_name_problem(&parameter.name, MAX_NAME).is_some()
            || parameters.iter().take(i).any(|p| p.name == parameter.name)
        {
            problems.push(ErrorDetail::at(
                format!("parameters[{i}].name"),
                "parameter names must be non-empty, unique, at most 255 characters and free of control characters",
            ));
        }
        if !PARAMETER_TYPES.contains(&parameter.parameter_type.as_str()) {
            problems.push(ErrorDetail::at(
                format!("parameters[{i}].type"),
                format!(
                    "\"{}\" is not a parameter type; use one of {}",
                    parameter.parameter_type,
                    PARAMETER_TYPES.join(", ")
                ),
            ));
        }
    }
    match problems.as_slice() {
        [] => Ok(()),
        [one] => Err(Error::validation(one.to_string(), problems)),
        _ => Err(Error::validation(
            "Some parameters are not valid.",
            problems,
        )),
    }
}

fn strategy_not_found(name: &str) -> Error {
    Error::not_found(format!("There's no strategy definition named \"{name}\"."))
}

fn tag_type_not_found(name: &str) -> Error {
    Error::not_found(format!("There's no tag type named \"{name}\"."))
}

/// `simple` is built in: it cannot change or go.
fn refuse_simple(name: &str) -> Result<()> {
    if name == crate::import::SIMPLE_TAG_TYPE {
        return Err(Error::invalid_at(
            "name",
            "the tag type \"simple\" is built in and cannot be changed or deleted",
        ));
    }
    Ok(())
}
