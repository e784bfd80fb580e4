//! Maintenance mode: while it is on, every change is refused (503 `MaintenanceModeError`),
//! and reads, the SDKs' APIs and their metrics and registrations go on.
//!
//! The switch is a record of the store (`settings/maintenance.mode`, `{enabled}`), so every
//! instance over one PostgreSQL database obeys it at once. The flow (`flow.rs`) enforces it
//! for every write: before a write decides, it learns whether maintenance is on, and its
//! commit expects the switch's record at the revision learnt. So a write that was admitted
//! just before maintenance was turned on, here or on another instance, conflicts at its
//! commit, looks again, and is refused: no write lands after the switch's commit.
//!
//! What an instance learnt of the switch is kept between writes only as a guess that each
//! commit checks (the record's revision is one of its preconditions), never as a truth that
//! could let a write through late: a conflict forgets it, and a guess that maintenance is on
//! is read again before a write is refused.

use std::sync::Mutex;

use serde_json::json;

use super::permit::Need;
use super::records::{decode_opt, encode};
use super::{Authority, ToggleAdmin};
use crate::error::{Error, Result};
use crate::model::{MaintenanceMode, Permission};
use crate::store::{Collection, Key, Revision};

/// The name of the switch's record, Unleash's setting name.
const MAINTENANCE_SETTING: &str = "maintenance.mode";

/// The message of a write refused in maintenance mode, Unleash's.
const REFUSED: &str = "Unleash is currently in maintenance mode.";

/// The key of the switch's record.
pub(crate) fn maintenance_key() -> Key {
    Key::new(Collection::Settings, MAINTENANCE_SETTING)
}

/// What this instance last learnt of the switch: its record's revision and whether it is
/// on. A guess each commit checks (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct MaintenanceSeen {
    seen: Mutex<Option<(Revision, bool)>>,
}

impl MaintenanceSeen {
    fn get(&self) -> Option<(Revision, bool)> {
        self.seen.lock().ok().and_then(|seen| *seen)
    }

    fn set(&self, value: Option<(Revision, bool)>) {
        if let Ok(mut seen) = self.seen.lock() {
            *seen = value;
        }
    }
}

impl ToggleAdmin {
    /// Whether the service is in maintenance mode (`GET /api/admin/maintenance`), read from
    /// the store. Any admin-API key may ask (Unleash asks for `ADMIN` here, but tells every
    /// signed-in user through its UI configuration; the admin page shows it to everyone).
    pub async fn maintenance<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
    ) -> Result<MaintenanceMode> {
        self.admit(authority.into(), &[]).await?;
        Ok(MaintenanceMode {
            enabled: self.read_maintenance().await?.1,
        })
    }

    /// Turn maintenance mode on or off (`POST /api/admin/maintenance`). Root admins only
    /// (`ADMIN`): anyone else → [`Error::NoAccess`]. Allowed while maintenance is on (that is
    /// how it is turned off). Records Unleash's event for a setting: `setting-created` the
    /// first time, then `setting-updated`, with `{id: "maintenance.mode", enabled}` (and the
    /// previous value as `preData`).
    pub async fn set_maintenance<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        mode: &MaintenanceMode,
    ) -> Result<()> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::Admin)])
            .await?;
        let enabled = mode.enabled;
        self.change_in_maintenance("set_maintenance", permit, |tx| {
            Box::pin(async move {
                let key = maintenance_key();
                let record = tx.get(&key).await?;
                let before: Option<MaintenanceMode> = decode_opt(&key, record.as_ref())?;
                let after = MaintenanceMode { enabled };
                tx.put(key.clone(), encode(&key, &after)?);
                let data = json!({"id": MAINTENANCE_SETTING, "enabled": enabled});
                match before {
                    Some(before) => tx.record(
                        "setting-updated",
                        None,
                        None,
                        None,
                        Some(encode(&key, &before)?),
                        Some(encode(&key, &data)?),
                    ),
                    None => tx.record(
                        "setting-created",
                        None,
                        None,
                        None,
                        None,
                        Some(encode(&key, &data)?),
                    ),
                };
                Ok(())
            })
        })
        .await?;
        self.maintenance_seen.set(None);
        Ok(())
    }

    /// The switch as the store has it now: its record's revision and whether it is on.
    pub(super) async fn read_maintenance(&self) -> Result<(Revision, bool)> {
        let key = maintenance_key();
        let record = self.store.get(&key).await?;
        let mode: Option<MaintenanceMode> = decode_opt(&key, record.as_ref())?;
        let seen = (
            record.map_or(Revision::ABSENT, |r| r.revision),
            mode.is_some_and(|m| m.enabled),
        );
        self.maintenance_seen.set(Some(seen));
        Ok(seen)
    }

    /// For a write that maintenance mode refuses: [`Error::Maintenance`] when it is on, else
    /// the switch's record with the revision its commit must find (the flow adds it to the
    /// commit's preconditions).
    pub(super) async fn maintenance_precondition(&self) -> Result<(Key, Revision)> {
        let (revision, enabled) = match self.maintenance_seen.get() {
            Some((revision, false)) => (revision, false),
            // Refuse only on what the store says now: another instance may have turned it
            // off.
            _ => self.read_maintenance().await?,
        };
        if enabled {
            return Err(Error::Maintenance {
                message: REFUSED.to_owned(),
            });
        }
        Ok((maintenance_key(), revision))
    }

    /// Forget what was learnt of the switch (after a conflict: it may have changed).
    pub(super) fn forget_maintenance(&self) {
        self.maintenance_seen.set(None);
    }
}
