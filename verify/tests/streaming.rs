//! `GET /api/client/streaming` over real sockets: the connected hydration, updates as they
//! commit, `id:` and resume with `Last-Event-ID`, keep-alive comments, the stream limits,
//! a revoked key's streams ending, shutdown ending every stream; and two instances over one
//! PostgreSQL schema (a commit on A reaches a stream and the delta API on B).

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use toggle_admin::admin::PushConfig;
use toggle_admin::http::RouterConfig;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::{Caller, KeyAccess, MemoryStore, ToggleAdmin};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// How long a test waits for something that should come at once before failing (a guard
/// against hanging, not a measurement).
const PATIENCE: Duration = Duration::from_secs(10);

struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn start(admin: ToggleAdmin) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let config = RouterConfig::new().shutdown_deadline(Duration::from_secs(120));
        let served = tokio::spawn(config.serve(admin, listener, async move {
            let _ = stopped.await;
        }));
        Running {
            addr,
            stop: Some(stop),
            served,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// An admin with environment `production`, projects `p` and `other` and features `f` (in
/// `p`) and `g` (in `other`); its admin caller.
async fn populated(admin: &ToggleAdmin) -> Caller {
    let key = admin.bootstrap_admin_key("test-admin").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    admin
        .create_environment(
            &caller,
            &Environment {
                name: "production".into(),
                environment_type: "production".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for (project, feature) in [("p", "f"), ("other", "g")] {
        admin
            .create_project(
                &caller,
                &Project {
                    id: project.into(),
                    name: project.into(),
                    environments: vec!["production".into()],
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        admin
            .create_feature(
                &caller,
                project,
                &NewFeature {
                    name: feature.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    caller
}

async fn client_key(admin: &ToggleAdmin, caller: &Caller, projects: &[&str]) -> String {
    admin
        .create_api_key(
            caller,
            "sdk",
            KeyAccess::client(
                projects.iter().map(|p| (*p).to_owned()).collect(),
                "production",
            ),
        )
        .await
        .unwrap()
        .secret
}

/// One server-sent event (or comment) as read.
#[derive(Debug, Default)]
struct SseEvent {
    event: String,
    id: Option<u64>,
    data: String,
    comment: bool,
}

impl SseEvent {
    fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {}", self.data))
    }

    fn types(&self) -> Vec<String> {
        self.json()["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A stream being read.
struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    async fn open(
        url: &str,
        key: &str,
        last_event_id: Option<&str>,
    ) -> Result<Sse, reqwest::Response> {
        let mut request = reqwest::Client::new()
            .get(url)
            .header("authorization", key)
            .header("accept-encoding", "gzip");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.unwrap();
        if response.status() != 200 {
            return Err(response);
        }
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        assert!(response.headers().get("content-encoding").is_none());
        Ok(Sse {
            response,
            buffer: String::new(),
        })
    }

    /// The next event or comment; `None` when the stream ended.
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent::default();
                for line in block.lines() {
                    if let Some(rest) = line.strip_prefix(':') {
                        let _ = rest;
                        event.comment = true;
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event.event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        event.id = Some(v.parse().unwrap());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        event.data.push_str(v);
                    }
                }
                return Some(event);
            }
            let chunk = tokio::time::timeout(PATIENCE, self.response.chunk())
                .await
                .expect("the stream stalled")
                .ok()??;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next event, skipping keep-alive comments.
    async fn event(&mut self) -> SseEvent {
        loop {
            let event = self.next().await.expect("the stream ended");
            if !event.comment {
                return event;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_hydrates_then_gets_each_change_it_can_see() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let caller = populated(&admin).await;
    let key = client_key(&admin, &caller, &["p"]).await;
    let server = Running::start(admin.clone()).await;
    let mut sse = Sse::open(&server.url("/api/client/streaming"), &key, None)
        .await
        .unwrap();
    let connected = sse.event().await;
    assert_eq!(connected.event, "unleash-connected");
    assert_eq!(connected.types(), ["hydration"]);
    let hydration = &connected.json()["events"][0];
    assert_eq!(connected.id, hydration["eventId"].as_u64());
    assert_eq!(hydration["features"][0]["name"], "f");
    assert_eq!(hydration["features"].as_array().unwrap().len(), 1);

    // A change in project `other` is not for this key; the next event is `f`'s.
    admin
        .set_feature_enabled(&caller, "other", "g", "production", true)
        .await
        .unwrap();
    admin
        .set_feature_enabled(&caller, "p", "f", "production", true)
        .await
        .unwrap();
    let updated = sse.event().await;
    assert_eq!(updated.event, "unleash-updated");
    assert_eq!(updated.types(), ["feature-updated"]);
    let event = &updated.json()["events"][0];
    assert_eq!(event["feature"]["name"], "f");
    assert_eq!(event["feature"]["enabled"], true);
    assert_eq!(updated.id, event["eventId"].as_u64());
    assert!(updated.id > connected.id);
    assert_eq!(admin.open_streams(), 1);
    drop(sse);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_resumes_from_last_event_id_or_hydrates() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let caller = populated(&admin).await;
    let key = client_key(&admin, &caller, &["p"]).await;
    let server = Running::start(admin.clone()).await;
    let url = server.url("/api/client/streaming");
    let mut sse = Sse::open(&url, &key, None).await.unwrap();
    let id = sse.event().await.id.unwrap().to_string();
    drop(sse);
    admin
        .set_feature_enabled(&caller, "p", "f", "production", true)
        .await
        .unwrap();
    let mut sse = Sse::open(&url, &key, Some(&id)).await.unwrap();
    let resumed = sse.event().await;
    assert_eq!(resumed.event, "unleash-connected");
    assert_eq!(resumed.types(), ["feature-updated"]);
    for bad in ["", "abc", "-3", "999999999"] {
        let mut sse = Sse::open(&url, &key, Some(bad)).await.unwrap();
        assert_eq!(sse.event().await.types(), ["hydration"], "{bad:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_streams_get_keep_alive_comments() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    admin.set_push_config(PushConfig {
        keep_alive: Duration::from_millis(50),
        ..PushConfig::default()
    });
    let caller = populated(&admin).await;
    let key = client_key(&admin, &caller, &["p"]).await;
    let server = Running::start(admin.clone()).await;
    let mut sse = Sse::open(&server.url("/api/client/streaming"), &key, None)
        .await
        .unwrap();
    sse.event().await;
    let comment = sse.next().await.unwrap();
    assert!(comment.comment, "{comment:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_over_the_limits_get_429() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    admin.set_push_config(PushConfig {
        max_streams: 2,
        max_streams_per_key: 1,
        // A closed connection is noticed at the next write.
        keep_alive: Duration::from_millis(50),
        ..PushConfig::default()
    });
    let caller = populated(&admin).await;
    let one = client_key(&admin, &caller, &["p"]).await;
    let two = client_key(&admin, &caller, &["p"]).await;
    let three = client_key(&admin, &caller, &["p"]).await;
    let server = Running::start(admin.clone()).await;
    let url = server.url("/api/client/streaming");
    let mut first = Sse::open(&url, &one, None).await.unwrap();
    first.event().await;
    let refused = Sse::open(&url, &one, None).await.err().unwrap();
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["name"], "TooManyRequests");
    let mut second = Sse::open(&url, &two, None).await.unwrap();
    second.event().await;
    let refused = Sse::open(&url, &three, None).await.err().unwrap();
    assert_eq!(refused.status(), 429);
    // A closed stream frees its place.
    drop(first);
    let mut again = None;
    for _ in 0..100 {
        if let Ok(sse) = Sse::open(&url, &three, None).await {
            again = Some(sse);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    again.expect("a place freed").event().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_revoked_keys_streams_end_and_the_admin_api_answers_meanwhile() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let caller = populated(&admin).await;
    let key = admin
        .create_api_key(
            &caller,
            "sdk",
            KeyAccess::client(vec!["p".into()], "production"),
        )
        .await
        .unwrap();
    let other = client_key(&admin, &caller, &["p"]).await;
    let server = Running::start(admin.clone()).await;
    let url = server.url("/api/client/streaming");
    let mut revoked = Sse::open(&url, &key.secret, None).await.unwrap();
    let mut kept = Sse::open(&url, &other, None).await.unwrap();
    revoked.event().await;
    kept.event().await;
    admin.revoke_api_key(&caller, key.info.id).await.unwrap();
    loop {
        match revoked.next().await {
            None => break,
            Some(event) => assert!(event.comment, "{event:?}"),
        }
    }
    // The other key's stream goes on.
    admin
        .set_feature_enabled(&caller, "p", "f", "production", true)
        .await
        .unwrap();
    assert_eq!(kept.event().await.types(), ["feature-updated"]);
    let refused = Sse::open(&url, &key.secret, None).await.err().unwrap();
    assert_eq!(refused.status(), 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_ends_every_stream() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let caller = populated(&admin).await;
    let key = client_key(&admin, &caller, &["p"]).await;
    let mut server = Running::start(admin.clone()).await;
    let url = server.url("/api/client/streaming");
    let mut streams = Vec::new();
    for _ in 0..3 {
        let mut sse = Sse::open(&url, &key, None).await.unwrap();
        sse.event().await;
        streams.push(sse);
    }
    drop(server.stop.take());
    for sse in &mut streams {
        while let Some(event) = sse.next().await {
            assert!(event.comment, "{event:?}");
        }
    }
    // `serve` returns without waiting for its (long) shutdown deadline.
    tokio::time::timeout(PATIENCE, &mut server.served)
        .await
        .expect("serve returned")
        .unwrap()
        .unwrap();
    assert_eq!(admin.open_streams(), 0);
}

#[cfg(feature = "postgres")]
use test_support::postgres as pg;

/// Two instances over one schema: a commit through A reaches B's stream by notification
/// (B's catch-up poll is set far beyond the test's patience), and B's delta API.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn a_commit_on_one_instance_reaches_streams_and_deltas_on_another() {
    let Some(url) = pg::database_url() else {
        return;
    };
    let schema = pg::TestSchema::new(&url);
    let a = ToggleAdmin::new(schema.connect(4).await);
    let b = ToggleAdmin::new(schema.connect(4).await);
    b.set_push_config(PushConfig {
        catch_up: Duration::from_secs(3600),
        ..PushConfig::default()
    });
    let caller = populated(&a).await;
    let key = client_key(&a, &caller, &["p"]).await;
    let server = Running::start(b.clone()).await;
    let mut sse = Sse::open(&server.url("/api/client/streaming"), &key, None)
        .await
        .unwrap();
    let connected = sse.event().await;
    assert_eq!(connected.types(), ["hydration"]);
    let delta = reqwest::Client::new()
        .get(server.url("/api/client/delta"))
        .header("authorization", &key)
        .send()
        .await
        .unwrap();
    let etag = delta.headers()["etag"].to_str().unwrap().to_owned();
    for enabled in [true, false, true] {
        a.set_feature_enabled(&caller, "p", "f", "production", enabled)
            .await
            .unwrap();
        let updated = sse.event().await;
        assert_eq!(updated.types(), ["feature-updated"]);
        assert_eq!(updated.json()["events"][0]["feature"]["enabled"], enabled);
    }
    let delta = reqwest::Client::new()
        .get(server.url("/api/client/delta"))
        .header("authorization", &key)
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(delta.status(), 200);
    let body: Value = delta.json().await.unwrap();
    assert_eq!(body["events"][0]["feature"]["enabled"], json!(true));
}
