//! Reading the event log from the journal segments through the [`EventIndex`]: a page of
//! the newest matches ([`query`]) or a run in id order ([`after`]).
//!
//! The index is consulted under the durable-state lock a few blocks at a time, and the
//! blocks are read and decoded without it, so a long read never holds up the writer. Blocks
//! are only ever appended (and the last one extended) at ids above everything a reader
//! already chose, so what a reader copied out stays valid. The caller runs these on a
//! blocking thread: they read files.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::event_index::BlockRef;
use super::{Shared, io_error, journal};
use crate::store::{Event, EventPage, EventQuery, NewEvent, StoreError};

/// How many candidate blocks one look at the index hands out.
const BLOCKS_PER_LOOK: usize = 16;

/// The events of a journal record's change set, undecoded; its preconditions and writes
/// are skipped unread.
#[derive(Deserialize)]
struct RecordEvents<'a> {
    #[serde(default, borrow)]
    events: Vec<&'a RawValue>,
}

/// What a filter needs of an event, borrowed from the record where it can be.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Keys<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    #[serde(default, borrow)]
    project: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    feature_name: Option<Cow<'a, str>>,
}

/// The events of `block` passing `filter` (all of them without one), oldest first. With a
/// filter, an event is decoded whole only when its keys match: most events of a block
/// read for a rare filter do not.
fn read_block(
    shared: &Shared,
    found: &BlockRef,
    filter: Option<&EventQuery>,
) -> Result<Vec<Event>, StoreError> {
    let block = &found.block;
    let file = shared.describe(&found.segment);
    let len = usize::try_from(block.end - block.start).unwrap_or(usize::MAX);
    let bytes = shared
        .disk
        .read_at(&found.segment, block.start, len)
        .map_err(|e| io_error(format!("could not read the event log in {file}"), e))?;
    let mut events = Vec::with_capacity(usize::try_from(block.count).unwrap_or(0));
    let mut id = block.first_id;
    for (revision, payload) in journal::records_in(&bytes, &file, block.start)? {
        let undecodable = |e: serde_json::Error| StoreError::Corrupt {
            file: file.clone(),
            offset: block.start,
            reason: format!("the events of {revision} do not decode: {e}"),
        };
        let record: RecordEvents<'_> = serde_json::from_slice(payload).map_err(undecodable)?;
        for raw in record.events {
            let wanted = match filter {
                None => true,
                Some(query) => {
                    let keys: Keys<'_> = serde_json::from_str(raw.get()).map_err(undecodable)?;
                    query.matches_keys(
                        &keys.event_type,
                        keys.project.as_deref(),
                        keys.feature_name.as_deref(),
                    )
                }
            };
            if wanted {
                let event: NewEvent = serde_json::from_str(raw.get()).map_err(undecodable)?;
                events.push(Event {
                    id,
                    revision,
                    event,
                });
            }
            id += 1;
        }
    }
    if id != block.first_id + block.count {
        return Err(StoreError::Corrupt {
            file,
            offset: block.start,
            reason: format!(
                "the index expects {} events from id {} here, the records hold {}",
                block.count,
                block.first_id,
                id - block.first_id
            ),
        });
    }
    Ok(events)
}

/// A page of the events matching `query`, newest first.
pub(super) fn query(shared: &Shared, query: &EventQuery) -> Result<EventPage, StoreError> {
    let (total, newest) = {
        let durable = shared.read_state();
        (
            durable.events.total(query),
            query.newest_id(durable.events.count()),
        )
    };
    let mut page = Vec::new();
    let Some(mut newest) = newest else {
        return Ok(EventPage::new(page, total));
    };
    let mut skip = query.offset;
    if query.is_unfiltered() {
        // Ids are dense: skipping is arithmetic.
        newest = newest.saturating_sub(skip);
        skip = 0;
    }
    let limit = query.limit;
    let mut take = |event: Event, page: &mut Vec<Event>| {
        if !query.matches(&event.event) {
            return;
        }
        if skip > 0 {
            skip -= 1;
        } else {
            page.push(event);
        }
    };
    while newest > 0 && page.len() < limit {
        let blocks = shared
            .read_state()
            .events
            .candidates_down(newest, query, BLOCKS_PER_LOOK);
        let Some(last) = blocks.last() else {
            // Below the segments' first event: an earlier version's history, if any.
            let durable = shared.read_state();
            for event in durable.events.legacy_through(newest).iter().rev() {
                if page.len() >= limit {
                    break;
                }
                take(event.clone(), &mut page);
            }
            break;
        };
        let below = last.block.first_id - 1;
        for found in &blocks {
            let filter = (!query.is_unfiltered()).then_some(query);
            for event in read_block(shared, found, filter)?.into_iter().rev() {
                if page.len() >= limit {
                    break;
                }
                if event.id <= newest {
                    take(event, &mut page);
                }
            }
            if page.len() >= limit {
                break;
            }
        }
        newest = below;
    }
    Ok(EventPage::new(page, total))
}

/// Up to `limit` events with ids above `after`, oldest first.
pub(super) fn after(shared: &Shared, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
    let mut events: Vec<Event> = shared
        .read_state()
        .events
        .legacy_after(after)
        .iter()
        .take(limit)
        .cloned()
        .collect();
    let mut after = events.last().map_or(after, |e| e.id);
    while events.len() < limit {
        let blocks = shared.read_state().events.blocks_up(after, BLOCKS_PER_LOOK);
        if blocks.is_empty() {
            break;
        }
        for found in &blocks {
            let left = limit - events.len();
            events.extend(
                read_block(shared, found, None)?
                    .into_iter()
                    .filter(|e| e.id > after)
                    .take(left),
            );
            after = found.block.last_id();
            if events.len() >= limit {
                break;
            }
        }
    }
    Ok(events)
}
