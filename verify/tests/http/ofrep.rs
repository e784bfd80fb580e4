//! OFREP (`/ofrep/v1/evaluate/flags[/{key}]`, `/ofrep/v1/events`) through the router: keys
//! and their scope, the mapping of contexts and answers, errors, ETags, CORS, usage metrics
//! and the refetch stream.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use test_support::http::*;
use tower::ServiceExt;

const FLAGS: &str = "/ofrep/v1/evaluate/flags";

async fn ok(t: &Setup, method: Method, path: &str, body: Option<&Value>) {
    let r = t.call(method, path, body).await;
    assert!(r.status.is_success(), "{path}: {} {}", r.status, r.text());
}

async fn token(t: &Setup, kind: &str, projects: &[&str]) -> String {
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(
                &json!({"tokenName": kind, "type": kind, "environment": "production",
                         "projects": projects}),
            ),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    r.json()["secret"].as_str().unwrap().to_owned()
}

fn feature(project: &str, name: &str) -> String {
    format!("/api/admin/projects/{project}/features/{name}")
}

/// Flags of project `p` in production: `f` (userId 1 or 2, a string variant), `h` (off),
/// `all` (on for everyone), `half` (a 50 % rollout), `pay-json`, `pay-int`, `pay-float`,
/// `pay-csv` (a variant with that payload for everyone), `bare` (a variant without a
/// payload); `g` in project `other` (on).
async fn flags(t: &Setup) {
    let on = |project: &str, name: &str| {
        format!("{}/environments/production/on", feature(project, name))
    };
    let strategy = |project: &str, name: &str| {
        format!(
            "{}/environments/production/strategies",
            feature(project, name)
        )
    };
    ok(
        t,
        Method::POST,
        &strategy("p", "f"),
        Some(&json!({"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": "f"},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}]})),
    )
    .await;
    ok(
        t,
        Method::PUT,
        &format!("{}/environments/production/variants", feature("p", "f")),
        Some(
            &json!([{"name": "blue", "weight": 1000, "weightType": "variable",
            "stickiness": "default", "payload": {"type": "string", "value": "sky"}}]),
        ),
    )
    .await;
    ok(t, Method::POST, &on("p", "f"), None).await;
    ok(
        t,
        Method::POST,
        &strategy("other", "g"),
        Some(&json!({"name": "default"})),
    )
    .await;
    ok(t, Method::POST, &on("other", "g"), None).await;
    let payloads = [
        ("pay-json", Some(("json", "{\"color\": \"red\", \"n\": 2}"))),
        ("pay-int", Some(("number", "42"))),
        ("pay-float", Some(("number", "2.5"))),
        ("pay-csv", Some(("csv", "a,b,c"))),
        ("bare", None),
    ];
    for name in ["h", "all", "half"]
        .into_iter()
        .chain(payloads.iter().map(|(n, _)| *n))
    {
        ok(
            t,
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": name})),
        )
        .await;
    }
    ok(
        t,
        Method::POST,
        &strategy("p", "all"),
        Some(&json!({"name": "default"})),
    )
    .await;
    ok(t, Method::POST, &on("p", "all"), None).await;
    ok(
        t,
        Method::POST,
        &strategy("p", "half"),
        Some(&json!({"name": "flexibleRollout",
            "parameters": {"rollout": "50", "stickiness": "default", "groupId": "half"}})),
    )
    .await;
    ok(t, Method::POST, &on("p", "half"), None).await;
    for (name, payload) in payloads {
        let mut variant = json!({"name": format!("{name}-v"), "weight": 1000,
            "weightType": "variable", "stickiness": "default"});
        if let Some((kind, value)) = payload {
            variant["payload"] = json!({"type": kind, "value": value});
        }
        ok(
            t,
            Method::POST,
            &strategy("p", name),
            Some(&json!({"name": "default"})),
        )
        .await;
        ok(
            t,
            Method::PUT,
            &format!("{}/environments/production/variants", feature("p", name)),
            Some(&json!([variant])),
        )
        .await;
        ok(t, Method::POST, &on("p", name), None).await;
    }
}

/// A request to the OFREP routes.
async fn post(t: &Setup, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut request = Request::builder().method(Method::POST).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = t
        .app
        .clone()
        .oneshot(request.body(Body::from(body.to_owned())).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

async fn one(t: &Setup, key: &str, flag: &str, context: Value) -> Reply {
    let r = post(
        t,
        &format!("{FLAGS}/{flag}"),
        &[("authorization", key), ("content-type", "application/json")],
        &json!({"context": context}).to_string(),
    )
    .await;
    assert!(
        r.content_type()
            .unwrap_or_default()
            .starts_with("application/json"),
        "{:?}",
        r.headers
    );
    r
}

#[tokio::test]
async fn ofrep_evaluates_as_the_mapping_says() {
    let t = setup().await;
    flags(&t).await;
    let key = token(&t, "frontend", &["p"]).await;
    let user = |id: &str| json!({"targetingKey": id});

    let r = one(&t, &key, "f", user("1")).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"key": "f", "value": "sky", "reason": "SPLIT", "variant": "blue",
               "metadata": {"enabled": true, "payloadType": "string"}})
    );
    // targetingKey wins over userId.
    let r = one(&t, &key, "f", json!({"targetingKey": "3", "userId": "1"})).await;
    assert_eq!(
        r.json(),
        json!({"key": "f", "value": false, "reason": "DISABLED", "variant": "disabled",
               "metadata": {"enabled": false}})
    );
    let r = one(&t, &key, "h", user("1")).await;
    assert_eq!(r.json()["reason"], "DISABLED");
    let r = one(&t, &key, "all", json!({})).await;
    assert_eq!(
        r.json(),
        json!({"key": "all", "value": true, "reason": "STATIC", "variant": "enabled",
               "metadata": {"enabled": true}})
    );
    // A 50 % rollout: targeting, some users in and some out.
    let mut seen = std::collections::BTreeSet::new();
    for id in 0..40 {
        let answer = one(&t, &key, "half", user(&id.to_string())).await.json();
        seen.insert((answer["value"].to_string(), answer["reason"].to_string()));
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [
            ("false".to_owned(), "\"DISABLED\"".to_owned()),
            ("true".to_owned(), "\"TARGETING_MATCH\"".to_owned())
        ]
    );
    let value = |name: &'static str| {
        let t = &t;
        let key = &key;
        async move { one(t, key, name, json!({"targetingKey": "9"})).await.json() }
    };
    assert_eq!(
        value("pay-json").await["value"],
        json!({"color": "red", "n": 2})
    );
    let int = value("pay-int").await;
    assert_eq!(int["value"], json!(42));
    assert!(int["value"].is_i64(), "{int}");
    assert_eq!(int["metadata"]["payloadType"], "number");
    let float = value("pay-float").await;
    assert!(
        float["value"].is_f64() && float["value"] == json!(2.5),
        "{float}"
    );
    assert_eq!(value("pay-csv").await["value"], "a,b,c");
    let bare = value("bare").await;
    assert_eq!(
        (
            bare["value"].clone(),
            bare["variant"].clone(),
            bare["reason"].clone()
        ),
        (json!(true), json!("bare-v"), json!("SPLIT"))
    );

    // Out of scope (project other) and unknown: 404 FLAG_NOT_FOUND with the key.
    for name in ["g", "nope"] {
        let r = one(&t, &key, name, json!({})).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND);
        let body = r.json();
        assert_eq!(body["key"], name);
        assert_eq!(body["errorCode"], "FLAG_NOT_FOUND");
        assert!(body["errorDetails"].is_string());
    }

    // Bulk: every flag of the scope, the disabled ones too.
    let r = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("host", "localhost:4242")],
        r#"{"context": {"targetingKey": "3"}}"#,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let body = r.json();
    let names: Vec<&str> = body["flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    for name in ["f", "h", "all", "half", "pay-json", "bare"] {
        assert!(names.contains(&name), "{name}: {body}");
    }
    assert!(!names.contains(&"g"));
    let f = body["flags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "f")
        .unwrap();
    assert_eq!(f["reason"], "DISABLED");
    assert_eq!(body["eventStreams"][0]["type"], "sse");
}

#[tokio::test]
async fn ofrep_keys_errors_and_bodies() {
    let t = setup().await;
    flags(&t).await;
    let frontend = token(&t, "frontend", &["p"]).await;
    let client = token(&t, "client", &["p"]).await;
    let single = format!("{FLAGS}/f");
    // Every way of sending a frontend or client key.
    for headers in [
        vec![("authorization", frontend.clone())],
        vec![("authorization", format!("Bearer {client}"))],
        vec![("x-api-key", client.clone())],
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        for path in [FLAGS, single.as_str()] {
            let r = post(&t, path, &headers, "{}").await;
            assert_eq!(r.status, StatusCode::OK, "{path} {headers:?}: {}", r.text());
        }
    }
    // No key, an unknown key: 401; an admin key: 403. The single route's bodies name the flag.
    for (headers, status) in [
        (vec![], StatusCode::UNAUTHORIZED),
        (vec![("authorization", "nope")], StatusCode::UNAUTHORIZED),
        (
            vec![("authorization", t.secret.as_str())],
            StatusCode::FORBIDDEN,
        ),
    ] {
        let r = post(&t, &single, &headers, "{}").await;
        assert_eq!(r.status, status, "{}", r.text());
        let body = r.json();
        assert_eq!(body["key"], "f", "{body}");
        assert!(body["errorDetails"].is_string(), "{body}");
        let r = post(&t, FLAGS, &headers, "{}").await;
        assert_eq!(r.status, status);
        assert!(r.json()["errorDetails"].is_string());
    }
    let key = [("authorization", frontend.as_str())];
    // Any content type, or none, and an empty body.
    for (content_type, body) in [
        ("text/plain", "{}"),
        ("application/json", ""),
        ("", "{\"context\": null}"),
    ] {
        let mut headers = key.to_vec();
        if !content_type.is_empty() {
            headers.push(("content-type", content_type));
        }
        let r = post(&t, &single, &headers, body).await;
        assert_eq!(
            r.status,
            StatusCode::OK,
            "{content_type} {body}: {}",
            r.text()
        );
    }
    // Malformed JSON: PARSE_ERROR; a context that is not an object: INVALID_CONTEXT.
    for (body, code) in [
        ("{\"context\": ", "PARSE_ERROR"),
        ("{\"context\": []}", "INVALID_CONTEXT"),
        ("{\"context\": \"x\"}", "INVALID_CONTEXT"),
        ("[]", "INVALID_CONTEXT"),
        (
            "{\"context\": {\"currentTime\": \"yesterday\"}}",
            "INVALID_CONTEXT",
        ),
        ("{\"context\": {\"userId\": {\"a\": 1}}}", "INVALID_CONTEXT"),
    ] {
        for path in [FLAGS, single.as_str()] {
            let r = post(&t, path, &key, body).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.text());
            let answer = r.json();
            assert_eq!(answer["errorCode"], code, "{body}: {answer}");
            assert!(answer["errorDetails"].is_string());
            if path == single {
                assert_eq!(answer["key"], "f");
            }
        }
    }
    // Over the body limit: 413 in OFREP's shape.
    let big = format!(
        "{{\"context\": {{\"p\": \"{}\"}}}}",
        "x".repeat(17 * 1024 * 1024)
    );
    let r = post(&t, &single, &key, &big).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(r.json()["key"], "f");
    // A context over the frontend API's limits.
    let long = json!({"context": {"p": "x".repeat(9 * 1024)}}).to_string();
    let r = post(&t, &single, &key, &long).await;
    assert_eq!(r.json()["errorCode"], "INVALID_CONTEXT");
    // GET is not OFREP's method: 405, not 5xx.
    let r = t
        .raw(Method::GET, FLAGS, Some(&frontend), None, Vec::new())
        .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn ofrep_bulk_etags_follow_the_flags_and_the_context() {
    let t = setup().await;
    flags(&t).await;
    let key = token(&t, "frontend", &["p"]).await;
    let context = r#"{"context": {"targetingKey": "1", "plan": "pro"}}"#;
    let first = post(&t, FLAGS, &[("authorization", &key)], context).await;
    let etag = first.headers["etag"].to_str().unwrap().to_owned();
    let again = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("if-none-match", &etag)],
        context,
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers["etag"].to_str().unwrap(), etag);
    // A property changes: 200 and a new ETag.
    let other = r#"{"context": {"targetingKey": "1", "plan": "free"}}"#;
    let changed = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("if-none-match", &etag)],
        other,
    )
    .await;
    assert_eq!(changed.status, StatusCode::OK);
    assert_ne!(changed.headers["etag"], etag.as_str());
    // A flag of the scope changes: 200 and a new ETag; one out of the scope: still 304.
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/other/features/g/environments/production/off",
        None,
    )
    .await;
    let r = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("if-none-match", &etag)],
        context,
    )
    .await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/p/features/h/environments/production/on",
        None,
    )
    .await;
    let r = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("if-none-match", &etag)],
        context,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_ne!(r.headers["etag"], etag.as_str());
}

#[tokio::test]
async fn ofrep_answers_cors_by_name() {
    let t = setup().await;
    let request = Request::builder()
        .method(Method::OPTIONS)
        .uri(FLAGS)
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,authorization,x-api-key,if-none-match",
        )
        .body(Body::empty())
        .unwrap();
    let response = t.app.clone().oneshot(request).await.unwrap();
    assert!(response.status().is_success());
    let allowed = response.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in [
        "content-type",
        "authorization",
        "x-api-key",
        "if-none-match",
    ] {
        assert!(allowed.contains(name), "{allowed}");
    }
    let key = token(&t, "frontend", &[]).await;
    let r = post(
        &t,
        FLAGS,
        &[
            ("authorization", &key),
            ("origin", "https://app.example.com"),
        ],
        "{}",
    )
    .await;
    assert_eq!(r.headers["access-control-allow-origin"], "*");
    assert!(
        r.headers["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("etag")
    );
}

#[tokio::test]
async fn ofrep_evaluations_count_in_usage_metrics() {
    let t = setup().await;
    flags(&t).await;
    let key = token(&t, "client", &["p"]).await;
    for user in ["1", "3"] {
        let body = json!({"context": {"targetingKey": user, "appName": "shop"}}).to_string();
        post(&t, &format!("{FLAGS}/f"), &[("authorization", &key)], &body).await;
    }
    post(
        &t,
        FLAGS,
        &[("authorization", &key), ("unleash-appname", "web")],
        "{}",
    )
    .await;
    let usage = t
        .call(Method::GET, "/api/admin/client-metrics/features/f", None)
        .await;
    let usage = usage.json();
    let counts: Vec<(String, u64, u64, Value)> = usage["lastHourUsage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["appName"].as_str().unwrap_or_default().to_owned(),
                m["yes"].as_u64().unwrap(),
                m["no"].as_u64().unwrap(),
                m["variants"].clone(),
            )
        })
        .collect();
    // The variant user 1 got is counted; the off evaluations count none.
    let shop = ("shop".to_owned(), 1, 1, json!({"blue": 1}));
    assert!(counts.contains(&shop), "{usage}");
    assert!(
        counts.contains(&("web".to_owned(), 0, 1, json!({}))),
        "{usage}"
    );
}

/// The next event of an SSE body, skipping comments.
async fn next_event(body: &mut Body, buffer: &mut String) -> String {
    loop {
        if let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if block.lines().all(|l| l.starts_with(':')) {
                continue;
            }
            return block;
        }
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("the stream stalled")
            .expect("the stream ended")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            buffer.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

#[tokio::test]
async fn ofrep_streams_announce_changes_of_the_scope() {
    let t = setup().await;
    flags(&t).await;
    let key = token(&t, "frontend", &["p"]).await;
    let r = post(
        &t,
        FLAGS,
        &[("authorization", &key), ("host", "flags.example.com")],
        "{}",
    )
    .await;
    let url = r.json()["eventStreams"][0]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        url.starts_with("http://flags.example.com/ofrep/v1/events?token="),
        "{url}"
    );
    assert!(!url.contains(&key), "the key itself is never in the URL");
    let path = url.trim_start_matches("http://flags.example.com");
    let request = Request::builder()
        .uri(path)
        .header("origin", "https://app.example.com")
        .body(Body::empty())
        .unwrap();
    let response = t.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["access-control-allow-origin"], "*");
    let mut body = response.into_body();
    let mut buffer = String::new();
    let first = next_event(&mut body, &mut buffer).await;
    assert!(
        first.contains("data: {\"type\":\"refetchEvaluation\"}"),
        "{first}"
    );
    assert!(
        first.starts_with("id: ") && !first.contains("event:"),
        "{first}"
    );
    // A change out of the scope says nothing; one in it, a refetch.
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/other/features/g/environments/production/off",
        None,
    )
    .await;
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/p/features/h/environments/production/on",
        None,
    )
    .await;
    let started = std::time::Instant::now();
    let event = next_event(&mut body, &mut buffer).await;
    assert!(event.contains("refetchEvaluation"), "{event}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?} {event}",
        started.elapsed()
    );
    assert!(buffer.is_empty(), "one event for one change: {buffer}");

    // A forged, altered or missing credential: 401.
    for path in [
        "/ofrep/v1/events".to_owned(),
        "/ofrep/v1/events?token=1.2.3".to_owned(),
        path.replacen("token=", "token=9", 1),
    ] {
        let response = t
            .app
            .clone()
            .oneshot(Request::builder().uri(&path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    // A revoked key's credential opens nothing.
    let tokens = t
        .call(Method::GET, "/api/admin/api-tokens", None)
        .await
        .json();
    let id = tokens["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["type"] == "frontend")
        .unwrap()["id"]
        .clone();
    let id = id
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| id.to_string());
    ok(
        &t,
        Method::DELETE,
        &format!("/api/admin/api-tokens/{id}"),
        None,
    )
    .await;
    let response = t
        .app
        .clone()
        .oneshot(Request::builder().uri(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let _ = header::ETAG;
}

/// The safety net for a lost notification: an instance that hears nothing of another's
/// commit (two admins over one store, no notifications between them) still announces it,
/// at its catch-up poll.
#[tokio::test]
async fn ofrep_streams_catch_up_on_changes_no_one_announced() {
    let store: std::sync::Arc<dyn toggle_admin::Store> =
        std::sync::Arc::new(toggle_admin::MemoryStore::new());
    let writer = toggle_admin::ToggleAdmin::from_arc(store.clone());
    let t = setup_on(writer).await;
    flags(&t).await;
    let key = token(&t, "frontend", &["p"]).await;
    let reader = toggle_admin::ToggleAdmin::from_arc(store);
    reader.set_push_config(toggle_admin::admin::PushConfig {
        catch_up: Duration::from_millis(300),
        ..Default::default()
    });
    let app = toggle_admin::http::router(reader);
    let r = app
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::POST)
                .uri(FLAGS)
                .header("authorization", &key)
                .header("host", "h")
                .body(Body::from("{}"))
                .unwrap(),
        )
        .await
        .unwrap();
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    let path = answer["eventStreams"][0]["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://h")
        .to_owned();
    let response = app
        .oneshot(Request::builder().uri(path).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let mut body = response.into_body();
    let mut buffer = String::new();
    next_event(&mut body, &mut buffer).await;
    ok(
        &t,
        Method::POST,
        "/api/admin/projects/p/features/h/environments/production/on",
        None,
    )
    .await;
    let started = std::time::Instant::now();
    let event = next_event(&mut body, &mut buffer).await;
    assert!(event.contains("refetchEvaluation"), "{event}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}
