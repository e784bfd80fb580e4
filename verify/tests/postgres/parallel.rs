//! PostgresStore commits in parallel, against a real server: commits of different records do
//! not take turns, and views still name one state (no view shows a revision without every
//! revision below it).
//!
//! The server comes from `TOGGLE_ADMIN_TEST_POSTGRES`; see `store.rs` beside this file.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::json;
use toggle_admin::store::{ChangeSet, Collection, Key, Revision, Store};

use test_support::postgres::{TestSchema, admin, blocked_session, database_url};

fn feature(name: &str) -> Key {
    Key::new(Collection::Features, name)
}

/// A change set that writes `value` to `key`, which must still be at `revision`.
fn replace(key: &Key, revision: Revision, value: serde_json::Value) -> ChangeSet {
    let mut changes = ChangeSet::new();
    changes
        .expect_revision(key.clone(), revision)
        .put(key.clone(), value);
    changes
}

/// A commit held up inside its transaction (by a row lock someone else holds) holds up no
/// commit of another record; it does hold up views, which must show it once it lands.
/// With one lock ordering every commit, the second commit would wait for the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stuck_commit_holds_up_other_records_commits_but_no_view_skips_it() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = Arc::new(schema.connect(4).await);
    let (a, b) = (feature("a"), feature("b"));
    let a1 = store
        .commit(replace(&a, Revision::ABSENT, json!("a1")))
        .await
        .unwrap();
    let b1 = store
        .commit(replace(&b, Revision::ABSENT, json!("b1")))
        .await
        .unwrap();

    // Someone else holds record a's row: the next commit of a stops inside its statement,
    // after it has taken its locks and its revision.
    let mut holder = admin(&url).await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        &format!(
            "SELECT 1 FROM \"{}\".records WHERE collection = 'features' AND id = 'a' FOR UPDATE",
            schema.name
        ),
        &[],
    )
    .await
    .unwrap();
    let stuck = tokio::spawn({
        let (store, a) = (Arc::clone(&store), a.clone());
        async move { store.commit(replace(&a, a1, json!("a2"))).await }
    });
    let watcher = admin(&url).await;
    blocked_session(&watcher, &schema.name).await;

    // b commits while a's commit is stuck, and a plain read sees it at once.
    let b2 = tokio::time::timeout(
        Duration::from_secs(20),
        store.commit(replace(&b, b1, json!("b2"))),
    )
    .await
    .expect("a commit of b waited for the stuck commit of a")
    .unwrap();
    assert_eq!(store.get(&b).await.unwrap().unwrap().revision, b2);
    assert!(!stuck.is_finished());

    // A view waits for the stuck commit: it holds a revision, and a view that did not wait
    // could show b2 without it, the state of no revision if a's came first.
    let viewing = tokio::spawn({
        let store = Arc::clone(&store);
        async move {
            let view = store.view().await?;
            let a = view.get(&feature("a")).await?;
            let b = view.get(&feature("b")).await?;
            Ok::<_, toggle_admin::store::StoreError>((view.revision(), a, b))
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !viewing.is_finished(),
        "a view was taken while a commit holding a revision was in flight"
    );

    hold.rollback().await.unwrap();
    let a2 = stuck.await.unwrap().expect("the stuck commit lands");
    let (revision, seen_a, seen_b) = tokio::time::timeout(Duration::from_secs(20), viewing)
        .await
        .expect("the view never came")
        .unwrap()
        .unwrap();
    assert_eq!(revision, a2.max(b2));
    let (seen_a, seen_b) = (seen_a.unwrap(), seen_b.unwrap());
    assert_eq!(
        (seen_a.value.to_value().unwrap(), seen_a.revision),
        (json!("a2"), a2)
    );
    assert_eq!(
        (seen_b.value.to_value().unwrap(), seen_b.revision),
        (json!("b2"), b2)
    );
    assert_eq!(store.revision().await.unwrap(), a2.max(b2));
}

/// Writers on their own features through two instances of one store, and a reader taking
/// views all along: every view holds every commit acknowledged at or below its revision,
/// and nothing above it. Each record's revision is its last commit's, and the log has one
/// event per commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn views_under_parallel_writers_hold_every_revision_below_their_own() {
    const WRITERS: usize = 8;
    const EACH: usize = 40;
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let stores = [
        Arc::new(schema.connect(6).await),
        Arc::new(schema.connect(6).await),
    ];
    let keys: Vec<Key> = (0..WRITERS).map(|w| feature(&format!("w{w}"))).collect();
    // Every acknowledged commit: (revision, writer).
    let acknowledged = Arc::new(Mutex::new(Vec::<(Revision, usize)>::new()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));

    let reader = tokio::spawn({
        let (store, keys, done) = (Arc::clone(&stores[0]), keys.clone(), Arc::clone(&done));
        async move {
            let mut seen = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let view = store.view().await.expect("view");
                let records = view.get_many(&keys).await.expect("records");
                let revisions: Vec<Revision> = records
                    .iter()
                    .map(|r| r.as_ref().map_or(Revision::ABSENT, |r| r.revision))
                    .collect();
                seen.push((view.revision(), revisions));
            }
            seen
        }
    });
    let mut writers = Vec::new();
    for (w, key) in keys.iter().enumerate() {
        let (store, key, acknowledged) = (
            Arc::clone(&stores[w % 2]),
            key.clone(),
            Arc::clone(&acknowledged),
        );
        writers.push(tokio::spawn(async move {
            let mut revision = Revision::ABSENT;
            for n in 0..EACH {
                let mut changes = replace(&key, revision, json!({ "n": n }));
                changes.event(toggle_admin::store::NewEvent {
                    event_type: "feature-updated".to_owned(),
                    created_by: "parallel-test".to_owned(),
                    created_at: chrono::Utc::now(),
                    project: None,
                    feature_name: Some(key.id.clone()),
                    environment: None,
                    data: Some(json!({ "n": n }).into()),
                    pre_data: None,
                    created_by_user_id: None,
                    tags: None,
                });
                revision = store.commit(changes).await.expect("commit");
                acknowledged
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((revision, w));
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = reader.await.unwrap();
    let acknowledged = acknowledged
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    assert_eq!(acknowledged.len(), WRITERS * EACH);
    let distinct: std::collections::BTreeSet<Revision> =
        acknowledged.iter().map(|(r, _)| *r).collect();
    assert_eq!(distinct.len(), WRITERS * EACH, "a revision was given twice");

    assert!(!seen.is_empty());
    for (view, records) in &seen {
        for (w, record) in records.iter().enumerate() {
            assert!(record <= view, "view {view} shows writer {w} at {record}");
        }
        for (revision, w) in &acknowledged {
            if revision <= view {
                assert!(
                    records[*w] >= *revision,
                    "view {view} shows writer {w} at {} without its commit {revision}",
                    records[*w]
                );
            }
        }
    }

    // Both instances agree on the end state, and the log tells the same story.
    let last: BTreeMap<usize, Revision> =
        acknowledged
            .iter()
            .map(|(r, w)| (*w, *r))
            .fold(BTreeMap::new(), |mut last, (w, r)| {
                let at = last.entry(w).or_insert(r);
                *at = (*at).max(r);
                last
            });
    for store in &stores {
        for (w, key) in keys.iter().enumerate() {
            assert_eq!(store.get(key).await.unwrap().unwrap().revision, last[&w]);
        }
        let events = store.events(0, 100_000).await.unwrap();
        assert_eq!(events.len(), WRITERS * EACH);
        let event_revisions: std::collections::BTreeSet<Revision> =
            events.iter().map(|e| e.revision).collect();
        assert_eq!(event_revisions, distinct);
        assert_eq!(store.revision().await.unwrap(), *distinct.last().unwrap());
    }
}

/// A schema an earlier version left at migration 2, with history, goes on where it stopped:
/// the store's, a collection's and a record's revisions, and the event ids, continue from
/// what the old `store_meta` and `collections` rows said.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_schema_at_migration_2_goes_on_from_its_history() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let client = admin(&url).await;
    let name = &schema.name;
    client
        .batch_execute(&format!(
            "CREATE SCHEMA \"{name}\"; SET search_path TO \"{name}\";
             CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
                 applied_at timestamptz NOT NULL DEFAULT now());
             {}
             {}
             INSERT INTO schema_migrations (version, name) VALUES (1, 'initial'),
                 (2, 'event filters');
             INSERT INTO records VALUES ('features', 'old', '{{\"n\": 1}}', 6),
                 ('projects', 'default', '{{}}', 2);
             INSERT INTO collections VALUES ('features', 7), ('projects', 2);
             INSERT INTO events (id, revision, type, created_by, created_at)
                 SELECT n, n, 'feature-created', 'old', now() FROM generate_series(1, 9) AS n;
             UPDATE store_meta SET revision = 7, last_event_id = 9;
             RESET search_path;",
            include_str!("../../../src/store/postgres/migrations/0001_initial.sql"),
            include_str!("../../../src/store/postgres/migrations/0002_event_filters.sql"),
        ))
        .await
        .expect("a schema at migration 2");

    let store = schema.connect(2).await;
    assert_eq!(store.revision().await.unwrap(), Revision(7));
    assert_eq!(
        store.list(Collection::Features, "").await.unwrap().revision,
        Revision(7)
    );
    assert_eq!(
        store.list(Collection::Projects, "").await.unwrap().revision,
        Revision(2)
    );
    let old = feature("old");
    assert_eq!(
        store.get(&old).await.unwrap().unwrap().revision,
        Revision(6)
    );

    // A stale precondition still fails; the next commit takes revision 8 and event id 10.
    let stale = store
        .commit(replace(&old, Revision(5), json!({ "n": 2 })))
        .await
        .expect_err("stale");
    assert!(stale.is_conflict(), "{stale}");
    let mut changes = replace(&old, Revision(6), json!({ "n": 2 }));
    changes.event(toggle_admin::store::NewEvent {
        event_type: "feature-updated".to_owned(),
        created_by: "upgrade-test".to_owned(),
        created_at: chrono::Utc::now(),
        project: None,
        feature_name: Some("old".to_owned()),
        environment: None,
        data: None,
        pre_data: None,
        created_by_user_id: Some(7),
        tags: Some(json!([{"type": "simple", "value": "t"}]).into()),
    });
    assert_eq!(store.commit(changes).await.unwrap(), Revision(8));
    let events = store.events(0, 100).await.unwrap();
    assert_eq!(events.len(), 10);
    let last = events.last().unwrap();
    assert_eq!((last.id, last.revision), (10, Revision(8)));
    // Events from before migration 6 have no author id and no tags; later ones keep theirs.
    assert_eq!(events[0].event.created_by_user_id, None);
    assert!(events[0].event.tags.is_none());
    assert_eq!(last.event.created_by_user_id, Some(7));
    assert_eq!(
        last.event.tags.as_ref().unwrap().to_value().unwrap(),
        json!([{"type": "simple", "value": "t"}])
    );
    assert_eq!(
        store.list(Collection::Features, "").await.unwrap().revision,
        Revision(8)
    );
    let versions: Vec<i32> = client
        .query(
            &format!("SELECT version FROM \"{name}\".schema_migrations ORDER BY version"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(versions, vec![1, 2, 3, 4, 5, 6]);
}

/// A creator that may add a record only while a collection holds none of its kind (a
/// listing, then a commit expecting the collection unchanged) while a creation is stuck in
/// flight with a lower revision than a commit that has landed: the listing waits for the
/// stuck creation and sees it, so the creator adds nothing. A listing that did not wait
/// would show the later commit's revision without the stuck creation, and the creator's
/// commit would pass its precondition once the creation landed: two records.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_listing_waits_for_a_creation_in_flight_below_its_revision() {
    let Some(url) = database_url() else { return };
    let schema = TestSchema::new(&url);
    let store = Arc::new(schema.connect(4).await);
    let segment = |id: &str| Key::new(Collection::Segments, id);
    let mut seed = ChangeSet::new();
    seed.put(segment("blocker"), json!("seed"));
    store.commit(seed).await.unwrap();

    // The creation writes the blocker too, whose row someone else holds: it stops inside
    // its statement, holding its revision.
    let mut holder = admin(&url).await;
    let hold = holder.transaction().await.unwrap();
    hold.execute(
        &format!(
            "SELECT 1 FROM \"{}\".records WHERE collection = 'segments' AND id = 'blocker' \
             FOR UPDATE",
            schema.name
        ),
        &[],
    )
    .await
    .unwrap();
    let stuck = tokio::spawn({
        let store = Arc::clone(&store);
        async move {
            let mut changes = ChangeSet::new();
            changes
                .put(segment("slot-stuck"), json!(1))
                .put(segment("blocker"), json!("moved"));
            store.commit(changes).await
        }
    });
    let watcher = admin(&url).await;
    blocked_session(&watcher, &schema.name).await;
    // A later commit to the same collection lands beside it.
    let mut other = ChangeSet::new();
    other.put(segment("other"), json!(1));
    let later = store.commit(other).await.unwrap();

    let creator = tokio::spawn({
        let store = Arc::clone(&store);
        async move {
            let listing = store.list(Collection::Segments, "slot-").await?;
            if !listing.records.is_empty() {
                return Ok(None);
            }
            let mut changes = ChangeSet::new();
            changes
                .expect_collection(Collection::Segments, listing.revision)
                .put(segment("slot-creator"), json!(2));
            store.commit(changes).await.map(Some)
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    hold.rollback().await.unwrap();
    let stuck = stuck.await.unwrap().expect("the stuck creation lands");
    assert!(stuck < later, "the stuck creation took its revision first");
    let created = tokio::time::timeout(Duration::from_secs(20), creator)
        .await
        .expect("the creator never finished")
        .unwrap();
    match created {
        Ok(None) => {}
        Ok(Some(revision)) => panic!("the creator added a second slot at {revision}"),
        Err(e) => assert!(e.is_conflict(), "{e}"),
    }
    let slots = store.list(Collection::Segments, "slot-").await.unwrap();
    let ids: Vec<&str> = slots.records.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["slot-stuck"]);
}
