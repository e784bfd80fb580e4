//! Read views: one revision, consistent under concurrent writes.

use std::sync::Arc;

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Listing, ReadView, Store, Versioned};

use super::{event, feature, spawn_all};

/// Commit generation `generation`: the same number into a feature `g` and a sequence `g`
/// (one commit, so every consistent read sees them equal) and into one of `spread` records.
async fn write_generation(store: &dyn Store, generation: u64, spread: u64) {
    let mut changes = ChangeSet::new();
    changes
        .put(feature("g"), json!(generation))
        .put(Key::new(Collection::Sequences, "g"), json!(generation))
        .put(
            feature(&format!("r{:05}", generation % spread)),
            json!({ "generation": generation }),
        )
        .event(event("generation", generation));
    store.commit(changes).await.expect("commit a generation");
}

/// What a view shows, checked for consistency: the two `g` records agree, no record is newer
/// than the view, and no record holds a generation newer than `g`. Returns `g` and the
/// feature listing.
async fn check_view(view: &dyn ReadView, spread: u64) -> (u64, Listing) {
    let revision = view.revision();
    let [g_feature, g_sequence] = <[Option<Versioned>; 2]>::try_from(
        view.get_many(&[feature("g"), Key::new(Collection::Sequences, "g")])
            .await
            .unwrap(),
    )
    .unwrap();
    let g_feature = g_feature.expect("g");
    let g = g_feature.value.to_value().unwrap().as_u64().unwrap();
    assert_eq!(
        g_sequence.expect("sequence g").value,
        json!(g),
        "two records of one commit disagree in a view"
    );
    assert!(g_feature.revision <= revision);
    let listing = view.list(Collection::Features, "r").await.unwrap();
    assert_eq!(listing.records.len() as u64, spread);
    for (id, record) in &listing.records {
        assert!(
            record.revision <= revision,
            "{id} at {} in a view at {revision}",
            record.revision
        );
        let generation = record.value.to_value().unwrap()["generation"]
            .as_u64()
            .unwrap();
        assert!(generation <= g, "{id} holds generation {generation} > {g}");
    }
    (g, listing)
}

/// A view reads thousands of records at one revision: commits made after it was taken do not
/// show through it, and the same read through it answers the same before and after them.
pub async fn views_read_one_revision(store: &dyn Store) {
    const SPREAD: u64 = 2_000;
    let mut seed = ChangeSet::new();
    for i in 0..SPREAD {
        seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
    }
    seed.put(feature("g"), json!(0))
        .put(Key::new(Collection::Sequences, "g"), json!(0));
    store.commit(seed).await.unwrap();
    for generation in 1..=10 {
        write_generation(store, generation, SPREAD).await;
    }
    let before = store.revision().await.unwrap();
    let view = store.view().await.unwrap();
    assert!(view.revision() >= before, "a view misses a returned commit");
    let (g, first) = check_view(view.as_ref(), SPREAD).await;
    assert_eq!(g, 10);
    for generation in 11..=60 {
        write_generation(store, generation, SPREAD).await;
    }
    let (g, second) = check_view(view.as_ref(), SPREAD).await;
    assert_eq!(g, 10, "a later commit shows through a view");
    assert_eq!(first, second);
    assert_eq!(
        view.get(&feature("r00042")).await.unwrap().unwrap().value,
        json!({ "generation": 0 })
    );
    // A new view sees everything.
    let fresh = store.view().await.unwrap();
    assert_eq!(check_view(fresh.as_ref(), SPREAD).await.0, 60);
}

/// One writer commits continuously while readers take views of thousands of records: every
/// view is consistent (one revision), and views never go back in time.
pub async fn views_stay_consistent_under_writes(store: &Arc<dyn Store>) {
    const SPREAD: u64 = 2_000;
    const GENERATIONS: u64 = 300;
    let mut seed = ChangeSet::new();
    for i in 0..SPREAD {
        seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
    }
    seed.put(feature("g"), json!(0))
        .put(Key::new(Collection::Sequences, "g"), json!(0));
    store.commit(seed).await.unwrap();
    let writer = {
        let store = Arc::clone(store);
        async move {
            for generation in 1..=GENERATIONS {
                write_generation(store.as_ref(), generation, SPREAD).await;
            }
        }
    };
    let reader = {
        let store = Arc::clone(store);
        async move {
            let mut last = 0;
            for _ in 0..20 {
                let view = store.view().await.unwrap();
                let (g, _) = check_view(view.as_ref(), SPREAD).await;
                assert!(g >= last, "a view went back from generation {last} to {g}");
                last = g;
            }
        }
    };
    let writer: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(writer);
    let reader: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(reader);
    spawn_all([writer, reader]).await;
    let view = store.view().await.unwrap();
    assert_eq!(check_view(view.as_ref(), SPREAD).await.0, GENERATIONS);
}
