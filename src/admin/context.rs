//! Context fields: what constraints and stickiness refer to (create, read, list, update,
//! delete, legal values, the strategies using one).

use chrono::Utc;

use super::catalog::context_field_view;
use super::records::in_use;
use super::records::{ContextFieldRecord, context_field_key, decode_opt, encode};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::import::is_builtin_context_field;
use crate::model::Permission;
use crate::model::{ContextField, ContextFieldUpdate, LegalValue, StrategyUse};
use crate::names::name_problem;

impl ToggleAdmin {
    /// Create a context field. Needs `CREATE_CONTEXT_FIELD`.
    ///
    /// Unleash's rules: the name is 1–100 URL-friendly characters and not taken (the
    /// built-ins `environment`, `userId`, `appName`, `currentTime`, `sessionId`,
    /// `remoteAddress` included) → [`Error::NameExists`]; the description has at most 250
    /// characters; legal values have 1–100 characters and are unique. Every problem is
    /// listed. Event `context-field-created`.
    pub async fn create_context_field(
        &self,
        caller: &Caller,
        field: &ContextField,
    ) -> Result<ContextField> {
        let permit = self
            .permit(caller, &[Need::root(Permission::CreateContextField)])
            .await?;
        let mut problems = Vec::new();
        if let Some(problem) = name_problem(&field.name, 100) {
            problems.push(ErrorDetail::at("name", problem));
        }
        let description = field.description.clone().flatten();
        let legal_values = field.legal_values.clone().unwrap_or_default();
        problems.extend(field_problems(description.as_deref(), &legal_values));
        if !problems.is_empty() {
            return Err(Error::validation(
                "The context field is not valid.",
                problems,
            ));
        }
        let taken = || {
            Error::name_exists(format!(
                "A context field named \"{}\" already exists.",
                field.name
            ))
        };
        if is_builtin_context_field(&field.name) {
            return Err(taken());
        }
        let record = ContextFieldRecord {
            name: field.name.clone(),
            description,
            stickiness: field.stickiness.unwrap_or(false),
            sort_order: field.sort_order.unwrap_or(0),
            legal_values,
            created_at: Utc::now(),
        };
        let key = context_field_key(&record.name);
        let value = encode(&key, &record)?;
        self.create_absent(
            permit,
            "create_context_field",
            key,
            value,
            "context-field-created",
            taken,
        )
        .await?;
        Ok(context_field_view(&record))
    }

    /// Every context field, built-ins included, by name. Any valid key may read them.
    pub async fn context_fields(&self, caller: &Caller) -> Result<Vec<ContextField>> {
        self.require(caller, &[]).await?;
        Ok(self
            .reader()
            .context_field_map()
            .await?
            .1
            .into_values()
            .collect())
    }

    /// The context field `name` (built-in or custom).
    pub async fn context_field(&self, caller: &Caller, name: &str) -> Result<ContextField> {
        self.require(caller, &[]).await?;
        let (_, mut all) = self.reader().context_field_map().await?;
        all.remove(name)
            .ok_or_else(|| Error::not_found(format!("There's no context field named \"{name}\".")))
    }
}

/// The problems of a context field's description (at most 250 characters) and legal values
/// (1–100 characters, unique by value).
fn field_problems(description: Option<&str>, legal_values: &[LegalValue]) -> Vec<ErrorDetail> {
    let mut problems = Vec::new();
    if description.is_some_and(|d| d.chars().count() > 250) {
        problems.push(ErrorDetail::at(
            "description",
            "a description has at most 250 characters",
        ));
    }
    for (i, legal) in legal_values.iter().enumerate() {
        let length = legal.value.chars().count();
        if !(1..=100).contains(&length) {
            problems.push(ErrorDetail::at(
                format!("legalValues[{i}].value"),
                "a legal value has 1–100 characters",
            ));
        } else if legal_values[..i].iter().any(|l| l.value == legal.value) {
            problems.push(ErrorDetail::at(
                format!("legalValues[{i}].value"),
                format!("the legal value \"{}\" is listed twice", legal.value),
            ));
        }
    }
    problems
}

fn context_field_not_found(name: &str) -> Error {
    Error::not_found(format!("There's no context field named \"{name}\"."))
}

/// Built-in fields are not stored and cannot change: a 400 naming the field, where Unleash
/// (which stores them) lets them be edited and deleted, to the SDKs' confusion.
fn refuse_builtin(name: &str) -> Result<()> {
    if is_builtin_context_field(name) {
        return Err(Error::invalid_at(
            "name",
            format!("\"{name}\" is a built-in context field and cannot be changed or deleted"),
        ));
    }
    Ok(())
}

impl ToggleAdmin {
    /// Change the context field `name`'s description, stickiness, sort order and legal values
    /// (what `update` leaves out stays). Needs `UPDATE_CONTEXT_FIELD`. The rules of
    /// [`create_context_field`](Self::create_context_field); built-in fields are refused
    /// (400). Event `context-field-updated` with the field before and after; an update that
    /// changes nothing writes nothing.
    pub async fn update_context_field(
        &self,
        caller: &Caller,
        name: &str,
        update: &ContextFieldUpdate,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateContextField)])
            .await?;
        refuse_builtin(name)?;
        if let Some(other) = &update.name
            && other != name
        {
            return Err(Error::invalid_at(
                "name",
                format!("a context field cannot be renamed (the path names \"{name}\")"),
            ));
        }
        let problems = field_problems(
            update.description.clone().flatten().as_deref(),
            update.legal_values.as_deref().unwrap_or_default(),
        );
        if !problems.is_empty() {
            return Err(Error::validation(
                "The context field is not valid.",
                problems,
            ));
        }
        self.change_context_field(permit, "update_context_field", name, |record| {
            if let Some(description) = &update.description {
                record.description.clone_from(description);
            }
            if let Some(stickiness) = update.stickiness {
                record.stickiness = stickiness;
            }
            if let Some(sort_order) = update.sort_order {
                record.sort_order = sort_order;
            }
            if let Some(legal_values) = &update.legal_values {
                record.legal_values.clone_from(legal_values);
            }
            Ok(())
        })
        .await
    }

    /// Add the legal value `legal` to the context field `name`, or change the description of
    /// the one with its value. Needs `UPDATE_CONTEXT_FIELD`. Event `context-field-updated`.
    pub async fn put_legal_value(
        &self,
        caller: &Caller,
        name: &str,
        legal: &LegalValue,
    ) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateContextField)])
            .await?;
        refuse_builtin(name)?;
        if !(1..=100).contains(&legal.value.chars().count()) {
            return Err(Error::invalid_at(
                "value",
                "a legal value has 1–100 characters",
            ));
        }
        self.change_context_field(permit, "put_legal_value", name, |record| {
            match record
                .legal_values
                .iter_mut()
                .find(|l| l.value == legal.value)
            {
                Some(existing) => existing.description.clone_from(&legal.description),
                None => record.legal_values.push(legal.clone()),
            }
            Ok(())
        })
        .await
    }

    /// Remove the legal value `value` from the context field `name` (404 when it has no
    /// such value). Needs `UPDATE_CONTEXT_FIELD`. Event `context-field-updated`.
    pub async fn delete_legal_value(&self, caller: &Caller, name: &str, value: &str) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateContextField)])
            .await?;
        refuse_builtin(name)?;
        self.change_context_field(permit, "delete_legal_value", name, |record| {
            let before = record.legal_values.len();
            record.legal_values.retain(|l| l.value != value);
            if record.legal_values.len() == before {
                return Err(Error::not_found(format!(
                    "The context field \"{name}\" has no legal value \"{value}\"."
                )));
            }
            Ok(())
        })
        .await
    }

    /// Read the context field `name` in a transaction, `edit` it, and write it with a
    /// `context-field-updated` event unless nothing changed.
    async fn change_context_field(
        &self,
        permit: super::Permit,
        what: &'static str,
        name: &str,
        edit: impl Fn(&mut ContextFieldRecord) -> Result<()> + Send + Sync,
    ) -> Result<()> {
        let edit = &edit;
        self.change(what, permit, |tx| {
            Box::pin(async move {
                let key = context_field_key(name);
                let current: ContextFieldRecord = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| context_field_not_found(name))?;
                let mut updated = current.clone();
                edit(&mut updated)?;
                tx.replace(&key, &current, &updated, "context-field-updated", None)?;
                Ok(())
            })
        })
        .await
    }

    /// Delete the context field `name`. Needs `UPDATE_CONTEXT_FIELD` (which holds Unleash's
    /// `DELETE_CONTEXT_FIELD` here).
    ///
    /// Refused while a flag's strategy has a constraint on it ([`Error::InUse`], 409
    /// `ConflictError`, each strategy in `details`), or a segment does (400 naming the
    /// segments): Unleash 6.10.1 deletes it and leaves the constraints testing a field that
    /// no longer exists. Built-in fields are refused (400). The check and the deletion are
    /// one commit. Event `context-field-deleted` with the field as `preData`.
    pub async fn delete_context_field(&self, caller: &Caller, name: &str) -> Result<()> {
        let permit = self
            .permit(caller, &[Need::root(Permission::UpdateContextField)])
            .await?;
        refuse_builtin(name)?;
        self.change("delete_context_field", permit, |tx| {
            Box::pin(async move {
                let key = context_field_key(name);
                let current: ContextFieldRecord = decode_opt(&key, tx.get(&key).await?.as_ref())?
                    .ok_or_else(|| context_field_not_found(name))?;
                let uses = tx.reader().strategy_uses(|s| {
                    s.constraints.iter().any(|c| c.context_name == name)
                })
                .await?;
                if !uses.is_empty() {
                    return Err(in_use(&format!("The context field \"{name}\""), &uses));
                }
                let (_, segments) = tx.reader().segment_list().await?;
                let users: Vec<String> = segments
                    .iter()
                    .filter(|s| s.constraints.iter().any(|c| c.context_name == name))
                    .map(|s| format!("\"{}\"", s.name))
                    .collect();
                if !users.is_empty() {
                    return Err(Error::InUse {
                        message: format!(
                            "The context field \"{name}\" is in use by the segments {}: remove it from them first.",
                            users.join(", ")
                        ),
                        details: users
                            .iter()
                            .map(|s| ErrorDetail::general(format!("segment {s} uses it")))
                            .collect(),
                    });
                }
                tx.delete(key.clone()).record(
                    "context-field-deleted",
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

    /// Whether `name` is free for a new context field: `Ok` when it is,
    /// [`Error::NameExists`] when a field (built-in or custom) has it, a validation error
    /// when it is not a valid name.
    pub async fn validate_context_field_name(&self, caller: &Caller, name: &str) -> Result<()> {
        self.require(caller, &[]).await?;
        if let Some(problem) = name_problem(name, 100) {
            return Err(Error::invalid_at("name", problem));
        }
        let (_, all) = self.reader().context_field_map().await?;
        if all.contains_key(name) {
            return Err(Error::name_exists(format!(
                "A context field named \"{name}\" already exists."
            )));
        }
        Ok(())
    }

    /// The flags' strategies with a constraint on the context field `name` (404 when there
    /// is no such field).
    pub async fn context_field_strategies(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<Vec<StrategyUse>> {
        self.require(caller, &[]).await?;
        let (_, all) = self.reader().context_field_map().await?;
        if !all.contains_key(name) {
            return Err(context_field_not_found(name));
        }
        self.reader()
            .strategy_uses(|s| s.constraints.iter().any(|c| c.context_name == name))
            .await
    }
}
