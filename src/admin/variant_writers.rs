//! Writers of one feature environment's variants, combined.
//!
//! Concurrent variant changes (`PATCH` and `PUT …/variants`) of the same feature environment
//! queue up on this instance; whoever finds the queue's turn free leads: it takes every
//! change waiting, reads the feature environment once, applies the changes one after the
//! other in arrival order (each on the list the one before it left), and commits them as one
//! change set (the last list, and one `feature-environment-variants-updated` event per change
//! with its own caller, old and new lists). Every writer is answered with the list its own
//! change produced, once the commit is durable.
//!
//! Why: a commit's cost is mostly fixed (a transaction, a sync), and writers of one record
//! must take turns anyway (each decides on what the one before wrote). One at a time, a hot
//! feature on a PostgresStore was served at one database round trip per change, slower than
//! Unleash (which loses updates instead). Combined, one round trip serves every change that
//! queued meanwhile; no update is lost, since the change set still expects the revisions
//! read, plus every writer's authorisation basis (a key revoked meanwhile fails the commit,
//! which is then decided again with every writer authorised afresh).
//!
//! The result is what the same changes one after the other would give. A change that fails
//! on its own (a patch that does not apply, a list that does not validate, a permission no
//! longer held) is answered with its error and left out. When the batch as a whole cannot be
//! decided (the feature environment missing or archived, a NUL in a value, a store error
//! while reading), every writer of it decides alone, as before combining, so each gets
//! exactly the answer of its own request. The leader's work runs in a task of its own: a
//! leader whose client hangs up does not strand the writers it took.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use json_patch::Patch;
use serde_json::Value;
use tokio::sync::oneshot;

use super::Permit;
use crate::error::{Error, Result};
use crate::model::FeatureVariants;
use crate::store::StoreError;

/// What a variant change does to the stored list.
#[derive(Clone, Copy)]
pub(crate) enum VariantsChange<'a> {
    /// Apply a JSON Patch to it (`PATCH`).
    Patch(&'a Patch),
    /// Replace it with this list, still raw JSON so that problems are reported by path (`PUT`).
    Replace(&'a Value),
}

/// A variant change, owned so that another task can apply it.
#[derive(Debug, Clone)]
pub(super) enum OwnedChange {
    /// A JSON Patch of the list.
    Patch(Patch),
    /// A new list, as raw JSON.
    Replace(Value),
}

impl OwnedChange {
    pub(super) fn of(change: VariantsChange<'_>) -> Self {
        match change {
            VariantsChange::Patch(patch) => OwnedChange::Patch(patch.clone()),
            VariantsChange::Replace(list) => OwnedChange::Replace(list.clone()),
        }
    }

    pub(super) fn borrowed(&self) -> VariantsChange<'_> {
        match self {
            OwnedChange::Patch(patch) => VariantsChange::Patch(patch),
            OwnedChange::Replace(list) => VariantsChange::Replace(list),
        }
    }
}

/// How a writer is answered.
pub(super) enum Outcome {
    /// Its change was decided (and, if `Ok`, committed and durable).
    Done(Result<FeatureVariants>),
    /// Decide alone: the batch could not be decided as a whole.
    Alone,
}

/// One waiting change.
pub(super) struct Writer {
    /// The admission: made before the body was read, decided again after a conflict.
    pub(super) permit: Permit,
    pub(super) change: OwnedChange,
    reply: oneshot::Sender<Outcome>,
    /// Told when a leader takes this writer: from then on it only waits for its answer.
    pub(super) taken: Arc<tokio::sync::Notify>,
}

impl Writer {
    pub(super) fn answer(self, outcome: Outcome) {
        // A writer whose request was dropped no longer needs its answer.
        let _ = self.reply.send(outcome);
    }
}

/// Project, feature and environment: what one queue's writers change.
pub(super) type Target = (String, String, String);

/// The writers waiting on one feature environment, and the turn to lead them.
#[derive(Debug, Default)]
pub(super) struct Queue {
    waiting: Mutex<Vec<Writer>>,
    pub(super) turn: Arc<tokio::sync::Mutex<()>>,
}

impl Queue {
    /// Every writer waiting now, in arrival order.
    pub(super) fn take(&self) -> Vec<Writer> {
        let taken =
            std::mem::take(&mut *self.waiting.lock().unwrap_or_else(PoisonError::into_inner));
        for writer in &taken {
            // A permit is kept if the writer is not waiting for it yet.
            writer.taken.notify_one();
        }
        taken
    }

    fn is_empty(&self) -> bool {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

/// A queued writer's side: its queue, where its answer comes, and the signal that a leader
/// took it.
pub(super) struct Ticket {
    pub(super) queue: Arc<Queue>,
    pub(super) answer: oneshot::Receiver<Outcome>,
    pub(super) taken: Arc<tokio::sync::Notify>,
}

impl Ticket {
    /// Whether `writer` is this ticket's own.
    pub(super) fn is_mine(&self, writer: &Writer) -> bool {
        Arc::ptr_eq(&self.taken, &writer.taken)
    }
}

/// The queues of the feature environments being written, by target; a queue is dropped
/// when its last writer is answered.
#[derive(Debug, Default)]
pub(crate) struct VariantWriters {
    queues: Mutex<HashMap<Target, Arc<Queue>>>,
}

impl VariantWriters {
    /// Queue a change of `target`; the receiver gets its answer.
    pub(super) fn enqueue(
        &self,
        target: &Target,
        permit: Permit,
        change: VariantsChange<'_>,
    ) -> Ticket {
        let (reply, answer) = oneshot::channel();
        let taken = Arc::new(tokio::sync::Notify::new());
        let writer = Writer {
            permit,
            change: OwnedChange::of(change),
            reply,
            taken: Arc::clone(&taken),
        };
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        let queue = Arc::clone(queues.entry(target.clone()).or_default());
        queue
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(writer);
        Ticket {
            queue,
            answer,
            taken,
        }
    }

    /// Let go of `queue` (the caller's handle on the queue of `target`), and drop the queue
    /// if nobody is in it or holds it any more. Handles are taken and let go of under the
    /// same lock, so the count is exact; a handle dropped elsewhere (a request dropped while
    /// waiting) leaves an empty queue in the map until the next writer of that target.
    pub(super) fn forget(&self, target: &Target, queue: Arc<Queue>) {
        let mut queues = self.queues.lock().unwrap_or_else(PoisonError::into_inner);
        drop(queue);
        if queues
            .get(target)
            .is_some_and(|queue| Arc::strong_count(queue) == 1 && queue.is_empty())
        {
            queues.remove(target);
        }
    }

    /// How many feature environments have writers now (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.queues
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// The same error again, for another writer of a batch: errors are not `Clone` (they may
/// carry their cause), so the copy keeps the kind, the status, the message and the details,
/// without the cause.
pub(super) fn echo(error: &Error) -> Error {
    match error {
        Error::Validation {
            message, details, ..
        } => Error::Validation {
            message: message.clone(),
            details: details.clone(),
            source: None,
        },
        Error::AuthenticationRequired { message } => Error::AuthenticationRequired {
            message: message.clone(),
        },
        Error::NoAccess {
            message,
            permissions,
        } => Error::NoAccess {
            message: message.clone(),
            permissions: permissions.clone(),
        },
        Error::NotFound { message, details } => Error::NotFound {
            message: message.clone(),
            details: details.clone(),
        },
        Error::NameExists { message } => Error::NameExists {
            message: message.clone(),
        },
        Error::Contention { message } => Error::Contention {
            message: message.clone(),
        },
        Error::InUse { message, details } => Error::InUse {
            message: message.clone(),
            details: details.clone(),
        },
        Error::TooManyRequests { message } => Error::TooManyRequests {
            message: message.clone(),
        },
        Error::Maintenance { message } => Error::Maintenance {
            message: message.clone(),
        },
        Error::Store(source) => Error::Store(echo_store(source)),
        Error::ServiceUnavailable { source } => Error::ServiceUnavailable {
            source: echo_store(source),
        },
        Error::StorageFull { source } => Error::StorageFull {
            source: echo_store(source),
        },
        Error::Internal { message, .. } => Error::internal(message.clone(), None),
    }
}

/// [`echo`] of a store's error.
fn echo_store(error: &StoreError) -> StoreError {
    let io = |source: &std::io::Error| std::io::Error::new(source.kind(), source.to_string());
    match error {
        StoreError::Conflict(what) => StoreError::Conflict(what.clone()),
        StoreError::Locked { path } => StoreError::Locked { path: path.clone() },
        StoreError::Io { context, source } => StoreError::Io {
            context: context.clone(),
            source: io(source),
        },
        StoreError::Corrupt {
            file,
            offset,
            reason,
        } => StoreError::Corrupt {
            file: file.clone(),
            offset: *offset,
            reason: reason.clone(),
        },
        StoreError::UnsupportedFormat {
            file,
            found,
            supported,
        } => StoreError::UnsupportedFormat {
            file: file.clone(),
            found: *found,
            supported: *supported,
        },
        StoreError::OutOfSpace { context, source } => StoreError::OutOfSpace {
            context: context.clone(),
            source: io(source),
        },
        StoreError::Unavailable { message, .. } => StoreError::Unavailable {
            message: message.clone(),
            source: None,
        },
        StoreError::Backend { message, .. } => StoreError::Backend {
            message: message.clone(),
            source: None,
        },
        // An encoding error's cause cannot be made again; its message can.
        other @ StoreError::Encoding { .. } => StoreError::Backend {
            message: other.to_string(),
            source: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NewFeature;
    use crate::model::{Environment, Project};
    use crate::{MemoryStore, ToggleAdmin};

    /// Writers that arrive together are combined, none is lost, each gets the list its own
    /// change made, every change has its event, and no queue is left behind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_additions_are_combined_and_all_kept() {
        let admin = ToggleAdmin::new(MemoryStore::new());
        let key = admin.bootstrap_admin_key("ops").await.unwrap();
        let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
        let environment = Environment {
            name: "production".into(),
            environment_type: "production".into(),
            ..Default::default()
        };
        admin
            .create_environment(&caller, &environment)
            .await
            .unwrap();
        let project = Project {
            id: "shop".into(),
            name: "Shop".into(),
            environments: vec!["production".into()],
            ..Default::default()
        };
        admin.create_project(&caller, &project).await.unwrap();
        let feature = NewFeature {
            name: "checkout".into(),
            ..Default::default()
        };
        admin
            .create_feature(&caller, "shop", &feature)
            .await
            .unwrap();
        let before = admin.events(&caller, 0, 1000).await.unwrap().len();
        let tasks: Vec<_> = (0..32)
            .map(|i| {
                let (admin, caller) = (admin.clone(), caller.clone());
                tokio::spawn(async move {
                    let patch = crate::variants::decode_patch(&serde_json::json!([
                        {"op": "add", "path": "/-", "value": {"name": format!("v{i:02}"), "weight": 0}}
                    ]))
                    .unwrap();
                    admin
                        .patch_variants(&caller, "shop", "checkout", "production", &patch)
                        .await
                        .unwrap()
                })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        // Each answer holds its own addition and those committed before it.
        for (i, answer) in answers.iter().enumerate() {
            let name = format!("v{i:02}");
            assert!(answer.variants.iter().any(|v| v.name == name), "{name}");
        }
        let stored = admin
            .variants(&caller, "shop", "checkout", "production")
            .await
            .unwrap();
        assert_eq!(stored.variants.len(), 32);
        let events = admin.events(&caller, 0, 1000).await.unwrap();
        let changes = events[before..]
            .iter()
            .filter(|e| e.event.event_type == "feature-environment-variants-updated")
            .count();
        assert_eq!(changes, 32);
        assert_eq!(admin.writers.len(), 0, "a queue was left behind");
    }

    #[test]
    fn an_echo_keeps_the_kind_status_and_message() {
        let errors = [
            Error::Store(StoreError::Unavailable {
                message: "PostgreSQL: commit: the server is down".into(),
                source: Some("refused".into()),
            }),
            Error::Store(StoreError::OutOfSpace {
                context: "writing the journal".into(),
                source: std::io::Error::new(std::io::ErrorKind::StorageFull, "no space"),
            }),
            Error::Contention {
                message: "gave up".into(),
            },
            Error::StorageFull {
                source: StoreError::OutOfSpace {
                    context: "writing the journal".into(),
                    source: std::io::Error::new(std::io::ErrorKind::StorageFull, "no space"),
                },
            },
            Error::ServiceUnavailable {
                source: StoreError::Unavailable {
                    message: "down".into(),
                    source: None,
                },
            },
            Error::invalid_at("/0/weight", "must be a number"),
        ];
        for error in &errors {
            let copy = echo(error);
            assert_eq!(copy.status(), error.status());
            assert_eq!(copy.name(), error.name());
            assert_eq!(copy.to_string(), error.to_string());
            let (a, b) = (copy.body(), error.body());
            assert_eq!(
                (a.name, a.message, a.details),
                (b.name, b.message, b.details)
            );
        }
    }
}
