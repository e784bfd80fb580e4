//! The real server (`toggle-admin serve`, package `toggle-admin-server`) as a process on an
//! ephemeral loopback port, driven by a real HTTP client.

use std::process::Stdio;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use test_support::http::assert_error_body;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;

use test_support::server_binary::serve_command;

/// A running server process.
struct Server {
    child: Child,
    base: String,
    /// The admin key the server printed, when it generated one.
    printed_key: Option<String>,
}

impl Server {
    async fn start(args: &[&str], bootstrap_key: Option<&str>) -> Server {
        let mut command = serve_command();
        command
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .env_remove("TOGGLE_ADMIN_BOOTSTRAP_KEY")
            .env_remove("TOGGLE_ADMIN_DATA")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        if let Some(key) = bootstrap_key {
            command.env("TOGGLE_ADMIN_BOOTSTRAP_KEY", key);
        }
        let mut child = command.spawn().expect("start the server");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut printed_key = None;
        let base = tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("the server exited before listening");
                if let Some(key) = line.strip_prefix("admin API key (shown once, keep it): ") {
                    printed_key = Some(key.to_owned());
                }
                if let Some(addr) = line.strip_prefix("listening on ") {
                    break addr.to_owned();
                }
            }
        })
        .await
        .expect("the server did not start listening in time");
        // Keep draining stdout so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server {
            child,
            base,
            printed_key,
        }
    }

    /// SIGTERM, then wait for a clean exit.
    async fn stop(mut self) {
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
}

/// A client for one server and key: plain HTTP/1.1 over a TCP connection per request
/// (`Connection: close`), which is all a loopback test needs.
struct Api {
    base: String,
    key: String,
}

impl Api {
    fn new(server: &Server, key: &str) -> Api {
        Api {
            base: server.base.clone(),
            key: key.to_owned(),
        }
    }

    async fn send(&self, method: Method, path: &str, body: Option<&Value>) -> (StatusCode, String) {
        let authority = self.base.trim_start_matches("http://");
        let body = body
            .map(|b| serde_json::to_vec(b).unwrap())
            .unwrap_or_default();
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.key,
            body.len()
        );
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        request.push_str("\r\n");
        let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        stream.write_all(&body).await.unwrap();
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.unwrap();
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete response head");
        let head = String::from_utf8(response[..split].to_vec()).unwrap();
        let mut payload = response[split + 4..].to_vec();
        let status_line = head.lines().next().unwrap();
        let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            payload = dechunk(&payload);
        }
        (
            StatusCode::from_u16(status).unwrap(),
            String::from_utf8(payload).unwrap(),
        )
    }

    /// A request that must succeed with `status`; its body as JSON (`Null` when empty).
    async fn ok(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        status: StatusCode,
    ) -> Value {
        let (got, text) = self.send(method.clone(), path, body).await;
        assert_eq!(got, status, "{method} {path}: {text}");
        if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap()
        }
    }
}

/// A chunked HTTP/1.1 body, decoded.
fn dechunk(mut chunked: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = chunked.windows(2).position(|w| w == b"\r\n").unwrap();
        let size_text = std::str::from_utf8(&chunked[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        chunked = &chunked[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunked[..size]);
        chunked = &chunked[size + 2..];
    }
}

const KEY: &str = "test-bootstrap-key-0123456789-abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn a_client_sets_up_and_reads_back_everything_over_http() {
    let server = Server::start(&["--memory"], Some(KEY)).await;
    assert!(
        server.printed_key.is_none(),
        "a chosen key is never printed"
    );
    let api = Api::new(&server, KEY);

    // The stock set-up of an empty store.
    let project = api
        .ok(
            Method::GET,
            "/api/admin/projects/default",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        project["environments"],
        json!([{"environment": "development"}, {"environment": "production"}])
    );

    // Create a feature, patch its variants, read them back.
    api.ok(
        Method::POST,
        "/api/admin/projects/default/features",
        Some(&json!({"name": "checkout", "type": "experiment"})),
        StatusCode::CREATED,
    )
    .await;
    let variants = "/api/admin/projects/default/features/checkout/environments/production/variants";
    let (status, text) = api
        .send(
            Method::PATCH,
            variants,
            Some(&json!([
                {"op": "add", "path": "/-", "value": {"name": "blue", "weight": 0}},
                {"op": "add", "path": "/-", "value": {"name": "green", "weight": 200, "weightType": "fix"}}
            ])),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        text,
        r#"{"version":1,"variants":[{"name":"blue","weight":800,"weightType":"variable","stickiness":"default"},{"name":"green","weight":200,"weightType":"fix","stickiness":"default"}]}"#
    );
    let read = api.ok(Method::GET, variants, None, StatusCode::OK).await;
    assert_eq!(read, serde_json::from_str::<Value>(&text).unwrap());
    let feature = api
        .ok(
            Method::GET,
            "/api/admin/projects/default/features/checkout",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(feature["environments"][1]["variantCount"], 2);

    // Import an Unleash export over HTTP (200, no body), export it back, read it.
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../tests/fixtures/unleash-6.10.1/export-two-features.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let (status, text) = api
        .send(
            Method::POST,
            "/api/admin/features-batch/import",
            Some(&json!({"project": "default", "environment": "development", "data": fixture})),
        )
        .await;
    assert_eq!((status, text.as_str()), (StatusCode::OK, ""));
    let exported = api
        .ok(
            Method::POST,
            "/api/admin/features-batch/export",
            Some(&json!({"project": "default", "environment": "development", "features": ["ex-a", "ex-b"]})),
            StatusCode::OK,
        )
        .await;
    let names: Vec<&str> = exported["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(names, ["ex-a", "ex-b"]);
    assert_eq!(exported["featureTags"], fixture["featureTags"]);
    let imported = api
        .ok(
            Method::GET,
            "/api/admin/projects/default/features/ex-a",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(imported["name"], "ex-a");

    // Register an application, delete it (200, no body, twice), read it back gone.
    let app = "/api/admin/metrics/applications/billing";
    api.ok(
        Method::POST,
        app,
        Some(&json!({"description": "Billing", "instances": [{"instanceId": "i-1"}]})),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(
        api.ok(Method::GET, app, None, StatusCode::OK).await["description"],
        "Billing"
    );
    for _ in 0..2 {
        let (status, text) = api.send(Method::DELETE, app, None).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, ""));
    }
    let (status, _) = api.send(Method::GET, app, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Users and a group, the project's access set to them, read back, and in effect.
    let user = api
        .ok(
            Method::POST,
            "/api/admin/user-admin",
            Some(&json!({"username": "alice", "rootRole": 3})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let token = api
        .ok(
            Method::POST,
            &format!("/api/admin/user-admin/{user}/tokens"),
            Some(&json!({"description": "alice's key"})),
            StatusCode::CREATED,
        )
        .await;
    let alice = Api::new(&server, token["secret"].as_str().unwrap());
    let group = api
        .ok(
            Method::POST,
            "/api/admin/groups",
            Some(&json!({"name": "devs", "users": [{"user": {"id": user}}]})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_i64()
        .unwrap();
    let one_more = json!([{"op": "add", "path": "/-", "value": {"name": "red", "weight": 0}}]);
    let (status, _) = alice.send(Method::PATCH, variants, Some(&one_more)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let access = json!({"roles": [{"id": 4, "users": [user]}, {"id": 5, "groups": [group]}]});
    let (status, text) = api
        .send(
            Method::PUT,
            "/api/admin/projects/default/access",
            Some(&access),
        )
        .await;
    assert_eq!((status, text.as_str()), (StatusCode::OK, ""));
    let read = api
        .ok(
            Method::GET,
            "/api/admin/projects/default/access",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        read,
        json!({"roles": [
            {"id": 4, "users": [user], "groups": []},
            {"id": 5, "users": [], "groups": [group]}
        ]})
    );
    let (status, text) = alice.send(Method::PATCH, variants, Some(&one_more)).await;
    assert_eq!(status, StatusCode::OK, "{text}");

    // The event log, newest first.
    let events = api
        .ok(
            Method::GET,
            "/api/admin/events?feature=checkout",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        events["events"][0]["type"],
        "feature-environment-variants-updated"
    );

    // Errors over the wire: the error body with a UUID id.
    let anonymous = Api {
        key: "wrong".into(),
        ..Api::new(&server, KEY)
    };
    let (status, text) = anonymous
        .send(Method::PATCH, variants, Some(&json!([])))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_error_body(
        &serde_json::from_str(&text).unwrap(),
        "AuthenticationRequired",
    );
    let (status, text) = api.send(Method::GET, "/api/admin/nowhere", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error_body(&serde_json::from_str(&text).unwrap(), "NotFoundError");

    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_generated_admin_key_is_printed_once_and_works() {
    let server = Server::start(&["--memory"], None).await;
    let key = server
        .printed_key
        .clone()
        .expect("the server prints the key it made");
    let api = Api::new(&server, &key);
    let environments = api
        .ok(Method::GET, "/api/admin/environments", None, StatusCode::OK)
        .await;
    let names: Vec<&str> = environments["environments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(names, ["development", "production"]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_argument_fails_with_a_message() {
    let output = serve_command()
        .args(["--memory", "--frobnicate"])
        .output()
        .await
        .unwrap();
    // 1, not clap's 2: a usage error is a failure like any other.
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--frobnicate"));
}

/// Set up state over HTTP, stop the server, start it again with the same `args`: the state,
/// the key and the event log are all still there, and nothing was bootstrapped twice.
async fn restart_serves_the_same_state(args: &[&str]) {
    let server = Server::start(args, Some(KEY)).await;
    let api = Api::new(&server, KEY);
    api.ok(
        Method::POST,
        "/api/admin/projects/default/features",
        Some(&json!({"name": "durable", "description": "kept"})),
        StatusCode::CREATED,
    )
    .await;
    let variants = "/api/admin/projects/default/features/durable/environments/development/variants";
    let patched = api
        .ok(
            Method::PATCH,
            variants,
            Some(&json!([{"op": "add", "path": "/-", "value": {"name": "a", "weight": 0}}])),
            StatusCode::OK,
        )
        .await;
    let token = api
        .ok(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "second", "type": "admin"})),
            StatusCode::CREATED,
        )
        .await;
    let events_before = api
        .ok(Method::GET, "/api/admin/events", None, StatusCode::OK)
        .await;
    server.stop().await;

    // Even with another bootstrap key in the environment, the existing keys stay the keys.
    let server = Server::start(args, Some("another-bootstrap-key-987654321-xyz")).await;
    assert!(server.printed_key.is_none());
    let api = Api::new(&server, KEY);
    let feature = api
        .ok(
            Method::GET,
            "/api/admin/projects/default/features/durable",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(feature["description"], "kept");
    assert_eq!(
        api.ok(Method::GET, variants, None, StatusCode::OK).await,
        patched
    );
    let second = Api::new(&server, token["secret"].as_str().unwrap());
    second
        .ok(
            Method::GET,
            "/api/admin/projects/default",
            None,
            StatusCode::OK,
        )
        .await;
    let other = Api::new(&server, "another-bootstrap-key-987654321-xyz");
    let (status, _) = other
        .send(Method::GET, "/api/admin/projects/default", None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let events_after = api
        .ok(Method::GET, "/api/admin/events", None, StatusCode::OK)
        .await;
    assert_eq!(events_after, events_before);
    server.stop().await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn restarted_on_the_same_postgres_schema_serves_the_same_state() {
    let url = match std::env::var("TOGGLE_ADMIN_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "TOGGLE_ADMIN_TEST_POSTGRES must be set when CI=true"
            );
            println!("skipped: TOGGLE_ADMIN_TEST_POSTGRES not set");
            return;
        }
    };
    let schema = format!(
        "ta_http_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let result = tokio::spawn({
        let (url, schema) = (url.clone(), schema.clone());
        async move {
            restart_serves_the_same_state(&["--postgres", &url, "--postgres-schema", &schema]).await
        }
    })
    .await;
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"))
        .await
        .unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn restarted_on_the_same_data_directory_serves_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    restart_serves_the_same_state(&["--data", path.to_str().unwrap()]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_server_on_the_same_data_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let args = ["--data", path.to_str().unwrap()];
    let first = Server::start(&args, Some(KEY)).await;
    let output = serve_command()
        .args(args)
        .args(["--addr", "127.0.0.1:0"])
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("locked"), "{stderr}");
    first.stop().await;
}
