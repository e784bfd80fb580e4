//! API keys through the library: expiry, honest lookup, revocation
//! that no concurrent write outlives (nor a rename of the user a key acts as: the author of
//! its changes), revoking twice, and create operations that only call a real name clash a
//! name clash.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use serde_json::json;
use test_support::access::user_with_key;
use test_support::facade::{all_events, patch};
use test_support::wrapped::{Behaviour, Wrapped};
use toggle_admin::async_trait;
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::{ChangeSet, Collection, Event, Key, Revision, Store, StoreError};
use toggle_admin::{Caller, Error, Grant, KeyAccess, MemoryStore, Permission, ToggleAdmin};

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------- 1. expiry

#[tokio::test]
async fn an_expired_key_is_refused_from_the_moment_it_expires() {
    let (admin, root) = test_support::facade::setup().await;
    let expires = Utc::now() + chrono::Duration::milliseconds(600);
    let key = admin
        .create_api_key_expiring(&root, "short-lived", KeyAccess::Admin, Some(expires))
        .await
        .unwrap();
    assert_eq!(key.info.expires_at, Some(expires));
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    admin.environments(&caller).await.unwrap();

    tokio::time::sleep(Duration::from_millis(700)).await;
    // A caller authenticated before the expiry is refused at its next call…
    let err = admin.environments(&caller).await.unwrap_err();
    assert!(
        matches!(err, Error::AuthenticationRequired { .. }),
        "{err:?}"
    );
    // … and the secret no longer authenticates.
    let err = admin.authenticate(Some(&key.secret)).await.unwrap_err();
    assert_eq!(err.status(), 401, "{err:?}");
    // Listings still show it, with its expiry.
    let listed = admin.api_keys(&root).await.unwrap();
    let it = listed.iter().find(|k| k.id == key.info.id).unwrap();
    assert_eq!(it.expires_at, Some(expires));
}

#[tokio::test]
async fn a_key_expiring_in_the_past_is_not_created() {
    let (admin, root) = test_support::facade::setup().await;
    let before = admin.api_keys(&root).await.unwrap().len();
    let events = all_events(&admin, &root).await.len();
    for past in [
        Utc::now() - chrono::Duration::seconds(1),
        Utc::now() - chrono::Duration::days(400),
    ] {
        let err = admin
            .create_api_key_expiring(&root, "late", KeyAccess::Admin, Some(past))
            .await
            .unwrap_err();
        assert_eq!(err.status(), 400, "{err:?}");
        assert_eq!(err.details()[0].path.as_deref(), Some("expiresAt"));
    }
    assert_eq!(admin.api_keys(&root).await.unwrap().len(), before);
    assert_eq!(all_events(&admin, &root).await.len(), events);
}

// ---------------------------------------------------------------- 3. honest lookup

#[tokio::test]
async fn a_key_differing_in_one_character_is_refused() {
    let (admin, root) = test_support::facade::setup().await;
    let key = admin
        .create_api_key(&root, "k", KeyAccess::Admin)
        .await
        .unwrap();
    admin.authenticate(Some(&key.secret)).await.unwrap();
    for i in [0, key.secret.len() / 2, key.secret.len() - 1] {
        let mut forged: Vec<char> = key.secret.chars().collect();
        forged[i] = if forged[i] == 'a' { 'b' } else { 'a' };
        let forged: String = forged.into_iter().collect();
        let err = admin.authenticate(Some(&forged)).await.unwrap_err();
        assert_eq!(err.status(), 401, "{forged}");
    }
    let mut longer = key.secret.clone();
    longer.push('0');
    assert_eq!(
        admin
            .authenticate(Some(&longer))
            .await
            .unwrap_err()
            .status(),
        401
    );
}

/// A store whose lookup is not exact (here: a record copied under another secret's id, as a
/// collation or a bug could answer) must not let that other secret in: the record's verifier
/// belongs to the original secret only.
#[tokio::test]
async fn a_record_found_under_another_secrets_id_does_not_verify() {
    let (admin, root) = test_support::facade::setup().await;
    let key = admin
        .create_api_key(&root, "k", KeyAccess::Admin)
        .await
        .unwrap();
    let genuine = admin
        .store()
        .get(&Key::new(Collection::ApiKeys, sha256_hex(&key.secret)))
        .await
        .unwrap()
        .unwrap();
    let forged_secret = "ta_forged-secret-that-was-never-issued";
    let mut changes = ChangeSet::new();
    changes.put(
        Key::new(Collection::ApiKeys, sha256_hex(forged_secret)),
        genuine.value.clone(),
    );
    admin.store().commit(changes).await.unwrap();
    let err = admin.authenticate(Some(forged_secret)).await.unwrap_err();
    assert_eq!(err.status(), 401, "{err:?}");
    admin.authenticate(Some(&key.secret)).await.unwrap();
}

#[tokio::test]
async fn secrets_appear_only_in_the_creation_answer() {
    let (admin, root) = test_support::facade::setup().await;
    let key = admin
        .create_api_key(&root, "k", KeyAccess::Admin)
        .await
        .unwrap();
    let listed = serde_json::to_string(&admin.api_keys(&root).await.unwrap()).unwrap();
    assert!(!listed.contains(&key.secret));
    let events = serde_json::to_string(&all_events(&admin, &root).await).unwrap();
    assert!(!events.contains(&key.secret));
    assert!(
        !events.contains(&sha256_hex(&key.secret)),
        "no digest in events"
    );
}

// ---------------------------------------------------------------- 4. revocation

fn variant_updates(events: &[Event], by: &str) -> Vec<u64> {
    events
        .iter()
        .filter(|e| {
            e.event.event_type == "feature-environment-variants-updated" && e.event.created_by == by
        })
        .map(|e| e.id)
        .collect()
}

fn revocation_of(events: &[Event], id: uuid::Uuid) -> u64 {
    let revocations: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.event.event_type == "api-token-deleted"
                && e.event
                    .pre_data
                    .as_ref()
                    .is_some_and(|d| d.to_value().unwrap()["id"] == json!(id))
        })
        .collect();
    assert_eq!(revocations.len(), 1, "one revocation event");
    revocations[0].id
}

/// The scenario: 8 threads patch through an Editor's key while an admin revokes it.
/// No variant update by that key may land after the revocation event.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_write_through_a_key_commits_after_its_revocation() {
    for round in 0..5 {
        let (admin, root) = test_support::facade::setup().await;
        eight_writers_and_a_revocation(admin, root, round).await;
    }
}

/// The same on a FileStore, whose commits go through its group-commit pipeline.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_write_through_a_key_commits_after_its_revocation_on_a_file_store() {
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let store = toggle_admin::store::FileStore::open(dir.path()).unwrap();
        let (admin, root) = test_support::facade::setup_on(ToggleAdmin::new(store)).await;
        eight_writers_and_a_revocation(admin, root, round).await;
    }
}

async fn eight_writers_and_a_revocation(admin: ToggleAdmin, root: Caller, round: usize) {
    let (_, editor) = user_with_key(&admin, &root, "editor", 2).await;
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (admin, editor, stop) = (admin.clone(), editor.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                // MemoryStore never suspends: yield so that the revoking task and the
                // timer get the worker threads too.
                tokio::task::yield_now().await;
                i += 1;
                let ops = json!([{"op": "replace", "path": "", "value": [
                    {"name": format!("w{w}-{i}"), "weightType": "variable", "weight": 1000}
                ]}]);
                match admin
                    .patch_variants(&editor, "p", "f", "production", &patch(ops))
                    .await
                {
                    Ok(_) => {}
                    Err(Error::AuthenticationRequired { .. }) => break,
                    Err(Error::Contention { .. }) => {}
                    Err(other) => panic!("unexpected {other:?}"),
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(30)).await;
    admin.revoke_api_key(&root, editor.key().id).await.unwrap();
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.await.unwrap();
    }
    let events = all_events(&admin, &root).await;
    let revoked_at = revocation_of(&events, editor.key().id);
    let updates = variant_updates(&events, "editor");
    assert!(!updates.is_empty(), "round {round}: the writers wrote");
    let late: Vec<u64> = updates.into_iter().filter(|id| *id > revoked_at).collect();
    assert!(
        late.is_empty(),
        "round {round}: updates {late:?} after the revocation event {revoked_at}"
    );
}

/// Once armed, runs `interfere` just before the next commit that records an event of type
/// `before`: a deterministic stand-in for a concurrent writer.
#[derive(Debug)]
struct Interfering {
    before: &'static str,
    interfere: std::sync::Mutex<Option<ChangeSet>>,
}

impl Interfering {
    fn arm(&self, changes: ChangeSet) {
        *self.interfere.lock().unwrap() = Some(changes);
    }
}

#[async_trait]
impl Behaviour for Interfering {
    async fn commit(
        &self,
        inner: &MemoryStore,
        changes: ChangeSet,
    ) -> Result<Revision, StoreError> {
        let interfere = if changes.events.iter().any(|e| e.event_type == self.before) {
            self.interfere.lock().unwrap().take()
        } else {
            None
        };
        if let Some(other) = interfere {
            inner.commit(other).await?;
        }
        inner.commit(changes).await
    }
}

async fn interfering(before: &'static str) -> (ToggleAdmin, Caller, Arc<Wrapped<Interfering>>) {
    let store = Arc::new(Wrapped::new(Interfering {
        before,
        interfere: std::sync::Mutex::new(None),
    }));
    let admin = ToggleAdmin::from_arc(store.clone());
    let (admin, root) = test_support::facade::setup_on(admin).await;
    (admin, root, store)
}

/// The key revoked between the permission check and the commit: the write is refused.
#[tokio::test]
async fn a_key_revoked_between_check_and_commit_writes_nothing() {
    let (admin, root, store) = interfering("feature-environment-variants-updated").await;
    let key = admin
        .create_api_key(
            &root,
            "writer",
            KeyAccess::Grants {
                grants: vec![Grant::everywhere(
                    Permission::UpdateFeatureEnvironmentVariants,
                )],
            },
        )
        .await
        .unwrap();
    let writer = admin.authenticate(Some(&key.secret)).await.unwrap();
    let mut revoke = ChangeSet::new();
    revoke.delete(Key::new(Collection::ApiKeys, sha256_hex(&key.secret)));
    store.behaviour.arm(revoke);
    let ops = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 1000}}]);
    let err = admin
        .patch_variants(&writer, "p", "f", "production", &patch(ops))
        .await
        .unwrap_err();
    assert_eq!(err.status(), 401, "{err:?}");
    let events = all_events(&admin, &root).await;
    assert!(variant_updates(&events, "writer").is_empty());
}

/// The user's root role lowered between the check and the commit: the write is refused.
#[tokio::test]
async fn an_access_change_between_check_and_commit_is_decided_again() {
    let (admin, root, store) = interfering("feature-environment-variants-updated").await;
    let (user_id, editor) = user_with_key(&admin, &root, "editor", 2).await;
    let user_key = Key::new(Collection::Users, user_id.to_string());
    let mut user = admin
        .store()
        .get(&user_key)
        .await
        .unwrap()
        .unwrap()
        .value
        .to_value()
        .unwrap();
    user["rootRole"] = json!(3);
    let mut demote = ChangeSet::new();
    demote.put(user_key, user);
    store.behaviour.arm(demote);
    let ops = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 1000}}]);
    let err = admin
        .patch_variants(&editor, "p", "f", "production", &patch(ops))
        .await
        .unwrap_err();
    assert_eq!(err.status(), 403, "{err:?}");
}

/// A change set renaming user `user_id` (a new email and display name), as a concurrent
/// writer would.
async fn renaming(admin: &ToggleAdmin, user_id: i64) -> ChangeSet {
    let user_key = Key::new(Collection::Users, user_id.to_string());
    let mut user = admin
        .store()
        .get(&user_key)
        .await
        .unwrap()
        .unwrap()
        .value
        .to_value()
        .unwrap();
    user["email"] = json!("renamed@example.com");
    user["name"] = json!("Renamed");
    let mut rename = ChangeSet::new();
    rename.put(user_key, user);
    rename
}

/// The user renamed between the permission check and the commit of a variants change (the
/// variants writers' path): the user's record is a precondition of the commit, so the
/// change is decided again, and its event names the user as renamed.
#[tokio::test]
async fn a_user_renamed_between_check_and_commit_authors_the_variants_change_renamed() {
    let (admin, root, store) = interfering("feature-environment-variants-updated").await;
    let (user_id, editor) = user_with_key(&admin, &root, "editor", 2).await;
    store.behaviour.arm(renaming(&admin, user_id).await);
    let ops = json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 1000}}]);
    admin
        .patch_variants(&editor, "p", "f", "production", &patch(ops))
        .await
        .unwrap();
    let events = all_events(&admin, &root).await;
    let updates: Vec<&Event> = events
        .iter()
        .filter(|e| e.event.event_type == "feature-environment-variants-updated")
        .collect();
    assert_eq!(updates.len(), 1, "{updates:#?}");
    assert_eq!(updates[0].event.created_by, "renamed@example.com");
    assert_eq!(updates[0].event.created_by_user_id, Some(user_id));
}

/// The same for a change of the flow: a feature created while its creator is renamed names
/// the user as renamed, in its event and as the feature's creator.
#[tokio::test]
async fn a_user_renamed_between_check_and_commit_authors_the_feature_renamed() {
    let (admin, root, store) = interfering("feature-created").await;
    let (user_id, editor) = user_with_key(&admin, &root, "editor", 2).await;
    store.behaviour.arm(renaming(&admin, user_id).await);
    let feature = admin
        .create_feature(
            &editor,
            "p",
            &toggle_admin::model::NewFeature {
                name: "made-while-renamed".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let creator = serde_json::to_value(&feature).unwrap()["createdBy"].clone();
    assert_eq!(creator["id"], user_id, "{creator}");
    assert_eq!(creator["name"], "Renamed", "{creator}");
    let events = all_events(&admin, &root).await;
    let created = events
        .iter()
        .find(|e| {
            e.event.event_type == "feature-created"
                && e.event.feature_name.as_deref() == Some("made-while-renamed")
        })
        .unwrap();
    assert_eq!(created.event.created_by, "renamed@example.com");
    assert_eq!(created.event.created_by_user_id, Some(user_id));
}

// ---------------------------------------------------------------- 5. revoking twice

#[tokio::test]
async fn revoking_twice_is_a_404_without_an_event() {
    let (admin, root) = test_support::facade::setup().await;
    let key = admin
        .create_api_key(&root, "k", KeyAccess::Admin)
        .await
        .unwrap();
    admin.revoke_api_key(&root, key.info.id).await.unwrap();
    let events = all_events(&admin, &root).await.len();
    let err = admin.revoke_api_key(&root, key.info.id).await.unwrap_err();
    assert_eq!(err.status(), 404, "{err:?}");
    assert_eq!(all_events(&admin, &root).await.len(), events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_revocations_one_succeeds() {
    for _ in 0..10 {
        let (admin, root) = test_support::facade::setup().await;
        let key = admin
            .create_api_key(&root, "k", KeyAccess::Admin)
            .await
            .unwrap();
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (admin, root) = (admin.clone(), root.clone());
                tokio::spawn(async move { admin.revoke_api_key(&root, key.info.id).await })
            })
            .collect();
        let mut ok = 0;
        for task in tasks {
            match task.await.unwrap() {
                Ok(()) => ok += 1,
                Err(e) => assert_eq!(e.status(), 404, "{e:?}"),
            }
        }
        assert_eq!(ok, 1);
        let events = all_events(&admin, &root).await;
        revocation_of(&events, key.info.id);
    }
}

// ---------------------------------------------------------------- 6. name clashes

/// An unrelated write to an environment the new project names, just before its commit: the
/// creation reads again and succeeds instead of reporting a name clash.
#[tokio::test]
async fn creating_a_project_survives_an_unrelated_environment_change() {
    let (admin, root, store) = interfering("project-created").await;
    let env_key = Key::new(Collection::Environments, "production");
    let env = admin.store().get(&env_key).await.unwrap().unwrap();
    let mut touch = ChangeSet::new();
    touch.put(env_key, env.value.clone());
    store.behaviour.arm(touch);
    let created = admin
        .create_project(
            &root,
            &Project {
                id: "new".into(),
                name: "New".into(),
                environments: vec!["production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(created.id, "new");
}

/// The same name created by someone else just before the commit: a name clash.
#[tokio::test]
async fn a_real_clash_is_name_exists() {
    let (admin, root, store) = interfering("environment-created").await;
    let mut first = ChangeSet::new();
    first.put(
        Key::new(Collection::Environments, "qa"),
        json!({"name": "qa", "type": "test", "enabled": true}),
    );
    store.behaviour.arm(first);
    let err = admin
        .create_environment(
            &root,
            &Environment {
                name: "qa".into(),
                environment_type: "test".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::NameExists { .. }), "{err:?}");
}

/// An unrelated conflict (here: the caller's own key record rewritten) on creating a tag
/// type, a context field, a strategy and an environment is decided again, not a clash.
#[tokio::test]
async fn other_conflicts_on_create_are_decided_again() {
    for (event_type, what) in [
        ("tag-type-created", "tag type"),
        ("context-field-created", "context field"),
        ("strategy-created", "strategy"),
        ("environment-created", "environment"),
    ] {
        let (admin, root, store) = interfering(event_type).await;
        let key = admin
            .create_api_key(&root, "creator", KeyAccess::Admin)
            .await
            .unwrap();
        let creator = admin.authenticate(Some(&key.secret)).await.unwrap();
        let key_record = Key::new(Collection::ApiKeys, sha256_hex(&key.secret));
        let record = admin.store().get(&key_record).await.unwrap().unwrap();
        let mut touch = ChangeSet::new();
        touch.put(key_record, record.value.clone());
        store.behaviour.arm(touch);
        let result = match what {
            "tag type" => admin
                .create_tag_type(
                    &creator,
                    &serde_json::from_value(json!({"name": "team"})).unwrap(),
                )
                .await
                .map(|_| ()),
            "context field" => admin
                .create_context_field(
                    &creator,
                    &serde_json::from_value(json!({"name": "region"})).unwrap(),
                )
                .await
                .map(|_| ()),
            "strategy" => admin
                .create_strategy_definition(
                    &creator,
                    &serde_json::from_value(json!({"name": "my-strategy", "parameters": []}))
                        .unwrap(),
                )
                .await
                .map(|_| ()),
            _ => admin
                .create_environment(
                    &creator,
                    &Environment {
                        name: "qa".into(),
                        environment_type: "test".into(),
                        ..Default::default()
                    },
                )
                .await
                .map(|_| ()),
        };
        result.unwrap_or_else(|e| panic!("{what}: {e:?}"));
    }
}
