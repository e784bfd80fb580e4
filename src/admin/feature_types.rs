//! Feature types: Unleash's five built-in kinds of flag (`release`, `experiment`,
//! `operational`, `kill-switch`, `permission`), with the lifetime after which a flag of the
//! kind is potentially stale; the lifetimes can be changed.
//!
//! The types themselves are built in, as in Unleash (which has no way to add one); only a
//! lifetime that differs from Unleash's is stored, one record per type.

use super::reader::Reader;
use super::records::{FeatureTypeRecord, decode, encode, feature_type_key};
use super::{Authority, Need, ToggleAdmin};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::model::{FeatureType, FeatureTypeLifetime, Permission};
use crate::store::{Collection, Json, Key};

/// Unleash's built-in feature types: id, name, description, default lifetime in days.
const BUILTIN: [(&str, &str, &str, Option<u32>); 5] = [
    (
        "release",
        "Release",
        "Release feature toggles are used to release new features.",
        Some(40),
    ),
    (
        "experiment",
        "Experiment",
        "Experiment feature toggles are used to test and verify multiple different versions of a feature.",
        Some(40),
    ),
    (
        "operational",
        "Operational",
        "Operational feature toggles are used to control aspects of a rollout.",
        Some(7),
    ),
    (
        "kill-switch",
        "Kill switch",
        "Kill switch feature toggles are used to quickly turn on or off critical functionality in your system.",
        None,
    ),
    (
        "permission",
        "Permission",
        "Permission feature toggles are used to control permissions in your system.",
        None,
    ),
];

/// The largest lifetime Unleash's schema takes (a PostgreSQL `integer`).
const MAX_LIFETIME_DAYS: i64 = 2_147_483_647;

impl ToggleAdmin {
    /// Every feature type, in Unleash's order, with its lifetime now. Any valid key may read
    /// them.
    pub async fn feature_types(&self, caller: &Caller) -> Result<Vec<FeatureType>> {
        self.require(caller, &[]).await?;
        self.feature_types_in(self.reader()).await
    }

    /// Every feature type with its lifetime now, read through `reader`.
    pub(super) async fn feature_types_in(&self, reader: Reader<'_>) -> Result<Vec<FeatureType>> {
        let listing = reader.list(Collection::FeatureTypes, "").await?;
        let mut types = Vec::with_capacity(BUILTIN.len());
        for (id, name, description, lifetime) in BUILTIN {
            let lifetime_days = match listing.records.iter().find(|(stored, _)| stored == id) {
                Some((_, record)) => {
                    let set: FeatureTypeRecord = decode(&feature_type_key(id), &record.value)?;
                    set.lifetime_days
                }
                None => lifetime,
            };
            types.push(FeatureType {
                id: id.to_owned(),
                name: name.to_owned(),
                description: description.to_owned(),
                lifetime_days,
            });
        }
        Ok(types)
    }

    /// Set the lifetime of the feature type `id`: `PUT
    /// /api/admin/feature-types/{id}/lifetime`. Needs `ADMIN`, as in Unleash. Returns the
    /// type as it is now.
    ///
    /// `lifetimeDays` is required: `0` and `null` both mean "never potentially stale" (Unleash
    /// stores `0` as `null`); otherwise days, at most 2,147,483,647; a negative number or one
    /// out of range is a 400 at `lifetimeDays`. An unknown type is a 404. Stored durably; event
    /// `feature-type-updated` with the type before and after (setting the lifetime it has
    /// writes nothing).
    pub async fn set_feature_type_lifetime<'a>(
        &self,
        authority: impl Into<Authority<'a>>,
        id: &str,
        lifetime: &FeatureTypeLifetime,
    ) -> Result<FeatureType> {
        let permit = self
            .admit(authority.into(), &[Need::root(Permission::Admin)])
            .await?;
        let days = match lifetime.lifetime_days {
            None => {
                return Err(Error::invalid_at(
                    "lifetimeDays",
                    "lifetimeDays is required: a number of days, or 0 or null for never",
                ));
            }
            Some(None) | Some(Some(0)) => None,
            Some(Some(days)) if (1..=MAX_LIFETIME_DAYS).contains(&days) => u32::try_from(days).ok(),
            Some(Some(days)) => {
                return Err(Error::invalid_at(
                    "lifetimeDays",
                    format!("lifetimeDays must be between 0 and {MAX_LIFETIME_DAYS}, not {days}"),
                ));
            }
        };
        let Some((_, name, description, builtin)) = BUILTIN.iter().find(|t| t.0 == id) else {
            return Err(Error::not_found(format!(
                "The feature type you tried to update (\"{id}\") does not exist."
            )));
        };
        let view = |lifetime_days| FeatureType {
            id: id.to_owned(),
            name: (*name).to_owned(),
            description: (*description).to_owned(),
            lifetime_days,
        };
        let view = &view;
        self.change("set_feature_type_lifetime", permit, |tx| {
            Box::pin(async move {
                let key: Key = feature_type_key(id);
                let stored: Option<FeatureTypeRecord> = tx
                    .get(&key)
                    .await?
                    .map(|r| decode(&key, &r.value))
                    .transpose()?;
                let before = stored.map_or(*builtin, |s| s.lifetime_days);
                if before == days {
                    return Ok(view(days));
                }
                // Unleash's own lifetime is not stored: a record only says it differs.
                if days == *builtin {
                    tx.delete(key);
                } else {
                    let record = encode(
                        &key,
                        &FeatureTypeRecord {
                            lifetime_days: days,
                        },
                    )?;
                    tx.put(key, record);
                }
                tx.record(
                    "feature-type-updated",
                    None,
                    None,
                    None,
                    Some(Json::of(&view(before))),
                    Some(Json::of(&view(days))),
                );
                Ok(view(days))
            })
        })
        .await
    }
}
