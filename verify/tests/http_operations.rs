//! Operating the server, over real sockets: health and readiness, the Prometheus scrape,
//! gzip, and the time limits (slow clients, whole-request timeout, shutdown deadline).

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde_json::{Value, json};
use toggle_admin::http::{PROMETHEUS_PATH, RouterConfig};
use toggle_admin::{Error, MemoryStore, ToggleAdmin};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The process-wide Prometheus recorder (there can be only one).
/// Held by every test that starts a server: the process-wide metrics count every request of
/// every server, and the scrape test asserts exact counts, which a test running beside it
/// would move (it once counted 8 `/health` requests for its 7, and once 12, beside the
/// slow-client tests).
static PROCESS_METRICS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn prometheus() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| PrometheusBuilder::new().install_recorder().unwrap())
        .clone()
}

/// A server on a free port; dropping `stop` (or sending on it) shuts it down.
struct Running {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    async fn start(config: RouterConfig, admin: ToggleAdmin) -> Running {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
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

    /// Ask for shutdown; how long `serve` then took to return.
    async fn shut_down(mut self) -> Duration {
        let started = Instant::now();
        drop(self.stop.take());
        (&mut self.served).await.unwrap().unwrap();
        started.elapsed()
    }
}

async fn get(url: &str) -> (u16, String) {
    let response = reqwest::get(url).await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn health_and_readiness_answer_without_a_key() {
    let _metrics = PROCESS_METRICS.lock().await;
    let server = Running::start(RouterConfig::new(), ToggleAdmin::new(MemoryStore::new())).await;
    let (status, body) = get(&server.url("/health")).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"health": "GOOD"})
    );
    let (status, body) = get(&server.url("/ready")).await;
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"health": "GOOD"})
    );
    server.shut_down().await;
}

/// The value of the sample `name{labels}` in a Prometheus text exposition, 0 if absent.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(name) && !line.starts_with('#'))
        .filter(|line| {
            let rest = &line[name.len()..];
            rest.starts_with('{') || rest.starts_with(' ')
        })
        .filter(|line| {
            labels
                .iter()
                .all(|(k, v)| line.contains(&format!("{k}=\"{v}\"")))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_prometheus_scrape_counts_requests_and_commits() {
    let _metrics = PROCESS_METRICS.lock().await;
    let handle = prometheus();
    let dir = tempfile::tempdir().unwrap();
    let store = toggle_admin::store::FileStore::open(dir.path()).unwrap();
    let admin = ToggleAdmin::new(store);
    let server = Running::start(RouterConfig::new().prometheus(handle), admin.clone()).await;
    let scrape = || async { get(&server.url(PROMETHEUS_PATH)).await.1 };
    let health = [("method", "GET"), ("path", "/health"), ("status", "200")];
    let missing = [("path", "unmatched"), ("status", "404")];

    let before = scrape().await;
    for _ in 0..7 {
        assert_eq!(get(&server.url("/health")).await.0, 200);
    }
    for _ in 0..3 {
        assert_eq!(get(&server.url("/no/such/path")).await.0, 404);
    }
    // Invented methods are counted together, not one series each.
    let client = reqwest::Client::new();
    for method in ["FROBNICATE", "XYZZY"] {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let answer = client
            .request(method, server.url("/health"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 405);
    }
    // Two FileStore commits: the bootstrap key and an environment.
    let key = admin.bootstrap_admin_key("ops").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    admin
        .create_environment(
            &caller,
            &toggle_admin::model::Environment {
                name: "metrics".into(),
                environment_type: "test".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // Readiness probes commit nothing, and are counted as requests.
    for _ in 0..2 {
        assert_eq!(get(&server.url("/ready")).await.0, 200);
    }
    let after = scrape().await;

    let moved = |name: &str, labels: &[(&str, &str)]| {
        sample(&after, name, labels) - sample(&before, name, labels)
    };
    assert_eq!(moved("http_requests_total", &health), 7.0, "{after}");
    assert_eq!(moved("http_requests_total", &missing), 3.0, "{after}");
    let invented = [("method", "other"), ("path", "/health"), ("status", "405")];
    assert_eq!(moved("http_requests_total", &invented), 2.0, "{after}");
    assert!(!after.contains("FROBNICATE"), "{after}");
    assert_eq!(
        moved("http_request_duration_seconds_count", &health),
        7.0,
        "{after}"
    );
    // Other tests of this process commit too: at least these two.
    assert!(
        moved("toggle_admin_commits_total", &[("store", "file")]) >= 2.0,
        "{after}"
    );
    assert!(after.contains("toggle_admin_commit_batch_size"), "{after}");
    assert!(
        after.contains("toggle_admin_journal_sync_seconds"),
        "{after}"
    );
    server.shut_down().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn large_answers_are_gzipped_when_the_client_accepts_it() {
    let _metrics = PROCESS_METRICS.lock().await;
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("admin").await.unwrap().secret;
    let server = Running::start(RouterConfig::new(), admin).await;
    let client = reqwest::Client::new();
    for i in 0..40 {
        let created = client
            .post(server.url("/api/admin/environments"))
            .header("Authorization", &key)
            .json(&json!({"name": format!("environment-with-a-long-name-{i:03}"), "type": "test"}))
            .send()
            .await
            .unwrap();
        assert_eq!(created.status(), 201);
    }
    let list = |gzip: bool| {
        let mut request = client
            .get(server.url("/api/admin/environments"))
            .header("Authorization", &key);
        if gzip {
            request = request.header("Accept-Encoding", "gzip");
        }
        request.send()
    };
    let plain = list(false).await.unwrap();
    assert_eq!(plain.headers().get("content-encoding"), None);
    let plain_len = plain.bytes().await.unwrap().len();
    assert!(plain_len > 1024, "{plain_len}");
    let gzipped = list(true).await.unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    let gzipped_len = gzipped.bytes().await.unwrap().len();
    assert!(gzipped_len < plain_len / 2, "{gzipped_len} of {plain_len}");
    // Small answers are left alone.
    let small = client
        .get(server.url("/health"))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(small.headers().get("content-encoding"), None);
    server.shut_down().await;
}

/// Hundreds of clients that send their headers one byte a second: a normal client is still
/// served at once, and every slow connection is closed after the header-read timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_closed_and_do_not_starve_the_others() {
    let _metrics = PROCESS_METRICS.lock().await;
    const SLOW: usize = 300;
    let timeout = Duration::from_secs(2);
    let config = RouterConfig::new().header_read_timeout(timeout);
    let server = Running::start(config, ToggleAdmin::new(MemoryStore::new())).await;
    let addr = server.addr;
    let started = Instant::now();
    let mut slow = Vec::new();
    for _ in 0..SLOW {
        slow.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let request = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
            let mut buffer = [0u8; 512];
            for byte in request.iter() {
                if stream.write_all(&[*byte]).await.is_err() {
                    break;
                }
                // Wait a second for the next byte, or notice the server closed.
                match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer)).await
                {
                    Ok(Ok(0)) | Ok(Err(_)) => break,
                    Ok(Ok(_)) => continue, // an error answer; the close follows
                    Err(_) => continue,
                }
            }
            started.elapsed()
        }));
    }
    // While they dribble, a normal client is served quickly, again and again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut slowest_normal = Duration::ZERO;
    for _ in 0..5 {
        let asked = Instant::now();
        let (status, _) = get(&format!("http://{addr}/health")).await;
        assert_eq!(status, 200);
        assert!(
            asked.elapsed() < Duration::from_millis(500),
            "{:?}",
            asked.elapsed()
        );
        slowest_normal = slowest_normal.max(asked.elapsed());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Every slow connection was closed by the server soon after the timeout, long before
    // its request (about 60 bytes, so 60 s) could have been sent.
    let mut last_closed = Duration::ZERO;
    for task in slow {
        let closed_after = task.await.unwrap();
        assert!(
            closed_after < timeout + Duration::from_secs(3),
            "a slow client held its connection for {closed_after:?}"
        );
        last_closed = last_closed.max(closed_after);
    }
    println!(
        "{SLOW} slow clients: a normal request took at most {slowest_normal:?}; \
         the last slow connection was closed after {last_closed:?}"
    );
    server.shut_down().await;
}

/// A client that sends its headers and then its body one byte a second.
async fn slow_upload(addr: SocketAddr, key: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/admin/environments HTTP/1.1\r\nHost: x\r\nAuthorization: {key}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_over_the_whole_request_timeout_is_answered_503() {
    let _metrics = PROCESS_METRICS.lock().await;
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("admin").await.unwrap().secret;
    let config = RouterConfig::new()
        .request_timeout(Duration::from_secs(1))
        .body_read_timeout(Duration::from_secs(60));
    let server = Running::start(config, admin).await;
    let mut stream = slow_upload(server.addr, &key).await;
    let started = Instant::now();
    let mut answer = String::new();
    let mut buffer = [0u8; 1024];
    loop {
        let _ = stream.write_all(b" ").await;
        match tokio::time::timeout(Duration::from_millis(300), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => {
                answer.push_str(&String::from_utf8_lossy(&buffer[..n]));
                break;
            }
            Ok(_) => break,
            Err(_) => assert!(started.elapsed() < Duration::from_secs(10), "no answer"),
        }
    }
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["name"], "ServiceUnavailable", "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("within 1 s"),
        "{body}"
    );
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
    server.shut_down().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_sent_too_slowly_is_refused() {
    let _metrics = PROCESS_METRICS.lock().await;
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("admin").await.unwrap().secret;
    let config = RouterConfig::new().body_read_timeout(Duration::from_secs(1));
    let server = Running::start(config, admin).await;
    let mut stream = slow_upload(server.addr, &key).await;
    let started = Instant::now();
    let mut answer = String::new();
    let mut buffer = [0u8; 1024];
    while started.elapsed() < Duration::from_secs(10) {
        let _ = stream.write_all(b" ").await;
        match tokio::time::timeout(Duration::from_millis(300), stream.read(&mut buffer)).await {
            Ok(Ok(n)) if n > 0 => {
                answer.push_str(&String::from_utf8_lossy(&buffer[..n]));
                break;
            }
            Ok(_) => break,
            Err(_) => {}
        }
    }
    let status: u16 = answer
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {answer:?}"));
    assert!((400..500).contains(&status), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    server.shut_down().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_waits_for_requests_in_flight_at_most_the_deadline() {
    let _metrics = PROCESS_METRICS.lock().await;
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("admin").await.unwrap().secret;
    let config = RouterConfig::new()
        .request_timeout(Duration::from_secs(60))
        .body_read_timeout(Duration::from_secs(60))
        .shutdown_deadline(Duration::from_secs(1));
    let server = Running::start(config, admin).await;
    // A request in flight that would take a minute.
    let mut stream = slow_upload(server.addr, &key).await;
    let dribble = tokio::spawn(async move {
        while stream.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let took = server.shut_down().await;
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "shutdown took {took:?}"
    );
    dribble.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_chosen_bootstrap_key_is_refused_with_a_clear_message() {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let short = "x".repeat(31);
    match admin.bootstrap_admin_key_with_secret("admin", &short).await {
        Err(Error::Validation { message, .. }) => {
            assert!(message.contains("at least 32 characters"), "{message}");
            assert!(message.contains("has 31"), "{message}");
        }
        other => panic!("a 31-character secret was not refused: {other:?}"),
    }
    let long = "y".repeat(32);
    let key = admin
        .bootstrap_admin_key_with_secret("admin", &long)
        .await
        .unwrap();
    assert_eq!(key.secret, long);
    // Generated secrets: `ta_` and 64 hex digits (256 bits), all different.
    let other = ToggleAdmin::new(MemoryStore::new());
    let generated = other.bootstrap_admin_key("admin").await.unwrap().secret;
    assert_eq!(generated.len(), 3 + 64);
    assert!(generated[3..].bytes().all(|b| b.is_ascii_hexdigit()));
}

#[cfg(feature = "postgres")]
use test_support::postgres as pg;

/// A store that cannot commit (its PostgreSQL connections are gone): not ready, still
/// healthy (the process serves), and the probe's failure is counted.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn readiness_fails_when_the_store_cannot_commit() {
    let _metrics = PROCESS_METRICS.lock().await;
    let Some(url) = pg::database_url() else {
        return;
    };
    let handle = prometheus();
    let schema = pg::TestSchema::new(&url);
    let store = std::sync::Arc::new(schema.connect(2).await);
    let admin = ToggleAdmin::from_arc(store.clone());
    let server = Running::start(RouterConfig::new().prometheus(handle), admin).await;
    assert_eq!(get(&server.url("/ready")).await.0, 200);
    let probe_failures = || async {
        let text = get(&server.url(PROMETHEUS_PATH)).await.1;
        sample(
            &text,
            "toggle_admin_store_errors_total",
            &[("store", "probe")],
        )
    };
    let before = probe_failures().await;
    store.close();
    let (status, body) = get(&server.url("/ready")).await;
    assert_eq!(status, 503);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"health": "BAD"})
    );
    assert_eq!(get(&server.url("/health")).await.0, 200);
    assert_eq!(probe_failures().await - before, 1.0);
    server.shut_down().await;
}
