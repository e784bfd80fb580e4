//! Load tool for the push protocols, against running servers (`toggle-admin serve`; see
//! scripts/push-bench.sh, which starts them and passes the arguments):
//!
//! * `fanout BASE ADMIN_KEY STREAMS [SERVER_PID]`: opens STREAMS streams
//!   (`/api/client/streaming`) with one client key, reads the server's resident memory
//!   before and after (from /proc when SERVER_PID is given), times an admin request while
//!   they are open, toggles one flag and measures, per stream, the time from the toggle's
//!   acknowledgement to the stream receiving its `unleash-updated` (p50, p99, max).
//! * `delta BASE ADMIN_KEY SECONDS`: 1,000 flags, one toggled every second, 16 connections
//!   polling `/api/client/delta` (following the ETag), then 16 polling
//!   `/api/client/features` (following its ETag), SECONDS each: requests/s and bytes per
//!   answer.
//! * `cross BASE_A BASE_B ADMIN_KEY CHANGES`: a stream on B, CHANGES toggles through A one
//!   after the other: the time from each toggle's acknowledgement to B's event (p50, p99,
//!   max).
//! * `hold BASE ADMIN_KEY SECONDS`: a stream open on BASE for SECONDS, nothing changing
//!   (the script counts the queries the idle instance sends meanwhile).
//!
//! Streams are read over plain sockets (a hand-written HTTP/1.1 request), so that the
//! tool's own cost per stream stays small.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Barrier, mpsc};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fanout") if args.len() >= 4 => {
            let pid = args.get(4).and_then(|p| p.parse::<u32>().ok());
            fanout(&args[1], &args[2], args[3].parse()?, pid).await
        }
        Some("delta") if args.len() == 4 => delta(&args[1], &args[2], args[3].parse()?).await,
        Some("cross") if args.len() == 5 => {
            cross(&args[1], &args[2], &args[3], args[4].parse()?).await
        }
        Some("hold") if args.len() == 4 => hold(&args[1], &args[2], args[3].parse()?).await,
        _ => Err(
            "usage: push_load fanout BASE ADMIN_KEY STREAMS [PID] | delta BASE ADMIN_KEY \
                  SECONDS | cross BASE_A BASE_B ADMIN_KEY CHANGES | hold BASE ADMIN_KEY SECONDS"
                .into(),
        ),
    }
}

async fn call(
    base: &str,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value> {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method.parse()?, format!("{base}{path}"))
        .header("authorization", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(format!("{method} {path}: {status} {text}").into());
    }
    Ok(if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text)?
    })
}

/// A client key of project `default` in `development`.
async fn client_key(base: &str, admin: &str) -> Result<String> {
    let token = call(
        base,
        admin,
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "load", "type": "client", "projects": ["default"], "environment": "development"})),
    )
    .await?;
    Ok(token["secret"].as_str().ok_or("no secret")?.to_owned())
}

async fn create_flag(base: &str, admin: &str, name: &str) -> Result<()> {
    call(
        base,
        admin,
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": name})),
    )
    .await
    .map(drop)
}

fn toggle_path(name: &str, on: bool) -> String {
    format!(
        "/api/admin/projects/default/features/{name}/environments/development/{}",
        if on { "on" } else { "off" }
    )
}

/// Open a stream on a plain socket; returns once the response's headers and the first
/// event have been read.
async fn open_stream(addr: &str, key: &str) -> Result<TcpStream> {
    let mut socket = TcpStream::connect(addr).await?;
    let request = format!(
        "GET /api/client/streaming HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {key}\r\nAccept: text/event-stream\r\n\r\n"
    );
    socket.write_all(request.as_bytes()).await?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !contains(&seen, b"unleash-connected") || !contains(&seen, b"\n\n") {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Err(format!("the stream closed: {}", String::from_utf8_lossy(&seen)).into());
        }
        seen.extend_from_slice(&buf[..n]);
    }
    Ok(socket)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Read `socket` until an `unleash-updated` event arrives; when it did.
async fn until_updated(socket: &mut TcpStream) -> Result<Instant> {
    let mut buf = [0u8; 2048];
    let mut tail: Vec<u8> = Vec::new();
    loop {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            return Err("the stream closed".into());
        }
        tail.extend_from_slice(&buf[..n]);
        if contains(&tail, b"unleash-updated") {
            return Ok(Instant::now());
        }
        let keep = tail.len().saturating_sub(32);
        tail.drain(..keep);
    }
}

fn percentiles(mut samples: Vec<Duration>) -> String {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1000.0
    };
    format!(
        "n {} p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        samples.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    )
}

fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

async fn fanout(base: &str, admin: &str, streams: usize, pid: Option<u32>) -> Result<()> {
    let addr = base.trim_start_matches("http://").to_owned();
    let key = client_key(base, admin).await?;
    create_flag(base, admin, "fanout").await.ok();
    let before = pid.and_then(resident_kib);
    let (sockets_tx, mut sockets_rx) = mpsc::channel(streams);
    let opened = Arc::new(AtomicUsize::new(0));
    let mut openers = Vec::new();
    let per = streams.div_ceil(64);
    for chunk in 0..64 {
        let n = per.min(streams.saturating_sub(chunk * per));
        let (addr, key, tx, opened) = (
            addr.clone(),
            key.clone(),
            sockets_tx.clone(),
            opened.clone(),
        );
        openers.push(tokio::spawn(async move {
            for _ in 0..n {
                match open_stream(&addr, &key).await {
                    Ok(socket) => {
                        opened.fetch_add(1, Ordering::Relaxed);
                        let _ = tx.send(socket).await;
                    }
                    Err(e) => eprintln!("open: {e}"),
                }
            }
        }));
    }
    drop(sockets_tx);
    let started = Instant::now();
    for opener in openers {
        opener.await?;
    }
    let mut sockets = Vec::with_capacity(streams);
    while let Some(socket) = sockets_rx.recv().await {
        sockets.push(socket);
    }
    println!(
        "opened {} streams in {:.1} s",
        sockets.len(),
        started.elapsed().as_secs_f64()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = pid.and_then(resident_kib);
    if let (Some(before), Some(after)) = (before, after) {
        println!(
            "server RSS {before} KiB -> {after} KiB: {:.1} KiB per stream",
            (after.saturating_sub(before)) as f64 / sockets.len().max(1) as f64
        );
    }
    let admin_started = Instant::now();
    call(base, admin, "GET", "/api/admin/projects/default", None).await?;
    println!(
        "an admin request while they are open: {:.1} ms",
        admin_started.elapsed().as_secs_f64() * 1000.0
    );
    // Every stream waits for its update in a task of its own (on the tool's side).
    let ready = Arc::new(Barrier::new(sockets.len() + 1));
    let (times_tx, mut times_rx) = mpsc::unbounded_channel();
    for mut socket in sockets {
        let (ready, times_tx) = (ready.clone(), times_tx.clone());
        tokio::spawn(async move {
            ready.wait().await;
            if let Ok(at) = until_updated(&mut socket).await {
                // The socket goes along, kept open until every stream has been heard: a
                // socket closed now would have the server tear its connection down while
                // it is still fanning out, and that work is not the fan-out's.
                let _ = times_tx.send((at, socket));
            }
        });
    }
    drop(times_tx);
    ready.wait().await;
    call(base, admin, "POST", &toggle_path("fanout", true), None).await?;
    let acknowledged = Instant::now();
    let mut delays = Vec::new();
    let mut heard = Vec::new();
    while let Ok(Some((at, socket))) =
        tokio::time::timeout(Duration::from_secs(30), times_rx.recv()).await
    {
        delays.push(at.saturating_duration_since(acknowledged));
        heard.push(socket);
    }
    drop(heard);
    println!(
        "fan-out to {} of {} streams: {}",
        delays.len(),
        opened.load(Ordering::Relaxed),
        percentiles(delays)
    );
    Ok(())
}

async fn delta(base: &str, admin: &str, seconds: u64) -> Result<()> {
    let key = client_key(base, admin).await?;
    let existing = call(base, admin, "GET", "/api/admin/projects/default", None).await?;
    let have = existing["features"].as_array().map_or(0, Vec::len);
    for i in have..1000 {
        create_flag(base, admin, &format!("flag-{i:04}")).await?;
    }
    for path in ["/api/client/delta", "/api/client/features"] {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let changer = {
            let (base, admin, stop) = (base.to_owned(), admin.to_owned(), stop.clone());
            tokio::spawn(async move {
                let mut on = true;
                while !stop.load(Ordering::Relaxed) {
                    let _ = call(&base, &admin, "POST", &toggle_path("flag-0500", on), None).await;
                    on = !on;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
        };
        let requests = Arc::new(AtomicU64::new(0));
        let answers = Arc::new(AtomicU64::new(0));
        let bytes = Arc::new(AtomicU64::new(0));
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut pollers = Vec::new();
        for _ in 0..16 {
            let (base, key, path) = (base.to_owned(), key.clone(), path.to_owned());
            let (requests, answers, bytes) = (requests.clone(), answers.clone(), bytes.clone());
            pollers.push(tokio::spawn(async move {
                let client = reqwest::Client::new();
                let mut etag: Option<String> = None;
                while Instant::now() < deadline {
                    let mut request = client
                        .get(format!("{base}{path}"))
                        .header("authorization", &key)
                        .header("unleash-client-spec", "5.2.0");
                    if let Some(tag) = &etag {
                        request = request.header("if-none-match", tag);
                    }
                    let Ok(response) = request.send().await else {
                        continue;
                    };
                    if let Some(tag) = response.headers().get("etag") {
                        etag = tag.to_str().ok().map(str::to_owned);
                    }
                    let status = response.status();
                    let body = response.bytes().await.map(|b| b.len()).unwrap_or(0);
                    requests.fetch_add(1, Ordering::Relaxed);
                    if status == 200 {
                        answers.fetch_add(1, Ordering::Relaxed);
                        bytes.fetch_add(body as u64, Ordering::Relaxed);
                    }
                }
            }));
        }
        for poller in pollers {
            poller.await?;
        }
        stop.store(true, Ordering::Relaxed);
        changer.await?;
        let requests = requests.load(Ordering::Relaxed);
        let answers = answers.load(Ordering::Relaxed);
        let bytes = bytes.load(Ordering::Relaxed);
        println!(
            "{path}: {:.0} requests/s, {answers} answers with a body ({:.0} bytes each on average), the rest 304",
            requests as f64 / seconds as f64,
            bytes as f64 / answers.max(1) as f64
        );
    }
    // One changed flag out of 1,000: the size of its delta answer.
    let client = reqwest::Client::new();
    let first = client
        .get(format!("{base}/api/client/delta"))
        .header("authorization", &key)
        .send()
        .await?;
    let tag = first
        .headers()
        .get("etag")
        .and_then(|t| t.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let hydration = first.bytes().await?.len();
    call(base, admin, "POST", &toggle_path("flag-0001", true), None).await?;
    let one = client
        .get(format!("{base}/api/client/delta"))
        .header("authorization", &key)
        .header("if-none-match", &tag)
        .send()
        .await?
        .bytes()
        .await?
        .len();
    println!("hydration of 1,000 flags: {hydration} bytes; delta of one changed flag: {one} bytes");
    Ok(())
}

async fn cross(base_a: &str, base_b: &str, admin: &str, changes: usize) -> Result<()> {
    let key = client_key(base_a, admin).await?;
    create_flag(base_a, admin, "cross").await.ok();
    let addr_b = base_b.trim_start_matches("http://");
    let mut socket = open_stream(addr_b, &key).await?;
    let mut delays = Vec::with_capacity(changes);
    for i in 0..changes {
        call(
            base_a,
            admin,
            "POST",
            &toggle_path("cross", i % 2 == 0),
            None,
        )
        .await?;
        let acknowledged = Instant::now();
        let at =
            tokio::time::timeout(Duration::from_secs(30), until_updated(&mut socket)).await??;
        delays.push(at.saturating_duration_since(acknowledged));
    }
    println!("commit on A to event on B: {}", percentiles(delays));
    Ok(())
}

async fn hold(base: &str, admin: &str, seconds: u64) -> Result<()> {
    let key = client_key(base, admin).await?;
    let mut socket = open_stream(base.trim_start_matches("http://"), &key).await?;
    println!("a stream is open; holding it {seconds} s");
    // Keep reading (keep-alives) so the server never sees a stalled reader.
    let mut buf = [0u8; 2048];
    let deadline = tokio::time::sleep(Duration::from_secs(seconds));
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => return Ok(()),
            read = socket.read(&mut buf) => if read? == 0 {
                return Err("the stream closed".into());
            },
        }
    }
}
