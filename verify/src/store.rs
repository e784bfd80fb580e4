//! Helpers shared by the FileStore test files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::Utc;
use serde_json::{Value, json};
use toggle_admin::store::{ChangeSet, Collection, Event, Key, Listing, NewEvent, Revision, Store};

/// A fresh directory under the system temp dir, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "toggle-admin-{name}-{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            Utc::now().timestamp_nanos_opt().unwrap_or_default()
        ));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The first journal segment (the only one until the store rotates).
    pub fn journal(&self) -> PathBuf {
        self.0.join(format!("journal-{:020}", 0))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn event(kind: &str, data: Value) -> NewEvent {
    NewEvent {
        event_type: kind.to_owned(),
        created_by: "file-store-test".to_owned(),
        created_at: Utc::now(),
        project: Some("default".to_owned()),
        feature_name: None,
        environment: None,
        data: Some(data.into()),
        pre_data: None,
        created_by_user_id: None,
        tags: None,
    }
}

pub fn feature(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

/// Commit a put of `value` at `key` with an event, no preconditions.
pub async fn put(store: &dyn Store, key: Key, value: Value) -> Revision {
    let mut changes = ChangeSet::new();
    changes.put(key.clone(), value.clone()).event(event(
        "put",
        json!({ "key": key.to_string(), "value": value }),
    ));
    store.commit(changes).await.unwrap()
}

/// Everything a store holds, for comparing two stores.
#[derive(Debug, PartialEq)]
pub struct Dump {
    pub revision: Revision,
    pub listings: Vec<(Collection, Listing)>,
    pub events: Vec<Event>,
}

pub async fn dump(store: &dyn Store) -> Dump {
    let mut listings = Vec::new();
    for collection in Collection::ALL {
        listings.push((collection, store.list(collection, "").await.unwrap()));
    }
    Dump {
        revision: store.revision().await.unwrap(),
        listings,
        events: store.events(0, usize::MAX).await.unwrap(),
    }
}

/// Make the feature `name` of `store` `days` old, as if created then: the API always sets a
/// feature's creation time to now, and what depends on a flag's age (potentially stale by
/// its type's lifetime) needs older ones.
pub async fn backdate_feature(store: &dyn Store, name: &str, days: i64) {
    let key = Key::new(Collection::Features, name);
    let record = store
        .get(&key)
        .await
        .unwrap()
        .expect("the feature's record");
    let mut value: Value = serde_json::to_value(&record.value).unwrap();
    value["createdAt"] = json!((Utc::now() - chrono::Duration::days(days)).to_rfc3339());
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key.clone(), record.revision)
        .put(key, value);
    store.commit(changes).await.unwrap();
}
