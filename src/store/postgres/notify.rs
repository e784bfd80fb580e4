//! Commit notifications between the instances sharing one schema: `NOTIFY` with or after
//! commits, `LISTEN` on a dedicated connection ([`Store::changes`](crate::Store::changes)).
//!
//! * **Sending.** At most one notification every 2 ms (`NOTIFY_SPACING`), naming the latest
//!   revision committed: a commit made when none went out for that long carries it in its
//!   own transaction ([`Notifier::carry`]: no transaction of its own, out the moment the
//!   commit is visible). The commits in between are announced by the next commit that
//!   carries one, or, when no commit comes, by a task of the store (started at the first
//!   commit) on a pooled connection, at most `TRAILING` after the last notification. A
//!   commit's caller never waits for it. A notification lost (the task's connection
//!   failing, the listener reconnecting) delays a change until the readers' catch-up poll,
//!   never loses it: readers re-read the store's revision and the documents, the
//!   notification only wakes them.
//! * **Listening.** The first call of `changes` opens one connection
//!   of its own (not from the pool), runs `LISTEN` and turns each notification into the
//!   latest revision of the receivers' watch. A notification also names the instance that
//!   sent it (`revision instance`), for whoever reads them. It reconnects after a failure
//!   (after 1 s, then up to 30 s apart) and then reads the store's revision, since
//!   notifications sent meanwhile are lost. It stops once the store and every receiver are
//!   gone. An idle listener sends no query.
//!
//! What an instance knows for its decisions (`known.rs`) does not hang on notifications:
//! a record another instance changed makes the next commit that expects it conflict, and
//! the conflict teaches the record as it is now. Forgetting everything at each of another
//! instance's notifications instead had every instance read every record again after every
//! commit of the others, changed or not: two instances writing different features on one
//! schema answered about half of what they did without it (BENCHMARKS.md, "PostgreSQL").
//!
//! The channel is named after the schema (`toggle_admin_` and 16 hex digits of its SHA-256),
//! so stores in other schemas of the database do not wake each other.

use std::sync::{Arc, Mutex, Weak};

use std::time::{Duration, Instant};

use deadpool_postgres::Pool;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio_postgres::AsyncMessage;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::Revision;

/// The notification side of a [`PostgresStore`](super::PostgresStore).
pub(super) struct Notifier {
    channel: String,
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    revision_sql: String,
    /// What was committed and what announced, shared with the sending task.
    sending: Arc<Sending>,
    /// The latest revision learnt of; `None` until the listener starts.
    learnt: Mutex<Option<Arc<watch::Sender<Revision>>>>,
}

/// The sending side of a store's notifications: its commits may carry one themselves
/// ([`Notifier::carry`]); a task sends the others.
struct Sending {
    pool: Pool,
    channel: String,
    instance: String,
    state: Mutex<Announced>,
    /// Wakes the sending task: a commit left unannounced, or the store gone.
    wake: Arc<tokio::sync::Notify>,
}

/// What a store committed, and what its notifications named.
#[derive(Default)]
struct Announced {
    /// The latest revision this store committed.
    committed: Revision,
    /// The latest revision a notification named, sent by the task or carried by a commit.
    announced: Revision,
    /// When the last notification was sent, or handed to a commit to carry.
    last: Option<Instant>,
    /// Whether the sending task runs.
    task: bool,
}

impl Drop for Sending {
    fn drop(&mut self) {
        // The task then finds the store gone and stops.
        self.wake.notify_one();
    }
}

/// A notification a commit carries: `pg_notify(channel, revision || ' ' || instance)` in
/// the commit's own transaction, so it costs no transaction (and no WAL flush) of its own
/// and goes out the moment the commit is visible.
pub(super) struct Carry<'a> {
    pub channel: &'a str,
    pub instance: &'a str,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl Notifier {
    pub(super) fn new(
        schema: &str,
        config: tokio_postgres::Config,
        tls: MakeRustlsConnect,
        pool: Pool,
        revision_sql: String,
    ) -> Self {
        let digest = Sha256::digest(schema.as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let channel = format!("toggle_admin_{hex}");
        // Named in the notifications, for whoever reads them.
        let instance = uuid::Uuid::new_v4().simple().to_string();
        Self {
            sending: Arc::new(Sending {
                pool,
                channel: channel.clone(),
                instance,
                state: Mutex::new(Announced::default()),
                wake: Arc::new(tokio::sync::Notify::new()),
            }),
            channel,
            config,
            tls,
            revision_sql,
            learnt: Mutex::new(None),
        }
    }

    /// The notification the next commit should carry, if one is due: none went out in the
    /// last [`NOTIFY_SPACING`]. The caller then reports whether it carried one in
    /// [`committed`](Self::committed).
    pub(super) fn carry(&self) -> Option<Carry<'_>> {
        let mut state = self.sending.state.lock().ok()?;
        if state
            .last
            .is_some_and(|last| last.elapsed() < NOTIFY_SPACING)
        {
            return None;
        }
        state.last = Some(Instant::now());
        Some(Carry {
            channel: &self.sending.channel,
            instance: &self.sending.instance,
        })
    }

    /// `revision` was committed, carrying its notification (`carried`) or not: one not
    /// carried goes out with the next commit that carries one, or from the sending task,
    /// at most [`TRAILING`] after the last notification.
    pub(super) fn committed(&self, revision: Revision, carried: bool) {
        let Ok(mut state) = self.sending.state.lock() else {
            return;
        };
        state.committed = state.committed.max(revision);
        if carried {
            state.announced = state.announced.max(revision);
        }
        if state.committed <= state.announced {
            return;
        }
        if !state.task {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            state.task = true;
            runtime.spawn(send_notifications(
                Arc::downgrade(&self.sending),
                Arc::clone(&self.sending.wake),
            ));
        }
        self.sending.wake.notify_one();
    }

    /// A receiver of the latest revision learnt from the other instances (and this one),
    /// starting the listener on the first call.
    pub(super) fn changes(&self) -> Option<watch::Receiver<Revision>> {
        let mut learnt = self.learnt.lock().ok()?;
        if let Some(sender) = learnt.as_ref() {
            return Some(sender.subscribe());
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let sender = Arc::new(watch::Sender::new(Revision::ABSENT));
        let receiver = sender.subscribe();
        let listener = Listener {
            config: self.config.clone(),
            tls: self.tls.clone(),
            channel: self.channel.clone(),
            revision_sql: self.revision_sql.clone(),
        };
        runtime.spawn(listen(listener, Arc::downgrade(&sender)));
        *learnt = Some(sender);
        Some(receiver)
    }
}

/// The least time between two notifications of one store. A commit after a quiet spell is
/// announced at once; the commits of a busy spell are announced together. Each
/// notification wakes every listening instance: one per commit would cost them a wake-up
/// per commit.
const NOTIFY_SPACING: Duration = Duration::from_millis(2);

/// How long after the last notification the task announces commits left unannounced. Longer
/// than [`NOTIFY_SPACING`], so that under a steady flow of commits the next one carries the
/// notification (in its own transaction) before the task would send one in a transaction
/// of its own; the last commits of a burst wait at most this long.
const TRAILING: Duration = Duration::from_millis(4);

/// Send a notification of the latest committed revision whenever one went unannounced for
/// [`TRAILING`]; stops when the store is dropped or its pool closed.
async fn send_notifications(sending: Weak<Sending>, wake: Arc<tokio::sync::Notify>) {
    loop {
        wake.notified().await;
        loop {
            let Some(sending) = sending.upgrade() else {
                return;
            };
            let due = {
                let Ok(mut state) = sending.state.lock() else {
                    return;
                };
                let wait = state.last.map_or(Duration::ZERO, |last| {
                    TRAILING.saturating_sub(last.elapsed())
                });
                if state.committed <= state.announced {
                    break;
                }
                if wait.is_zero() {
                    state.announced = state.committed;
                    state.last = Some(Instant::now());
                    Ok(state.committed)
                } else {
                    Err(wait)
                }
            };
            let revision = match due {
                Ok(revision) => revision,
                Err(wait) => {
                    // Commits during the pause go out together after it, unless one of them
                    // carries a notification meanwhile.
                    drop(sending);
                    tokio::time::sleep(wait).await;
                    continue;
                }
            };
            let payload = format!("{} {}", revision.0, sending.instance);
            match sending.pool.get().await {
                Ok(client) => {
                    if let Err(error) = client
                        .execute("SELECT pg_notify($1, $2)", &[&sending.channel, &payload])
                        .await
                    {
                        tracing::debug!(%error, "PostgreSQL: a commit notification failed");
                    }
                }
                Err(deadpool_postgres::PoolError::Closed) => return,
                Err(error) => tracing::debug!(%error, "PostgreSQL: no connection to notify on"),
            }
        }
    }
}

/// Run `LISTEN` on a connection of its own and pass each notification's revision on;
/// reconnect after failures; stop once nobody holds `learnt` any more.
/// What the listening task needs of its store.
struct Listener {
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    channel: String,
    revision_sql: String,
}

async fn listen(listener: Listener, learnt: Weak<watch::Sender<Revision>>) {
    let mut backoff = Duration::from_secs(1);
    loop {
        if learnt.strong_count() == 0 {
            return;
        }
        let started = tokio::time::Instant::now();
        match listen_once(&listener, &learnt).await {
            Ok(()) => return,
            Err(error) => {
                tracing::warn!(%error, ?backoff, "PostgreSQL: the commit listener failed; reconnecting");
            }
        }
        if started.elapsed() > Duration::from_secs(60) {
            backoff = Duration::from_secs(1);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
}

/// One listening connection, until it fails (`Err`) or nobody listens any more (`Ok`).
async fn listen_once(
    listener: &Listener,
    learnt: &Weak<watch::Sender<Revision>>,
) -> Result<(), String> {
    let Listener {
        config,
        tls,
        channel,
        revision_sql,
        ..
    } = listener;
    let (client, mut connection) = config
        .connect(tls.clone())
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let (messages_tx, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if messages_tx.send(Ok(n.payload().to_owned())).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(error) => {
                    let _ = messages_tx.send(Err(error));
                    return;
                }
            }
        }
    });
    let quoted = channel.replace('"', "\"\"");
    let setup = async {
        client
            .batch_execute(&format!("LISTEN \"{quoted}\""))
            .await?;
        // Notifications sent before LISTEN took effect are lost: read where the store is.
        let row = client.query_one(revision_sql.as_str(), &[]).await?;
        let revision: i64 = row.try_get(0)?;
        Ok::<_, tokio_postgres::Error>(revision)
    };
    let revision = match setup.await {
        Ok(revision) => revision,
        Err(error) => {
            driver.abort();
            return Err(format!("LISTEN: {error}"));
        }
    };
    if !learn(learnt, Revision(u64::try_from(revision).unwrap_or(0))) {
        driver.abort();
        return Ok(());
    }
    let mut check = tokio::time::interval(Duration::from_secs(30));
    let outcome = loop {
        tokio::select! {
            message = messages.recv() => match message {
                Some(Ok(payload)) => {
                    // `revision instance`; an instance of an earlier version sends the
                    // revision alone.
                    let revision = payload
                        .split_whitespace()
                        .next()
                        .and_then(|r| r.parse::<u64>().ok())
                        .unwrap_or(0);
                    if !learn(learnt, Revision(revision)) {
                        break Ok(());
                    }
                }
                Some(Err(error)) => break Err(format!("the connection failed: {error}")),
                None => break Err("the connection closed".to_owned()),
            },
            _ = check.tick() => {
                if !learn(learnt, Revision::ABSENT) {
                    break Ok(());
                }
            }
        }
    };
    driver.abort();
    drop(client);
    outcome
}

/// Pass `revision` on (if newer); false when nobody holds the sender any more.
fn learn(learnt: &Weak<watch::Sender<Revision>>, revision: Revision) -> bool {
    let Some(sender) = learnt.upgrade() else {
        return false;
    };
    sender.send_if_modified(|last| {
        let newer = revision > *last;
        if newer {
            *last = revision;
        }
        newer
    });
    true
}
