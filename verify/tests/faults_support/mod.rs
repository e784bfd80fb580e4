//! What the fault tests share: the server (`toggle-admin serve`) as a process, its admin API
//! over HTTP, and skipping a fault that this machine cannot stage (failing instead under
//! `CI=true`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

use crate::support::server_binary::serve_command;

/// The first admin key of every server the fault tests start.
pub const KEY: &str = "fault-suite-admin-key-0123456789abcdef-0123";

/// Skip a test whose fault this machine cannot stage: say why, and return. Under `CI=true`
/// the fault suite must run, so it fails instead.
pub fn cannot_stage(why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true: this fault test must run, but {why}"
    );
    println!("skipped: {why}");
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// The server, running, with its log (stderr) in a file.
pub struct Server {
    /// `None` for a handle on a server started elsewhere ([`Server::attach`]).
    child: Option<Child>,
    pub base: String,
    pub log: PathBuf,
}

impl Server {
    /// Start the server with `args` (its storage), on a free port, logging at `info` to
    /// `log`; returns once it listens.
    pub async fn start(args: &[&str], log: &Path) -> Server {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut command = serve_command();
        command
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .env("RUST_LOG", "info")
            .env("TOGGLE_ADMIN_BOOTSTRAP_KEY", KEY)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .kill_on_drop(true);
        for var in [
            "TOGGLE_ADMIN_DATA",
            "TOGGLE_ADMIN_MEMORY",
            "TOGGLE_ADMIN_ADDR",
            "DATABASE_URL",
            "DATABASE_SCHEMA",
            "DATABASE_CONNECT_TIMEOUT",
            "DATABASE_STATEMENT_TIMEOUT",
            "HTTP_HOST",
            "HTTP_PORT",
            "PORT",
        ] {
            command.env_remove(var);
        }
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    return addr.to_owned();
                }
            }
            panic!(
                "the server exited before listening; its log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        })
        .await
        .expect("the server did not start within 120 s");
        // Keep reading its stdout, so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server {
            child: Some(child),
            base,
            log: log.to_path_buf(),
        }
    }

    /// A handle on the server at `base` (started by someone else) logging to `log`.
    pub fn attach(base: String, log: PathBuf) -> Server {
        Server {
            child: None,
            base,
            log,
        }
    }

    /// Kill the server (SIGKILL: nothing is flushed at exit) and wait for it.
    pub async fn kill(mut self) {
        if let Some(child) = self.child.as_mut() {
            child.kill().await.unwrap();
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// An HTTP client that never waits longer than `limit` for an answer.
pub fn client(limit: Duration) -> reqwest::Client {
    reqwest::Client::builder().timeout(limit).build().unwrap()
}

/// One answer: its status, body, and how long it took.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub took: Duration,
}

/// `method path` with `body` (JSON) and the admin key.
pub async fn call(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> Answer {
    let started = Instant::now();
    let mut request = client.request(method, &url).header("Authorization", KEY);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{url}: no answer: {e}"));
    let status = response.status().as_u16();
    let bytes = response.bytes().await.unwrap_or_default();
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        took: started.elapsed(),
    }
}

/// Create feature `name` in the project `default`.
pub async fn create_feature(client: &reqwest::Client, server: &Server, name: &str) -> Answer {
    call(
        client,
        reqwest::Method::POST,
        server.url("/api/admin/projects/default/features"),
        Some(json!({ "name": name })),
    )
    .await
}

/// Whether feature `name` exists (200) or not (404); panics on anything else.
pub async fn feature_exists(client: &reqwest::Client, server: &Server, name: &str) -> bool {
    let answer = call(
        client,
        reqwest::Method::GET,
        server.url(&format!("/api/admin/projects/default/features/{name}")),
        None,
    )
    .await;
    match answer.status {
        200 => true,
        404 => false,
        other => panic!("reading feature {name}: {other} {}", answer.body),
    }
}

/// The address of `feature`'s variants in `development`.
pub fn variants_url(server: &Server, feature: &str) -> String {
    server.url(&format!(
        "/api/admin/projects/default/features/{feature}/environments/development/variants"
    ))
}

/// A variant list that names `n`: one variant called `v<n>` with a payload of `pad` bytes.
pub fn variants(n: u64, pad: usize) -> Value {
    json!([{
        "name": format!("v{n}"),
        "weight": 1000,
        "weightType": "variable",
        "stickiness": "default",
        "payload": {"type": "string", "value": "x".repeat(pad)},
    }])
}

/// `GET /ready`'s status.
pub async fn ready(client: &reqwest::Client, server: &Server) -> u16 {
    client
        .get(server.url("/ready"))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}
