//! Access records (users, groups, roles, project access, applications) round-trip.

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

/// Users, groups, roles, project access and applications round-trip exactly, in one commit
/// across collections: negative and large integers, nested arrays and objects, nulls,
/// non-ASCII text. Numeric ids list in byte order (`"10"` before `"9"`), and an application
/// with its instances goes in one delete.
pub async fn access_records_round_trip(store: &dyn Store) {
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
    let revision = store.commit(changes).await.unwrap();
    let keys: Vec<Key> = records.iter().map(|(key, _)| key.clone()).collect();
    let read = store.get_many(&keys).await.unwrap();
    for ((key, value), got) in records.iter().zip(&read) {
        let got = got.as_ref().unwrap_or_else(|| panic!("{key} is missing"));
        assert_eq!(got.value, *value, "{key}");
        assert_eq!(got.revision, revision, "{key}");
    }
    let users = store.list(Collection::Users, "").await.unwrap();
    let ids: Vec<_> = users.records.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["10", "9"]);
    assert_eq!(users.revision, revision);

    let application = Key::new(Collection::Applications, "billing service");
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(application.clone(), revision)
        .delete(application.clone());
    store.commit(changes).await.unwrap();
    assert_eq!(store.get(&application).await.unwrap(), None);
    assert!(
        store
            .list(Collection::Applications, "")
            .await
            .unwrap()
            .records
            .is_empty()
    );
    assert!(store.get(&keys[0]).await.unwrap().is_some());
}
