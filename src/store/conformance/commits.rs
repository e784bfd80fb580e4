//! Commits: revisions, preconditions, atomicity, deletes and `submit`.

use serde_json::{Value, json};

use crate::store::{ChangeSet, Collection, Key, Precondition, Revision, Store};

use super::{
    Present, ScenarioFailure, Step, ensure_conflict, ensure_empty, ensure_eq, ensure_none, event,
    feature, put, scenario,
};

/// An empty store has revision 0, no records, no events.
pub async fn empty_store(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("empty_store", async {
        ensure_eq(
            store.revision().await.step("revision")?,
            Revision::ABSENT,
            "the revision of an empty store",
        )?;
        ensure_none(
            store.get(&feature("x")).await.step("get of feature x")?,
            "feature x in an empty store",
        )?;
        let listing = store
            .list(Collection::Features, "")
            .await
            .step("list of the features")?;
        ensure_empty(&listing.records, "the features of an empty store")?;
        ensure_eq(
            listing.revision,
            Revision::ABSENT,
            "the revision of an empty store's feature listing",
        )?;
        ensure_empty(
            &store.events(0, 10).await.step("events")?,
            "the events of an empty store",
        )
    })
    .await
}

/// What a commit wrote is seen by the next read, with the commit's revision.
pub async fn visibility_after_commit(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("visibility_after_commit", async {
        let revision = put(store, feature("a"), json!({"name": "a", "n": 1})).await?;
        let read = store
            .get(&feature("a"))
            .await
            .step("get of feature a")?
            .present("feature a after its commit")?;
        ensure_eq(
            &read.value,
            &json!({"name": "a", "n": 1}),
            "the value of feature a after its commit",
        )?;
        ensure_eq(
            read.revision,
            revision,
            "the revision of feature a (the commit's)",
        )?;
        ensure_eq(
            store.revision().await.step("revision")?,
            revision,
            "the store's revision after a commit (the commit's)",
        )?;
        let revision2 = put(store, feature("a"), json!({"name": "a", "n": 2})).await?;
        let read = store
            .get(&feature("a"))
            .await
            .step("get of feature a")?
            .present("feature a after its second commit")?;
        ensure_eq(
            &read.value,
            &json!({"name": "a", "n": 2}),
            "the value of feature a after its second commit",
        )?;
        ensure_eq(
            read.revision,
            revision2,
            "the revision of feature a (the second commit's)",
        )
    })
    .await
}

/// Each commit takes the next revision, starting at 1, when commits run one at a time and
/// none fails (a store whose commits run in parallel may skip a revision a failed commit
/// took; see the [`Store`](crate::store::Store) contract).
pub async fn revisions_grow_by_one(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("revisions_grow_by_one", async {
        for n in 1..=5u64 {
            let revision = put(store, feature(&format!("f{n}")), json!(n)).await?;
            ensure_eq(
                revision,
                Revision(n),
                format_args!("the revision of commit number {n} to an empty store"),
            )?;
        }
        Ok(())
    })
    .await
}

/// A change set lands whole: several writes and events in several collections.
pub async fn all_or_nothing(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("all_or_nothing", async {
        let project = Key::new(Collection::Projects, "p");
        put(store, feature("keep"), json!("old")).await?;
        let stale = store
            .get(&feature("keep"))
            .await
            .step("get of feature keep")?
            .present("feature keep after its commit")?
            .revision;
        put(store, feature("keep"), json!("newer")).await?;

        // A failing change set (stale precondition last) writes none of its writes or events.
        let mut changes = ChangeSet::new();
        changes
            .put(feature("a"), json!(1))
            .put(project.clone(), json!(2))
            .delete(feature("keep"))
            .event(event("x", 1))
            .expect_revision(feature("keep"), stale);
        ensure_conflict(
            store.commit(changes).await,
            "a commit with a stale precondition (last)",
        )?;
        ensure_none(
            store.get(&feature("a")).await.step("get of feature a")?,
            "feature a after a failed commit that put it",
        )?;
        ensure_none(
            store.get(&project).await.step("get of project p")?,
            "project p after a failed commit that put it",
        )?;
        ensure_eq(
            &store
                .get(&feature("keep"))
                .await
                .step("get of feature keep")?
                .present("feature keep after a failed commit that deleted it")?
                .value,
            &json!("newer"),
            "the value of feature keep after a failed commit that deleted it",
        )?;
        ensure_empty(
            &store.events(0, 10).await.step("events")?,
            "the events after a failed commit (the only one with events)",
        )?;

        // The same writes with a current precondition all land.
        let current = store
            .get(&feature("keep"))
            .await
            .step("get of feature keep")?
            .present("feature keep")?
            .revision;
        let mut changes = ChangeSet::new();
        changes
            .put(feature("a"), json!(1))
            .put(project.clone(), json!(2))
            .delete(feature("keep"))
            .event(event("x", 1))
            .expect_revision(feature("keep"), current);
        let revision = store
            .commit(changes)
            .await
            .step("commit with a current precondition")?;
        ensure_eq(
            &store
                .get(&feature("a"))
                .await
                .step("get of feature a")?
                .present("feature a after the commit that put it")?
                .value,
            &json!(1),
            "the value of feature a after the commit that put it",
        )?;
        ensure_eq(
            store
                .get(&project)
                .await
                .step("get of project p")?
                .present("project p after the commit that put it")?
                .revision,
            revision,
            "the revision of project p (the commit's)",
        )?;
        ensure_none(
            store
                .get(&feature("keep"))
                .await
                .step("get of feature keep")?,
            "feature keep after the commit that deleted it",
        )?;
        ensure_eq(
            store.events(0, 10).await.step("events")?.len(),
            1,
            "the number of events after one commit of one event",
        )
    })
    .await
}

/// A stale record precondition fails with `Conflict` and nothing is written; the revision
/// does not move.
pub async fn conflict_writes_nothing(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("conflict_writes_nothing", async {
        let first = put(store, feature("a"), json!("v1")).await?;
        put(store, feature("a"), json!("v2")).await?;
        let before = store.revision().await.step("revision")?;
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(feature("a"), first)
            .put(feature("a"), json!("lost"))
            .event(event("x", 1));
        ensure_conflict(
            store.commit(changes).await,
            "a commit expecting feature a at an older revision",
        )?;
        ensure_eq(
            &store
                .get(&feature("a"))
                .await
                .step("get of feature a")?
                .present("feature a after a conflict")?
                .value,
            &json!("v2"),
            "the value of feature a after a conflicting commit that put it",
        )?;
        ensure_eq(
            store.revision().await.step("revision")?,
            before,
            "the store's revision after a conflict (as before it)",
        )?;
        ensure_empty(
            &store.events(0, 10).await.step("events")?,
            "the events after a conflict (the only commit with events)",
        )
    })
    .await
}

/// `Revision::ABSENT` as a precondition means "must not exist": create-if-absent.
pub async fn absent_precondition(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("absent_precondition", async {
        let create = |value: Value| {
            let mut changes = ChangeSet::new();
            changes
                .expect_revision(feature("new"), Revision::ABSENT)
                .put(feature("new"), value);
            changes
        };
        store
            .commit(create(json!("first")))
            .await
            .step("commit creating feature new (absent)")?;
        ensure_conflict(
            store.commit(create(json!("second"))).await,
            "a commit creating feature new (absent) when it exists",
        )?;
        ensure_eq(
            &store
                .get(&feature("new"))
                .await
                .step("get of feature new")?
                .present("feature new after its creation")?
                .value,
            &json!("first"),
            "the value of feature new after a second creation failed",
        )
    })
    .await
}

/// A collection precondition fails when anything in the collection was written or deleted
/// since, and holds when only other collections changed.
pub async fn collection_precondition(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("collection_precondition", async {
        put(store, feature("a"), json!(1)).await?;
        let listing = store
            .list(Collection::Features, "")
            .await
            .step("list of the features")?;
        ensure_eq(
            listing.records.len(),
            1,
            "the number of features after one was put",
        )?;

        // A write elsewhere does not disturb it.
        put(store, Key::new(Collection::Projects, "p"), json!(1)).await?;
        let mut changes = ChangeSet::new();
        changes
            .expect_collection(Collection::Features, listing.revision)
            .put(feature("b"), json!(2));
        store
            .commit(changes)
            .await
            .step("commit expecting the features unchanged after a write to another collection")?;

        // A write in the collection does.
        let mut changes = ChangeSet::new();
        changes
            .expect_collection(Collection::Features, listing.revision)
            .put(feature("c"), json!(3));
        ensure_conflict(
            store.commit(changes).await,
            "a commit expecting the features unchanged after a feature was written",
        )?;
        ensure_none(
            store.get(&feature("c")).await.step("get of feature c")?,
            "feature c after a conflicting commit that put it",
        )?;

        // A delete in the collection does too.
        let listing = store
            .list(Collection::Features, "")
            .await
            .step("list of the features")?;
        let mut changes = ChangeSet::new();
        changes.delete(feature("a"));
        store
            .commit(changes)
            .await
            .step("commit deleting feature a")?;
        let mut changes = ChangeSet::new();
        changes
            .preconditions
            .push(Precondition::CollectionUnchanged {
                collection: Collection::Features,
                revision: listing.revision,
            });
        ensure_conflict(
            store.commit(changes).await,
            "a commit expecting the features unchanged after a feature was deleted",
        )
    })
    .await
}

/// Deleting removes a record; a missing record's delete is not an error; re-creating works.
pub async fn delete_and_recreate(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("delete_and_recreate", async {
        put(store, feature("a"), json!(1)).await?;
        let mut changes = ChangeSet::new();
        changes.delete(feature("a")).delete(feature("never"));
        store
            .commit(changes)
            .await
            .step("commit deleting feature a and the missing feature never")?;
        ensure_none(
            store.get(&feature("a")).await.step("get of feature a")?,
            "feature a after its delete",
        )?;
        let revision = put(store, feature("a"), json!(2)).await?;
        let read = store
            .get(&feature("a"))
            .await
            .step("get of feature a")?
            .present("feature a after its re-creation")?;
        ensure_eq(
            read.revision,
            revision,
            "the revision of feature a after its re-creation (the commit's)",
        )?;
        ensure_eq(
            &read.value,
            &json!(2),
            "the value of feature a after its re-creation",
        )
    })
    .await
}

/// `submit` checks preconditions as `commit` does, and its `Accepted` resolves to the
/// commit's revision, visible to reads and views once durable; a decision view taken after
/// `submit` shows the accepted commit.
pub async fn submit_accepts_then_makes_durable(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("submit_accepts_then_makes_durable", async {
        let key = feature("submitted");
        let mut changes = ChangeSet::new();
        changes
            .expect_revision(key.clone(), Revision::ABSENT)
            .put(key.clone(), json!(1))
            .event(event("submitted", 1));
        let accepted = store
            .submit(changes.clone())
            .await
            .step("submit of the first change set")?;
        ensure_eq(
            accepted.revision(),
            Revision(1),
            "the revision accepted for the first change set",
        )?;
        let deciding = store.decision_view().await.step("decision_view")?;
        ensure_eq(
            deciding.revision(),
            Revision(1),
            "the revision of a decision view after the first submit",
        )?;
        ensure_eq(
            &deciding
                .get(&key)
                .await
                .step("get of the submitted feature in a decision view")?
                .present("the submitted feature in a decision view")?
                .value,
            &json!(1),
            "the value of the submitted feature in a decision view",
        )?;
        ensure_eq(
            accepted.durable().await.step("durable")?,
            Revision(1),
            "the revision made durable for the first change set",
        )?;
        ensure_eq(
            store
                .get(&key)
                .await
                .step("get of the submitted feature")?
                .present("the submitted feature once durable")?
                .revision,
            Revision(1),
            "the revision of the submitted feature once durable",
        )?;
        ensure_eq(
            store.view().await.step("view")?.revision(),
            Revision(1),
            "the revision of a view once the first submit is durable",
        )?;
        // The same change set again: its precondition no longer holds.
        ensure_conflict(
            store.submit(changes).await,
            "a second submit of a change set creating the submitted feature (absent)",
        )?;
        ensure_eq(
            store.revision().await.step("revision")?,
            Revision(1),
            "the store's revision after a refused submit",
        )?;
        ensure_eq(
            store.events(0, 10).await.step("events")?.len(),
            1,
            "the number of events after one accepted submit of one event",
        )
    })
    .await
}
