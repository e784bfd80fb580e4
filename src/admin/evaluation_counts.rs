//! Usage counts of the evaluations this server makes itself (OFREP's, see `ofrep.rs`), kept
//! apart from the metrics buffer until it is read or written (`client_metrics.rs`).
//!
//! A bulk evaluation counts every flag of its scope: counted into the buffer, that would be
//! a thousand look-ups of (feature, application, environment, hour) keys per request under
//! the buffer's lock. Here a request finds its tally once — per scope document, application
//! and hour — and counts each flag at the flag's place in the document: one lock, one
//! look-up and, once a tally exists, no allocation per request. The flag names are taken
//! from the document (which the tally keeps) only when the tallies are moved into the
//! buffer, so the counts, and what reads show of them, are those the buffer would hold.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use unleash_types::client_features::ClientFeatures;

/// The counts of one flag in a tally.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FlagCounts {
    pub(super) yes: u64,
    pub(super) no: u64,
    /// By variant name: a flag has few, so a list is searched faster than a map.
    pub(super) variants: Vec<(String, u64)>,
}

impl FlagCounts {
    /// Whether anything was counted.
    pub(super) fn is_empty(&self) -> bool {
        self.yes == 0 && self.no == 0 && self.variants.is_empty()
    }

    /// The variants as the buffer keeps them.
    pub(super) fn variant_map(&self) -> BTreeMap<String, u64> {
        let mut map: BTreeMap<String, u64> = BTreeMap::new();
        for (name, n) in &self.variants {
            let slot = map.entry(name.clone()).or_default();
            *slot = slot.saturating_add(*n);
        }
        map
    }
}

/// The evaluations of one scope document's flags for one application in one hour.
#[derive(Debug)]
pub(super) struct Tally {
    /// The document whose flags are counted, by place (kept alive: its address is the
    /// tally's key).
    pub(super) document: Arc<ClientFeatures>,
    pub(super) application: String,
    pub(super) environment: String,
    pub(super) hour: DateTime<Utc>,
    /// One per flag of the document, in its order.
    pub(super) flags: Vec<FlagCounts>,
}

impl Tally {
    /// Each flag counted, with its name.
    pub(super) fn counted(&self) -> impl Iterator<Item = (&str, &FlagCounts)> {
        self.document
            .features
            .iter()
            .zip(&self.flags)
            .filter(|(_, counts)| !counts.is_empty())
            .map(|(feature, counts)| (feature.name.as_str(), counts))
    }
}

/// (the document's address, application, hour).
type TallyKey = (usize, String, DateTime<Utc>);

#[derive(Debug, Default)]
struct Tallies {
    by_key: HashMap<TallyKey, Tally>,
    /// How many flags the tallies hold, together.
    flags: usize,
}

/// The tallies not yet moved into the metrics buffer.
#[derive(Debug, Default)]
pub(crate) struct EvaluationCounts {
    tallies: Mutex<Tallies>,
}

impl EvaluationCounts {
    /// Count `evaluations` — `(place of the flag in document, enabled, variant)` — for
    /// `application` in `environment` in `hour`. A place outside the document is ignored;
    /// a new tally that would take the tallies past `limit` flags drops its counts (as the
    /// buffer drops what would take it past its limit).
    pub(super) fn count<'a>(
        &self,
        document: &Arc<ClientFeatures>,
        environment: &str,
        application: &str,
        hour: DateTime<Utc>,
        limit: usize,
        evaluations: impl Iterator<Item = (usize, bool, Option<&'a str>)>,
    ) {
        let Ok(mut tallies) = self.tallies.lock() else {
            return;
        };
        let tallies = &mut *tallies;
        let key = (Arc::as_ptr(document) as usize, application.to_owned(), hour);
        let tally = match tallies.by_key.get_mut(&key) {
            Some(tally) => tally,
            None => {
                let size = document.features.len();
                if tallies.flags.saturating_add(size) > limit {
                    return;
                }
                tallies.flags += size;
                tallies.by_key.entry(key).or_insert_with(|| Tally {
                    document: document.clone(),
                    application: application.to_owned(),
                    environment: environment.to_owned(),
                    hour,
                    flags: vec![FlagCounts::default(); size],
                })
            }
        };
        for (place, enabled, variant) in evaluations {
            let Some(counts) = tally.flags.get_mut(place) else {
                continue;
            };
            if enabled {
                counts.yes = counts.yes.saturating_add(1);
            } else {
                counts.no = counts.no.saturating_add(1);
            }
            if let Some(variant) = variant {
                match counts.variants.iter_mut().find(|(name, _)| name == variant) {
                    Some((_, n)) => *n = n.saturating_add(1),
                    None => counts.variants.push((variant.to_owned(), 1)),
                }
            }
        }
    }

    /// Every tally, leaving none.
    pub(super) fn take(&self) -> Vec<Tally> {
        let Ok(mut tallies) = self.tallies.lock() else {
            return Vec::new();
        };
        let taken = std::mem::take(&mut *tallies);
        taken.by_key.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unleash_types::client_features::ClientFeature;

    fn document(names: &[&str]) -> Arc<ClientFeatures> {
        Arc::new(ClientFeatures {
            version: 2,
            features: names
                .iter()
                .map(|name| ClientFeature {
                    name: (*name).to_owned(),
                    ..ClientFeature::default()
                })
                .collect(),
            segments: None,
            query: None,
            meta: None,
        })
    }

    #[test]
    fn counts_by_place_and_names_them_when_taken() {
        let counts = EvaluationCounts::default();
        let doc = document(&["a", "b", "c"]);
        let hour = Utc::now();
        for _ in 0..2 {
            counts.count(
                &doc,
                "development",
                "web",
                hour,
                100,
                [(0, true, Some("blue")), (1, false, None), (7, true, None)].into_iter(),
            );
        }
        counts.count(
            &doc,
            "development",
            "ios",
            hour,
            100,
            [(0, true, None)].into_iter(),
        );
        let mut taken = counts.take();
        taken.sort_by(|a, b| a.application.cmp(&b.application));
        assert_eq!(taken.len(), 2);
        let web: Vec<(&str, &FlagCounts)> = taken[1].counted().collect();
        assert_eq!(web.len(), 2);
        assert_eq!(web[0].0, "a");
        assert_eq!((web[0].1.yes, web[0].1.no), (2, 0));
        assert_eq!(
            web[0].1.variant_map(),
            BTreeMap::from([("blue".to_owned(), 2)])
        );
        assert_eq!((web[1].0, web[1].1.yes, web[1].1.no), ("b", 0, 2));
        assert_eq!(taken[0].counted().count(), 1);
        assert!(counts.take().is_empty());
    }

    #[test]
    fn a_tally_past_the_limit_is_dropped() {
        let counts = EvaluationCounts::default();
        let doc = document(&["a", "b"]);
        let hour = Utc::now();
        counts.count(&doc, "e", "one", hour, 3, [(0, true, None)].into_iter());
        counts.count(&doc, "e", "two", hour, 3, [(0, true, None)].into_iter());
        counts.count(&doc, "e", "one", hour, 3, [(1, true, None)].into_iter());
        let taken = counts.take();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].application, "one");
        assert_eq!(taken[0].counted().count(), 2);
    }
}
