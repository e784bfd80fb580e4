//! Read views: one revision, consistent under concurrent writes.

use std::pin::Pin;
use std::sync::Arc;

use serde_json::json;

use crate::store::{ChangeSet, Collection, Key, Listing, ReadView, Store, Versioned};

use super::{
    Check, Failed, Present, ScenarioFailure, Step, ensure, ensure_eq, event, feature, number,
    scenario, spawn_all,
};

/// Commit generation `generation`: the same number into a feature `g` and a sequence `g`
/// (one commit, so every consistent read sees them equal) and into one of `spread` records.
async fn write_generation(store: &dyn Store, generation: u64, spread: u64) -> Check {
    let mut changes = ChangeSet::new();
    changes
        .put(feature("g"), json!(generation))
        .put(Key::new(Collection::Sequences, "g"), json!(generation))
        .put(
            feature(&format!("r{:05}", generation % spread)),
            json!({ "generation": generation }),
        )
        .event(event("generation", generation));
    store
        .commit(changes)
        .await
        .step(format_args!("commit of generation {generation}"))?;
    Ok(())
}

/// What a view shows, checked for consistency: the two `g` records agree, no record is newer
/// than the view, and no record holds a generation newer than `g`. Returns `g` and the
/// feature listing.
async fn check_view(view: &dyn ReadView, spread: u64) -> Check<(u64, Listing)> {
    let revision = view.revision();
    let got = view
        .get_many(&[feature("g"), Key::new(Collection::Sequences, "g")])
        .await
        .step("get_many of feature g and sequence g in a view")?;
    let [g_feature, g_sequence] = <[Option<Versioned>; 2]>::try_from(got).map_err(|got| {
        Failed(format!(
            "get_many of 2 keys in a view answered {} records: {got:?}",
            got.len()
        ))
    })?;
    let g_feature = g_feature.present(format_args!("feature g in a view at {revision}"))?;
    let g = number(&g_feature, "feature g")?;
    ensure_eq(
        &g_sequence
            .present(format_args!("sequence g in a view at {revision}"))?
            .value,
        &json!(g),
        format_args!(
            "sequence g against feature g ({g}): two records of one commit disagree in a view at {revision}"
        ),
    )?;
    ensure(
        g_feature.revision <= revision,
        format_args!(
            "feature g at {} in a view at {revision}",
            g_feature.revision
        ),
    )?;
    let listing = view
        .list(Collection::Features, "r")
        .await
        .step("list of the features with prefix r in a view")?;
    ensure_eq(
        listing.records.len() as u64,
        spread,
        format_args!("the number of features with prefix r in a view at {revision}"),
    )?;
    for (id, record) in &listing.records {
        ensure(
            record.revision <= revision,
            format_args!("{id} at {} in a view at {revision}", record.revision),
        )?;
        let value = record.value.to_value().step(format_args!("reading {id}"))?;
        let generation = value
            .get("generation")
            .and_then(serde_json::Value::as_u64)
            .present(format_args!(
                "the generation in {id} (the record holds {value})"
            ))?;
        ensure(
            generation <= g,
            format_args!("{id} holds generation {generation} > {g}"),
        )?;
    }
    Ok((g, listing))
}

/// A view reads thousands of records at one revision: commits made after it was taken do not
/// show through it, and the same read through it answers the same before and after them.
pub async fn views_read_one_revision(store: &dyn Store) -> Result<(), ScenarioFailure> {
    const SPREAD: u64 = 2_000;
    scenario("views_read_one_revision", async {
        let mut seed = ChangeSet::new();
        for i in 0..SPREAD {
            seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
        }
        seed.put(feature("g"), json!(0))
            .put(Key::new(Collection::Sequences, "g"), json!(0));
        store.commit(seed).await.step("commit of the seed")?;
        for generation in 1..=10 {
            write_generation(store, generation, SPREAD).await?;
        }
        let before = store.revision().await.step("revision")?;
        let view = store.view().await.step("view")?;
        ensure(
            view.revision() >= before,
            format_args!(
                "a view misses a returned commit: the view is at {}, the store was at {before}",
                view.revision()
            ),
        )?;
        let (g, first) = check_view(view.as_ref(), SPREAD).await?;
        ensure_eq(g, 10, "generation g in a view after 10 generations")?;
        for generation in 11..=60 {
            write_generation(store, generation, SPREAD).await?;
        }
        let (g, second) = check_view(view.as_ref(), SPREAD).await?;
        ensure_eq(
            g,
            10,
            "generation g in the same view after 50 more (a later commit shows through a view)",
        )?;
        ensure_eq(
            &first,
            &second,
            "the features with prefix r in one view before and after 50 more generations",
        )?;
        ensure_eq(
            &view
                .get(&feature("r00042"))
                .await
                .step("get of feature r00042 in a view")?
                .present("feature r00042 in a view")?
                .value,
            &json!({ "generation": 0 }),
            "the value of feature r00042 in a view after 10 generations",
        )?;
        // A new view sees everything.
        let fresh = store.view().await.step("view")?;
        ensure_eq(
            check_view(fresh.as_ref(), SPREAD).await?.0,
            60,
            "generation g in a new view after 60 generations",
        )
    })
    .await
}

/// One writer commits continuously while readers take views of thousands of records: every
/// view is consistent (one revision), and views never go back in time.
pub async fn views_stay_consistent_under_writes(
    store: &Arc<dyn Store>,
) -> Result<(), ScenarioFailure> {
    const SPREAD: u64 = 2_000;
    const GENERATIONS: u64 = 300;
    scenario("views_stay_consistent_under_writes", async {
        let mut seed = ChangeSet::new();
        for i in 0..SPREAD {
            seed.put(feature(&format!("r{i:05}")), json!({ "generation": 0 }));
        }
        seed.put(feature("g"), json!(0))
            .put(Key::new(Collection::Sequences, "g"), json!(0));
        store.commit(seed).await.step("commit of the seed")?;
        let writer = {
            let store = Arc::clone(store);
            async move {
                for generation in 1..=GENERATIONS {
                    write_generation(store.as_ref(), generation, SPREAD).await?;
                }
                Ok(())
            }
        };
        let reader = {
            let store = Arc::clone(store);
            async move {
                let mut last = 0;
                for _ in 0..20 {
                    let view = store.view().await.step("view")?;
                    let (g, _) = check_view(view.as_ref(), SPREAD).await?;
                    ensure(
                        g >= last,
                        format_args!("a view went back from generation {last} to {g}"),
                    )?;
                    last = g;
                }
                Ok(())
            }
        };
        let writer: Pin<Box<dyn Future<Output = Check> + Send>> = Box::pin(writer);
        let reader: Pin<Box<dyn Future<Output = Check> + Send>> = Box::pin(reader);
        spawn_all([writer, reader]).await?;
        let view = store.view().await.step("view")?;
        ensure_eq(
            check_view(view.as_ref(), SPREAD).await?.0,
            GENERATIONS,
            format_args!("generation g in a new view after {GENERATIONS} generations"),
        )
    })
    .await
}
