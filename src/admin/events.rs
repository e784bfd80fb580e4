//! The audit log: every change, who made it, when, before and after. Events are written by
//! the flow with the change they describe (`flow.rs`); this file reads them.

use super::ToggleAdmin;
use crate::auth::Caller;
use crate::error::Result;
use crate::store::{Event, EventPage, EventQuery};

impl ToggleAdmin {
    /// Up to `limit` events of the audit log with id greater than `after`, oldest first.
    /// Any valid key may read the log.
    pub async fn events(&self, caller: &Caller, after: u64, limit: usize) -> Result<Vec<Event>> {
        self.require(caller, &[]).await?;
        Ok(self.store.events(after, limit).await?)
    }

    /// A page of the audit log, newest first, filtered by type, project and feature, with
    /// how many events match in all (see [`EventQuery`]). Any valid key may read the log.
    pub async fn query_events(&self, caller: &Caller, query: &EventQuery) -> Result<EventPage> {
        self.require(caller, &[]).await?;
        Ok(self.store.query_events(query).await?)
    }
}
