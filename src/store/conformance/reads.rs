//! Reads: events, listings, `get_many` and empty change sets.

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Revision, Store};

use super::{
    Present, ScenarioFailure, Step, ensure_conflict, ensure_empty, ensure_eq, event, feature, put,
    scenario,
};

/// Events get ids 1, 2, 3 … in commit order and change-set order, carry their commit's
/// revision, and page with `after`/`limit`.
pub async fn events_in_commit_order(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("events_in_commit_order", async {
        let mut revisions = Vec::new();
        for n in 0..3u64 {
            let mut changes = ChangeSet::new();
            changes
                .put(feature(&format!("f{n}")), json!(n))
                .event(event("first", n))
                .event(event("second", n));
            revisions.push(
                store
                    .commit(changes)
                    .await
                    .step(format_args!("commit number {n} of two events"))?,
            );
        }
        let events = store.events(0, 100).await.step("events")?;
        ensure_eq(
            events.len(),
            6,
            "the number of events after three commits of two",
        )?;
        for (i, e) in events.iter().enumerate() {
            ensure_eq(
                e.id,
                i as u64 + 1,
                format_args!("the id of event number {i}"),
            )?;
            let revision = revisions
                .get(i / 2)
                .present(format_args!("the revision of commit number {}", i / 2))?;
            ensure_eq(
                e.revision,
                *revision,
                format_args!("the revision of event {} (its commit's)", e.id),
            )?;
            ensure_eq(
                e.event.event_type.as_str(),
                if i % 2 == 0 { "first" } else { "second" },
                format_args!("the type of event {}", e.id),
            )?;
            ensure_eq(
                &e.event.data,
                &Some(json!({ "n": (i / 2) as u64 }).into()),
                format_args!("the data of event {}", e.id),
            )?;
            ensure_eq(
                e.event.created_by.as_str(),
                "conformance",
                format_args!("the author of event {}", e.id),
            )?;
        }
        let page = store.events(2, 3).await.step("events after 2, 3 of them")?;
        ensure_eq(
            page.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![3, 4, 5],
            "the ids of the events after 2, 3 of them",
        )?;
        ensure_empty(
            &store.events(6, 10).await.step("events after 6")?,
            "the events after the last one",
        )
    })
    .await
}

/// `list` returns the records with the prefix, ordered by id, and only from its collection.
pub async fn listing_by_prefix(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("listing_by_prefix", async {
        let mut changes = ChangeSet::new();
        for id in ["b\u{1f}x", "a\u{1f}y", "a\u{1f}x", "ab", "c"] {
            changes.put(Key::new(Collection::FeatureEnvironments, id), json!(id));
        }
        changes.put(Key::new(Collection::Features, "a\u{1f}z"), json!(0));
        let revision = store
            .commit(changes)
            .await
            .step("commit of the feature environments")?;
        let listing = store
            .list(Collection::FeatureEnvironments, "a\u{1f}")
            .await
            .step("list of the feature environments with prefix a\\u{1f}")?;
        let ids: Vec<_> = listing.records.iter().map(|(id, _)| id.as_str()).collect();
        ensure_eq(
            ids,
            vec!["a\u{1f}x", "a\u{1f}y"],
            "the ids of the feature environments with prefix a\\u{1f}, in order",
        )?;
        ensure_eq(
            listing.revision,
            revision,
            "the revision of the listing (the commit's)",
        )?;
        let all = store
            .list(Collection::FeatureEnvironments, "")
            .await
            .step("list of the feature environments")?;
        let ids: Vec<_> = all.records.iter().map(|(id, _)| id.as_str()).collect();
        ensure_eq(
            ids,
            vec!["a\u{1f}x", "a\u{1f}y", "ab", "b\u{1f}x", "c"],
            "the ids of all feature environments, in order",
        )
    })
    .await
}

/// `get_many` answers in the order asked, `None` for missing records.
pub async fn get_many_in_order(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("get_many_in_order", async {
        put(store, feature("a"), json!("a")).await?;
        put(store, feature("c"), json!("c")).await?;
        let got = store
            .get_many(&[feature("c"), feature("b"), feature("a")])
            .await
            .step("get_many of features c, b, a")?;
        let values = got
            .iter()
            .map(|v| v.as_ref().map(|v| v.value.to_value()).transpose())
            .collect::<Result<Vec<_>, _>>()
            .step("reading the values of features c, b, a")?;
        ensure_eq(
            values,
            vec![Some(json!("c")), None, Some(json!("a"))],
            "the values of get_many of features c, b (missing), a, in that order",
        )
    })
    .await
}

/// A change set with no writes still checks preconditions and takes a revision.
pub async fn empty_change_set(store: &dyn Store) -> Result<(), ScenarioFailure> {
    scenario("empty_change_set", async {
        let revision = put(store, feature("a"), json!(1)).await?;
        let mut changes = ChangeSet::new();
        changes.expect_revision(feature("a"), revision);
        let next = revision
            .0
            .checked_add(1)
            .present(format_args!("the revision after {revision}"))?;
        ensure_eq(
            store
                .commit(changes)
                .await
                .step("commit of a change set with only a precondition")?,
            Revision(next),
            "the revision of a change set with only a precondition",
        )?;
        let mut changes = ChangeSet::new();
        changes.expect_revision(feature("a"), Revision::ABSENT);
        ensure_conflict(
            store.commit(changes).await,
            "a change set with only a failing precondition (feature a absent)",
        )
    })
    .await
}
