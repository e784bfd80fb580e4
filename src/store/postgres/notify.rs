//! Commit notifications between the instances sharing one schema: `NOTIFY` after each
//! commit, `LISTEN` on a dedicated connection ([`Store::changes`](crate::Store::changes)).
//!
//! * **Sending.** A commit records its revision in a watch; one task per store (started at
//!   the first commit) sends `pg_notify(channel, revision)` on a pooled connection for the
//!   latest revision whenever it changed. Commits that come faster than one notification's
//!   round trip are coalesced into one notification of the latest; a commit's caller never
//!   waits for it. A notification lost (the task's connection failing, the listener
//!   reconnecting) delays a change until the readers' catch-up poll, never loses it:
//!   readers re-read the store's revision and the documents, the notification only wakes
//!   them.
//! * **Listening.** The first call of `changes` opens one connection of its own (not from
//!   the pool), runs `LISTEN` and turns each notification into the latest revision of the
//!   receivers' watch. It reconnects after a failure (after 1 s, then up to 30 s apart) and
//!   then reads the store's revision, since notifications sent meanwhile are lost. It stops
//!   once the store and every receiver are gone. An idle listener sends no query.
//!
//! The channel is named after the schema (`toggle_admin_` and 16 hex digits of its SHA-256),
//! so stores in other schemas of the database do not wake each other.

use std::sync::{Arc, Mutex, Weak};

use std::time::Duration;

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
    pool: Pool,
    revision_sql: String,
    /// The latest revision this store committed; the sending task waits on it.
    committed: Mutex<Option<watch::Sender<Revision>>>,
    /// The latest revision learnt of; `None` until the listener starts.
    learnt: Mutex<Option<Arc<watch::Sender<Revision>>>>,
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
        Self {
            channel: format!("toggle_admin_{hex}"),
            config,
            tls,
            pool,
            revision_sql,
            committed: Mutex::new(None),
            learnt: Mutex::new(None),
        }
    }

    /// Tell the other instances that `revision` was committed (soon, without waiting).
    pub(super) fn committed(&self, revision: Revision) {
        let Ok(mut committed) = self.committed.lock() else {
            return;
        };
        if let Some(sender) = committed.as_ref() {
            sender.send_if_modified(|last| {
                let newer = revision > *last;
                if newer {
                    *last = revision;
                }
                newer
            });
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (sender, receiver) = watch::channel(revision);
        *committed = Some(sender);
        runtime.spawn(send_notifications(
            self.pool.clone(),
            self.channel.clone(),
            receiver,
        ));
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
        runtime.spawn(listen(
            self.config.clone(),
            self.tls.clone(),
            self.channel.clone(),
            self.revision_sql.clone(),
            Arc::downgrade(&sender),
        ));
        *learnt = Some(sender);
        Some(receiver)
    }
}

/// Send a notification of the latest committed revision whenever it changes; stops when
/// the store is dropped or its pool closed.
async fn send_notifications(pool: Pool, channel: String, mut committed: watch::Receiver<Revision>) {
    loop {
        let revision = *committed.borrow_and_update();
        let payload = revision.0.to_string();
        match pool.get().await {
            Ok(client) => {
                if let Err(error) = client
                    .execute("SELECT pg_notify($1, $2)", &[&channel, &payload])
                    .await
                {
                    tracing::debug!(%error, "PostgreSQL: a commit notification failed");
                }
            }
            Err(deadpool_postgres::PoolError::Closed) => return,
            Err(error) => tracing::debug!(%error, "PostgreSQL: no connection to notify on"),
        }
        if committed.changed().await.is_err() {
            return;
        }
    }
}

/// Run `LISTEN` on a connection of its own and pass each notification's revision on;
/// reconnect after failures; stop once nobody holds `learnt` any more.
async fn listen(
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    channel: String,
    revision_sql: String,
    learnt: Weak<watch::Sender<Revision>>,
) {
    let mut backoff = Duration::from_secs(1);
    loop {
        if learnt.strong_count() == 0 {
            return;
        }
        let started = tokio::time::Instant::now();
        match listen_once(&config, &tls, &channel, &revision_sql, &learnt).await {
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
    config: &tokio_postgres::Config,
    tls: &MakeRustlsConnect,
    channel: &str,
    revision_sql: &str,
    learnt: &Weak<watch::Sender<Revision>>,
) -> Result<(), String> {
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
        let row = client.query_one(revision_sql, &[]).await?;
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
                    let revision = payload.trim().parse::<u64>().unwrap_or(0);
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
