//! A served store, the program's commands run as processes, and the admin API over HTTP.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use test_support::server_binary::server_binary;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The admin key every test server is bootstrapped with.
pub const KEY: &str = "flags-as-code-test-admin-key-0123456789abcdef";

/// `toggle-admin ARGS` with none of the variables the tests set by flag.
pub fn program(args: &[&str]) -> Command {
    let mut command = Command::new(server_binary());
    command
        .args(args)
        .env("RUST_LOG", "warn")
        .kill_on_drop(true);
    for var in [
        "TOGGLE_ADMIN_DATA",
        "TOGGLE_ADMIN_MEMORY",
        "TOGGLE_ADMIN_ADDR",
        "DATABASE_URL",
        "HTTP_HOST",
        "HTTP_PORT",
        "PORT",
        "IMPORT_FILE",
        "IMPORT_PROJECT",
        "IMPORT_ENVIRONMENT",
        "IMPORT_MODE",
        "TOGGLE_ADMIN_URL",
        "TOGGLE_ADMIN_KEY",
        "NO_COLOR",
    ] {
        command.env_remove(var);
    }
    command.env("TOGGLE_ADMIN_BOOTSTRAP_KEY", KEY);
    command
}

/// What a finished command left.
#[derive(Debug)]
pub struct Finished {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `toggle-admin ARGS` to its end.
pub async fn run(args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut command = program(args);
    command.envs(env.iter().copied());
    let output = tokio::time::timeout(Duration::from_secs(120), command.output())
        .await
        .expect("the command did not finish in time")
        .unwrap();
    Finished {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `toggle-admin serve` on a free loopback port over `store` (its flags), with `extra` flags.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Server {
    pub async fn start(store: &[&str], extra: &[&str]) -> Server {
        Self::start_with_env(store, extra, &[]).await
    }

    /// [`start`](Self::start) with the variables `env` set.
    pub async fn start_with_env(store: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = program(&["serve"]);
        command
            .envs(env.iter().copied())
            .args(store)
            .args(extra)
            .args(["--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = tokio::time::timeout(Duration::from_secs(120), async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("the server exited before listening");
                if let Some(addr) = line.strip_prefix("listening on ") {
                    break addr.to_owned();
                }
            }
        })
        .await
        .expect("the server did not start listening in time");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server { child, url }
    }

    /// SIGTERM, then a clean exit.
    pub async fn stop(mut self) {
        let pid = self.child.id().unwrap();
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the server did not stop after SIGTERM")
            .unwrap();
        assert!(exit.success(), "the server exited with {exit}");
    }

    /// `toggle-admin COMMAND ARGS --url URL --key KEY`.
    pub async fn command(&self, command: &str, args: &[&str]) -> Finished {
        let mut all = vec![command];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--url", self.url.as_str(), "--key", KEY]);
        run(&all, &[]).await
    }

    /// An admin API call: its status and JSON body (`null` when empty).
    pub async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let client = reqwest::Client::new();
        let mut request = client
            .request(method, format!("{}{path}", self.url))
            .header("Authorization", KEY);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let bytes = response.bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        (status, body)
    }

    /// How many events the log holds.
    pub async fn event_count(&self) -> u64 {
        let (status, body) = self
            .api(reqwest::Method::GET, "/api/admin/events", None)
            .await;
        assert_eq!(status, 200, "{body}");
        body["totalEvents"].as_u64().unwrap()
    }

    /// The feature `name` of the project `default`.
    pub async fn feature(&self, name: &str) -> Value {
        let (status, body) = self
            .api(
                reqwest::Method::GET,
                &format!("/api/admin/projects/default/features/{name}"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Whether `name` is enabled in `development`.
    pub async fn enabled_in_development(&self, name: &str) -> bool {
        let feature = self.feature(name).await;
        feature["environments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "development")
            .unwrap()["enabled"]
            .as_bool()
            .unwrap()
    }

    /// Turn `name` off in `development`, as a person would.
    pub async fn turn_off(&self, name: &str) {
        let (status, body) = self
            .api(
                reqwest::Method::POST,
                &format!(
                    "/api/admin/projects/default/features/{name}/environments/development/off"
                ),
                None,
            )
            .await;
        assert!(status < 300, "{status} {body}");
    }
}

/// An export document with one feature, `checkout`, enabled in its environment with a 25 %
/// rollout constrained twice.
pub fn document() -> Value {
    json!({
        "features": [
            {"name": "checkout", "type": "release", "project": "default", "description": null,
             "stale": false, "impressionData": false, "archived": false}
        ],
        "featureStrategies": [
            {"name": "flexibleRollout", "featureName": "checkout", "title": null,
             "parameters": {"groupId": "checkout", "rollout": "25", "stickiness": "default"},
             "constraints": [
                 {"contextName": "appName", "operator": "IN", "values": ["web"],
                  "inverted": false, "caseInsensitive": false},
                 {"contextName": "userId", "operator": "IN", "values": ["1", "2"],
                  "inverted": false, "caseInsensitive": false}
             ],
             "variants": [], "disabled": false, "segments": []}
        ],
        "featureEnvironments": [
            {"name": "checkout", "featureName": "checkout", "environment": "development",
             "enabled": true, "variants": []}
        ],
        "contextFields": [],
        "featureTags": [],
        "segments": [],
        "tagTypes": [],
        "dependencies": []
    })
}

/// Write `value` as JSON to `path`.
pub fn write(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// `path` as a `&str` argument.
pub fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}
