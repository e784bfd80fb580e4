//! Access records (users, groups, roles, project access, applications) round-trip.

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

use super::{Present, ScenarioFailure, Step, ensure_empty, ensure_eq, ensure_none, scenario};

/// Users, groups, roles, project access and applications round-trip exactly, in one commit
/// across collections: negative and large integers, nested arrays and objects, nulls,
/// non-ASCII text. Numeric ids list in byte order (`"10"` before `"9"`), and an application
/// with its instances goes in one delete.
pub async fn access_records_round_trip(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("access_records_round_trip", async {
        let records = [
            (
                Key::new(Collection::Users, "9"),
                json!({"id": 9, "username": "zoë", "email": null, "rootRole": 3,
                       "createdAt": "2024-01-01T00:00:00.123Z"}),
            ),
            (
                Key::new(Collection::Users, "10"),
                json!({"id": 10, "email": "a@example.com", "rootRole": 1}),
            ),
            (
                Key::new(Collection::Groups, "1"),
                json!({"id": 1, "name": "Ops 🚀", "users": [9, 10, 9_007_199_254_740_991_i64]}),
            ),
            (
                Key::new(Collection::Roles, "6"),
                json!({"id": 6, "name": "Variants", "type": "custom", "permissions": [
                    {"name": "UPDATE_FEATURE_ENVIRONMENT_VARIANTS", "environment": "production"},
                    {"name": "UPDATE_FEATURE"}
                ]}),
            ),
            (
                Key::new(Collection::ProjectAccess, "default"),
                json!({"roles": [{"id": 4, "groups": [], "users": [10]},
                                 {"id": 5, "groups": [1], "users": [-1]}]}),
            ),
            (
                Key::new(Collection::Applications, "billing service"),
                json!({"name": "billing service", "instances": [
                    {"instanceId": "i-1", "sdkVersion": "unleash-client-node:5.0.0",
                     "lastSeen": "2024-01-01T00:00:00.000Z"},
                    {"instanceId": "i-2"}
                ]}),
            ),
            (Key::new(Collection::Sequences, "users"), json!(10)),
        ];
        let mut changes = ChangeSet::new();
        for (key, value) in &records {
            changes
                .expect_revision(key.clone(), Revision::ABSENT)
                .put(key.clone(), value.clone());
        }
        let revision = store
            .commit(changes)
            .await
            .step("commit of the access records")?;
        let keys: Vec<Key> = records.iter().map(|(key, _)| key.clone()).collect();
        let read = store
            .get_many(&keys)
            .await
            .step("get_many of the access records")?;
        ensure_eq(
            read.len(),
            keys.len(),
            "the number of records get_many answered",
        )?;
        for ((key, value), got) in records.iter().zip(&read) {
            let got = got
                .as_ref()
                .present(format_args!("{key} after its commit"))?;
            ensure_eq(&got.value, value, format_args!("the value of {key}"))?;
            ensure_eq(
                got.revision,
                revision,
                format_args!("the revision of {key} (the commit's)"),
            )?;
        }
        let users = store
            .list(Collection::Users, "")
            .await
            .step("list of the users")?;
        let ids: Vec<_> = users.records.iter().map(|(id, _)| id.as_str()).collect();
        ensure_eq(ids, ["10", "9"], "the ids of the users, in order")?;
        ensure_eq(
            users.revision,
            revision,
            "the revision of the users' listing (the commit's)",
        )?;

        let application = Key::new(Collection::Applications, "billing service");
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(application.clone(), revision)
            .delete(application.clone());
        store
            .commit(changes)
            .await
            .step("commit deleting the application")?;
        ensure_none(
            store
                .get(&application)
                .await
                .step("get of the application")?,
            "the application after its delete",
        )?;
        ensure_empty(
            &store
                .list(Collection::Applications, "")
                .await
                .step("list of the applications")?
                .records,
            "the applications after the only one was deleted",
        )?;
        store
            .get(&Key::new(Collection::Users, "9"))
            .await
            .step("get of user 9")?
            .present("user 9 after an application's delete")?;
        Ok(())
    })
    .await
}
