//! Reading records: from the store (its latest state) or from one read view (one revision),
//! and the readers every area shares (decoded listings, and the catalogue with Unleash's
//! built-ins merged in).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

use super::ToggleAdmin;
use super::catalog::{context_field_view, tag_type_view};
use super::records::{ContextFieldRecord, TagTypeRecord, decode};
use super::records::{FeatureEnvironmentRecord, FeatureRecord, SEP};
use super::records::{check_feature, decode_opt, feature_key, project_key};
use crate::error::{Error, Result};
use crate::import::{builtin_context_fields, builtin_strategy_definitions, builtin_tag_types};
use crate::model::{
    ContextField, FeatureStrategy, Segment, StrategyDefinition, StrategyUse, TagType,
};
use std::sync::Mutex;

use crate::store::{Collection, Key, Listing, ReadView, Revision, Store, StoreError, Versioned};

/// Where a reader reads: the store's latest state, or a view at one revision (so that a
/// document built from many records is consistent without retrying on unrelated writes).
#[derive(Clone, Copy)]
pub(crate) enum Reader<'a> {
    /// The store: each read answers from its latest state.
    Store(&'a dyn Store),
    /// A view: every read answers from the revision it shows.
    View(&'a dyn ReadView),
    /// The store's latest state, each read remembered as a precondition of a write's
    /// commit (see `flow.rs`).
    Tracked(&'a Tracked<'a>),
}

impl ToggleAdmin {
    /// A reader of the store's latest state.
    pub(crate) fn reader(&self) -> Reader<'_> {
        Reader::Store(self.store.as_ref())
    }
}

impl Reader<'_> {
    async fn get_many(
        &self,
        keys: &[Key],
    ) -> std::result::Result<Vec<Option<Versioned>>, StoreError> {
        match self {
            Reader::Store(store) => store.get_many(keys).await,
            Reader::View(view) => view.get_many(keys).await,
            Reader::Tracked(tracked) => tracked.get_many(keys).await,
        }
    }

    /// The records of `collection` whose id starts with `prefix`, with the collection's
    /// revision.
    pub(crate) async fn list(&self, collection: Collection, prefix: &str) -> Result<Listing> {
        Ok(match self {
            Reader::Store(store) => store.list(collection, prefix).await?,
            Reader::View(view) => view.list(collection, prefix).await?,
            Reader::Tracked(tracked) => tracked.list(collection, prefix).await?,
        })
    }

    /// The records at `keys`, in one read.
    pub(crate) async fn read<const N: usize>(
        &self,
        keys: &[Key; N],
    ) -> Result<[Option<Versioned>; N]> {
        let records = self.get_many(keys).await?;
        records.try_into().map_err(|_| {
            Error::Store(StoreError::Backend {
                message: "the store's get_many answered with the wrong number of records"
                    .to_owned(),
                source: None,
            })
        })
    }

    /// The records at `keys`, one per key: a store answering with another count is an
    /// error rather than a panic on indexing.
    pub(crate) async fn get_all(
        &self,
        keys: &[Key],
    ) -> Result<Vec<Option<crate::store::Versioned>>> {
        let records = self.get_many(keys).await?;
        if records.len() != keys.len() {
            return Err(Error::Store(crate::store::StoreError::Backend {
                message: "the store's get_many answered with the wrong number of records"
                    .to_owned(),
                source: None,
            }));
        }
        Ok(records)
    }

    /// The records of `collection`, decoded, with the collection's revision.
    pub(crate) async fn list_decoded<T: DeserializeOwned>(
        &self,
        collection: Collection,
    ) -> Result<(Revision, Vec<T>)> {
        let listing = self.list(collection, "").await?;
        let values = listing
            .records
            .iter()
            .map(|(id, record)| decode(&Key::new(collection, id.clone()), &record.value))
            .collect::<Result<Vec<T>>>()?;
        Ok((listing.revision, values))
    }

    /// Every strategy definition by name, built-ins included.
    pub(crate) async fn strategy_definition_map(
        &self,
    ) -> Result<(Revision, BTreeMap<String, StrategyDefinition>)> {
        let (revision, stored) = self
            .list_decoded::<StrategyDefinition>(Collection::StrategyDefinitions)
            .await?;
        let all = builtin_strategy_definitions()
            .into_iter()
            .chain(stored)
            .map(|d| (d.name.clone(), d))
            .collect();
        Ok((revision, all))
    }

    /// Every context field by name, built-ins included.
    pub(crate) async fn context_field_map(
        &self,
    ) -> Result<(Revision, BTreeMap<String, ContextField>)> {
        let (revision, stored) = self
            .list_decoded::<ContextFieldRecord>(Collection::ContextFields)
            .await?;
        let all = builtin_context_fields()
            .into_iter()
            .chain(stored.iter().map(context_field_view))
            .map(|f| (f.name.clone(), f))
            .collect();
        Ok((revision, all))
    }

    /// Every tag type by name, `simple` included.
    pub(crate) async fn tag_type_map(&self) -> Result<(Revision, BTreeMap<String, TagType>)> {
        let (revision, stored) = self
            .list_decoded::<TagTypeRecord>(Collection::TagTypes)
            .await?;
        let all = builtin_tag_types()
            .into_iter()
            .chain(stored.iter().map(tag_type_view))
            .map(|t| (t.name.clone(), t))
            .collect();
        Ok((revision, all))
    }

    /// Every flag's strategy for which `uses` holds, sorted by project, flag, environment and
    /// id. Read through `reader`: in a transaction, the collections of feature environments and
    /// of features become preconditions, so no strategy can start using the thing unseen.
    pub(crate) async fn strategy_uses(
        &self,
        uses: impl Fn(&FeatureStrategy) -> bool,
    ) -> Result<Vec<StrategyUse>> {
        let listing = self.list(Collection::FeatureEnvironments, "").await?;
        let mut found = Vec::new();
        for (id, record) in &listing.records {
            let Some((feature, environment)) = id.split_once(SEP) else {
                continue;
            };
            let key = Key::new(Collection::FeatureEnvironments, id.clone());
            let value: FeatureEnvironmentRecord = decode(&key, &record.value)?;
            for strategy in value.strategies.iter().filter(|s| uses(s)) {
                found.push((feature.to_owned(), environment.to_owned(), strategy.clone()));
            }
        }
        if found.is_empty() {
            return Ok(Vec::new());
        }
        let (_, features) = self
            .list_decoded::<FeatureRecord>(Collection::Features)
            .await?;
        let mut out: Vec<StrategyUse> = found
            .into_iter()
            .filter_map(|(feature, environment, strategy)| {
                let project = features.iter().find(|f| f.name == feature)?.project.clone();
                Some(StrategyUse {
                    id: strategy.id.unwrap_or_default(),
                    project_id: project,
                    feature_name: feature,
                    strategy_name: strategy.name,
                    environment,
                })
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.project_id, &a.feature_name, &a.environment, &a.id).cmp(&(
                &b.project_id,
                &b.feature_name,
                &b.environment,
                &b.id,
            ))
        });
        Ok(out)
    }

    /// The feature `feature` of `project`, with the record at `key` that belongs to it (its
    /// tags, its links), empty when there is none; 404 unless the project exists and the
    /// feature is in it.
    pub(crate) async fn feature_with<R: DeserializeOwned + Default>(
        &self,
        project: &str,
        feature: &str,
        key: Key,
    ) -> Result<(FeatureRecord, R)> {
        let fkey = feature_key(feature);
        let [p, f, record] = self
            .read(&[project_key(project), fkey.clone(), key.clone()])
            .await?;
        let found = check_feature(
            project,
            feature,
            p.is_some(),
            decode_opt(&fkey, f.as_ref())?,
        )?;
        Ok((
            found,
            decode_opt::<R>(&key, record.as_ref())?.unwrap_or_default(),
        ))
    }

    /// Every segment, by id.
    pub(crate) async fn segment_list(&self) -> Result<(Revision, Vec<Segment>)> {
        let (revision, mut segments) = self.list_decoded::<Segment>(Collection::Segments).await?;
        segments.sort_by_key(|s| s.id);
        Ok((revision, segments))
    }
}

/// What a transaction has read: each record's and each collection's revision, the
/// preconditions of its commit.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    pub(crate) records: Vec<(Key, Revision)>,
    pub(crate) collections: Vec<(Collection, Revision)>,
}

/// Reads from the store's latest state that remember what they saw. Shared by reference
/// (a [`Reader::Tracked`]), hence the lock, which is never held across an await.
#[derive(Debug)]
pub(crate) struct Tracked<'s> {
    store: &'s dyn Store,
    seen: Mutex<Seen>,
}

impl<'s> Tracked<'s> {
    pub(crate) fn new(store: &'s dyn Store) -> Self {
        Self {
            store,
            seen: Mutex::new(Seen::default()),
        }
    }

    /// Remember records read elsewhere (a permission decision's basis).
    pub(crate) fn saw(&self, records: Vec<(Key, Revision)>) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.records.extend(records);
        }
    }

    /// What was read.
    pub(crate) fn into_seen(self) -> Seen {
        self.seen.into_inner().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) async fn get_many(
        &self,
        keys: &[Key],
    ) -> std::result::Result<Vec<Option<Versioned>>, StoreError> {
        let records = self.store.get_many(keys).await?;
        if let Ok(mut seen) = self.seen.lock() {
            for (key, record) in keys.iter().zip(&records) {
                let revision = record.as_ref().map_or(Revision::ABSENT, |r| r.revision);
                seen.records.push((key.clone(), revision));
            }
        }
        Ok(records)
    }

    pub(crate) async fn list(
        &self,
        collection: Collection,
        prefix: &str,
    ) -> std::result::Result<Listing, StoreError> {
        let listing = self.store.list(collection, prefix).await?;
        if let Ok(mut seen) = self.seen.lock() {
            seen.collections.push((collection, listing.revision));
        }
        Ok(listing)
    }
}
