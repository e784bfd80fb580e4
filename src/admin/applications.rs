//! Registered client applications: register, read, and delete (the third operation of the
//! specification).
//!
//! An application and its instances are one record, so deleting the application removes
//! its instances in the same write: no instance can outlive its application.

use super::records::{decode_opt, encode};
use super::users::decode_listing;
use super::{Authority, Need, Permit, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, ErrorDetail, Result};
use crate::model::Permission;
use crate::model::{Application, ApplicationLinks};
use crate::store::{Collection, Key};

pub(super) fn application_key(name: &str) -> Key {
    Key::new(Collection::Applications, name)
}

/// What is wrong with `name` as an application name, if anything: it must have a visible
/// character and no control characters (which no SDK sends, and some stores refuse).
fn name_problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("an application name must not be empty")
    } else if name.chars().any(char::is_control) {
        Some("an application name must not contain control characters")
    } else {
        None
    }
}

/// What registering or deleting an application needs.
fn application_needs() -> [Need<'static>; 1] {
    [Need::root(Permission::UpdateApplication)]
}

fn application_not_found(name: &str) -> Error {
    Error::not_found(format!("Could not find appName={name}"))
}

impl ToggleAdmin {
    /// Register `application` or update its registration: `POST
    /// /api/admin/metrics/applications/{appName}`. Needs `UPDATE_APPLICATION`.
    ///
    /// A new application is stored as given (event `application-created`). For a known one,
    /// the fields given replace the stored ones, fields left out keep their value, and the
    /// instances given replace stored instances with the same `instanceId` and add the
    /// others (event `application-updated`). A registration that changes nothing writes
    /// nothing. The name must not be empty; instance ids must not be empty.
    pub async fn register_application<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        application: &Application,
    ) -> Result<Application> {
        let permit = self.admit(authority.into(), &application_needs()).await?;
        let mut problems = Vec::new();
        if let Some(problem) = name_problem(&application.name) {
            problems.push(ErrorDetail::at("name", problem));
        }
        for (i, instance) in application.instances.iter().enumerate() {
            if instance.instance_id.trim().is_empty() {
                problems.push(ErrorDetail::at(
                    format!("instances[{i}].instanceId"),
                    "an instance id must not be empty",
                ));
            }
        }
        if !problems.is_empty() {
            return Err(Error::validation("The application is not valid.", problems));
        }
        self.change("register_application", permit, |tx| {
            Box::pin(async move {
                let key = application_key(&application.name);
                let record = tx.get(&key).await?;
                let current: Option<Application> = decode_opt(&key, record.as_ref())?;
                let merged = match &current {
                    None => stored_form(application),
                    Some(stored) => merge(stored, application),
                };
                if current.as_ref() == Some(&merged) {
                    return Ok(read_form(merged));
                }
                tx.put(key.clone(), encode(&key, &merged)?).record(
                    if current.is_some() {
                        "application-updated"
                    } else {
                        "application-created"
                    },
                    None,
                    None,
                    None,
                    current.as_ref().map(|c| encode(&key, c)).transpose()?,
                    Some(encode(&key, &merged)?),
                );
                Ok(read_form(merged))
            })
        })
        .await
    }

    /// Admit `caller` to register or delete applications, before a body is read (the HTTP
    /// order of checks: permission before body shape); the operations take this permit.
    pub async fn permit_application_change(&self, caller: &Caller) -> Result<Permit> {
        self.permit(caller, &application_needs()).await
    }

    /// Every registered application with its instances, by name. Any valid key may read
    /// them.
    pub async fn applications(&self, caller: &Caller) -> Result<Vec<Application>> {
        self.require(caller, &[]).await?;
        let mut listing = self.store.list(Collection::Applications, "").await?;
        // Client metrics share the collection under ids no application name can have.
        listing
            .records
            .retain(|(id, _)| !id.starts_with(super::records::SEP));
        let applications: Vec<Application> = decode_listing(Collection::Applications, &listing)?;
        Ok(applications
            .into_iter()
            .map(|a| read_form(self.without_stale_instances(a)))
            .collect())
    }

    /// The application `name` with its instances. Any valid key may read it; an unknown
    /// name → [`Error::NotFound`] `Could not find appName=<name>`, as Unleash says.
    pub async fn application(&self, caller: &Caller, name: &str) -> Result<Application> {
        self.require(caller, &[]).await?;
        let key = application_key(name);
        if name.starts_with(super::records::SEP) {
            return Err(application_not_found(name));
        }
        decode_opt(&key, self.store.get(&key).await?.as_ref())?
            .map(|a| read_form(self.without_stale_instances(a)))
            .ok_or_else(|| application_not_found(name))
    }

    /// Delete the application `name` and all its registered instances: `DELETE
    /// /api/admin/metrics/applications/{appName}`. Needs `UPDATE_APPLICATION` (Admin and
    /// Editor have it, Viewer not).
    ///
    /// Succeeds whether or not the application existed (200 with no body, as Unleash). The
    /// application and its instances go in one atomic commit with one
    /// `application-deleted` event, written only when something was deleted: deleting twice,
    /// or concurrently, records one event. (Unleash records no event, and deletes instances
    /// and application in two statements.) An empty name → [`Error::Validation`].
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
    /// // Deleting an application that never registered succeeds too (as in Unleash).
    /// admin.delete_application(&caller, "checkout-service").await?;
    /// # Ok(()) }
    /// ```
    pub async fn delete_application<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        name: &str,
    ) -> Result<()> {
        let permit = self.admit(authority.into(), &application_needs()).await?;
        if let Some(problem) = name_problem(name) {
            return Err(Error::invalid_at("appName", problem));
        }
        self.change("delete_application", permit, |tx| {
            Box::pin(async move {
                let key = application_key(name);
                let record = tx.get(&key).await?;
                let Some(current) = decode_opt::<Application>(&key, record.as_ref())? else {
                    return Ok(());
                };
                // The precondition makes concurrent deletes agree on who deleted it: the others
                // re-read, find nothing, and record nothing.
                tx.delete(key.clone()).record(
                    "application-deleted",
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
}

/// `update` registered over `stored`: given fields win, instances merge by id.
pub(super) fn merge(stored: &Application, update: &Application) -> Application {
    let pick = |new: &Option<String>, old: &Option<String>| new.clone().or_else(|| old.clone());
    let mut instances = stored.instances.clone();
    for instance in &update.instances {
        match instances
            .iter_mut()
            .find(|i| i.instance_id == instance.instance_id)
        {
            Some(existing) => *existing = instance.clone(),
            None => instances.push(instance.clone()),
        }
    }
    Application {
        name: stored.name.clone(),
        description: pick(&update.description, &stored.description),
        url: pick(&update.url, &stored.url),
        color: pick(&update.color, &stored.color),
        icon: pick(&update.icon, &stored.icon),
        sdk_version: pick(&update.sdk_version, &stored.sdk_version),
        strategies: if update.strategies.is_empty() {
            stored.strategies.clone()
        } else {
            update.strategies.clone()
        },
        created_at: stored.created_at.or(update.created_at),
        instances,
        seen_toggles: Vec::new(),
        links: None,
    }
}

/// An application as stored: no links, a creation time.
pub(super) fn stored_form(application: &Application) -> Application {
    Application {
        created_at: application.created_at.or_else(|| Some(chrono::Utc::now())),
        seen_toggles: Vec::new(),
        links: None,
        ..application.clone()
    }
}

/// An application as read: with its links.
fn read_form(mut application: Application) -> Application {
    application.links = Some(ApplicationLinks::of(&application.name));
    application
}
