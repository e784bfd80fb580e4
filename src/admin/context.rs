//! Context fields: what constraints and stickiness refer to (create, read, list).

use chrono::Utc;

use super::catalog::context_field_view;
use super::records::{ContextFieldRecord, context_field_key, encode};
use super::{Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::import::is_builtin_context_field;
use crate::model::ContextField;
use crate::model::Permission;
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
        if description
            .as_ref()
            .is_some_and(|d| d.chars().count() > 250)
        {
            problems.push(ErrorDetail::at(
                "description",
                "a description has at most 250 characters",
            ));
        }
        let legal_values = field.legal_values.clone().unwrap_or_default();
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
