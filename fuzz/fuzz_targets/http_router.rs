//! The HTTP router fed an arbitrary request. The input is text: a first line
//! `METHOD PATH`, header lines `Name: value`, an empty line, then the body (so that seeds are
//! readable and easy to write). The secret `fuzz-admin-secret-0123456789` is a valid admin
//! key. Nothing may panic, and no request may get a 5xx.
//!
//! Every input starts from the same state (a copy of one prepared once per process), so a
//! finding reproduces from its input alone; the runtime is built once too.
#![no_main]

use axum::body::Body;
use axum::http::{Method, Request};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use std::sync::OnceLock;

use toggle_admin::store::StoreState;
use toggle_admin::{MemoryStore, ToggleAdmin};
use tower::ServiceExt;

const SECRET: &str = "fuzz-admin-secret-0123456789";

/// The prepared state: the admin key, two environments, project `p`, feature `f`.
async fn prepared() -> StoreState {
    let store = std::sync::Arc::new(MemoryStore::new());
    let admin = ToggleAdmin::new(store.clone());
    admin.bootstrap_admin_key_with_secret("fuzz", SECRET).await.expect("bootstrap");
    let caller = admin.authenticate(Some(SECRET)).await.expect("authenticate");
    for name in ["development", "production"] {
        admin
            .create_environment(
                &caller,
                &Environment { name: name.into(), environment_type: name.into(), ..Default::default() },
            )
            .await
            .expect("environment");
    }
    admin
        .create_project(
            &caller,
            &Project {
                id: "p".into(),
                name: "P".into(),
                environments: vec!["development".into(), "production".into()],
                ..Default::default()
            },
        )
        .await
        .expect("project");
    admin
        .create_feature(&caller, "p", &NewFeature { name: "f".into(), ..Default::default() })
        .await
        .expect("feature");
    store.to_state()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().build().expect("runtime"))
}

fn router() -> axum::Router {
    static STATE: OnceLock<StoreState> = OnceLock::new();
    let state = STATE.get_or_init(|| runtime().block_on(prepared())).clone();
    toggle_admin::http::RouterConfig::new()
        .body_limit(1 << 20)
        .router(ToggleAdmin::new(MemoryStore::from_state(state)))
}

fn request(data: &[u8]) -> Option<Request<Body>> {
    let split = data.windows(2).position(|w| w == b"\n\n");
    let (head, body) = match split {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let (method, path) = lines.next()?.split_once(' ')?;
    let method = Method::from_bytes(method.as_bytes()).ok()?;
    let mut builder = Request::builder().method(method).uri(path);
    for line in lines {
        let (name, value) = line.split_once(':')?;
        builder = builder.header(name.trim(), value.trim());
    }
    builder.body(Body::from(body.to_vec())).ok()
}

fuzz_target!(|data: &[u8]| {
    let Some(request) = request(data) else {
        return;
    };
    let app = router();
    runtime().block_on(async {
        let response = app.oneshot(request).await.expect("infallible");
        let status = response.status();
        let body = response.into_body().collect().await.expect("body").to_bytes();
        assert!(
            !status.is_server_error(),
            "{status}: {}",
            String::from_utf8_lossy(&body)
        );
    });
});
