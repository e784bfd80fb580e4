//! The admin page's two heaviest pages, through its router (`tower::ServiceExt::oneshot`, no
//! socket), on a MemoryStore: a project's features page (page 1, page 100 and a search) in a
//! project of 10,000 features, and a feature's variants page (5 variants). The same-run
//! baseline is the facade call each page makes (`feature_list`, `variants`): what is left is
//! the page's own cost (session, template, headers). See BENCHMARKS.md.
//!
//! `UI_BENCH_FEATURES` overrides the project's size.

use std::hint::black_box;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::BodyExt;
use toggle_admin::model::{Environment, Project};
use toggle_admin::model::{FeatureListQuery, NewFeature};
use toggle_admin::{Caller, MemoryStore, ToggleAdmin};
use tower::ServiceExt;

fn feature_count() -> usize {
    std::env::var("UI_BENCH_FEATURES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

struct Setup {
    admin: ToggleAdmin,
    caller: Caller,
    app: Router,
    cookie: String,
}

async fn setup() -> Setup {
    let admin = ToggleAdmin::new(MemoryStore::new());
    let key = admin.bootstrap_admin_key("bench").await.unwrap();
    let caller = admin.authenticate(Some(&key.secret)).await.unwrap();
    for env in ["development", "production"] {
        admin
            .create_environment(
                &caller,
                &Environment {
                    name: env.into(),
                    environment_type: env.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    admin
        .create_project(
            &caller,
            &Project {
                id: "big".into(),
                name: "Big".into(),
                environments: vec!["development".into(), "production".into()],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    for i in 0..feature_count() {
        admin
            .create_feature(
                &caller,
                "big",
                &NewFeature {
                    name: format!("feature-{i:05}"),
                    description: Some(format!("the feature number {i}")),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }
    let patch = toggle_admin::variants::decode_patch(&serde_json::json!([
        { "op": "add", "path": "/-", "value": { "name": "a", "weight": 0, "payload": { "type": "json", "value": "{\"x\":1}" } } },
        { "op": "add", "path": "/-", "value": { "name": "b", "weight": 0 } },
        { "op": "add", "path": "/-", "value": { "name": "c", "weight": 100, "weightType": "fix" } },
        { "op": "add", "path": "/-", "value": { "name": "d", "weight": 0, "overrides": [{ "contextName": "userId", "values": ["1", "2"] }] } },
        { "op": "add", "path": "/-", "value": { "name": "e", "weight": 0, "stickiness": "userId" } },
    ]))
    .unwrap();
    admin
        .patch_variants(&caller, "big", "feature-00042", "production", &patch)
        .await
        .unwrap();
    let app = toggle_admin::ui::router(admin.clone());
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::POST)
                .uri("/admin/sign-in")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(format!("key={}", key.secret)))
                .unwrap(),
        )
        .await
        .unwrap();
    let cookie = response.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    Setup {
        admin,
        caller,
        app,
        cookie,
    }
}

async fn page(app: &Router, cookie: &str, path: &str) -> usize {
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .uri(path)
                .header(header::COOKIE, cookie)
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .len()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let setup = runtime.block_on(setup());
    // A reference, copied into each iteration's future.
    let s = &setup;
    let mut group = c.benchmark_group(format!("ui_pages/{}_features", feature_count()));
    group.bench_function("features_page_1", |b| {
        b.to_async(&runtime)
            .iter(|| async move { black_box(page(&s.app, &s.cookie, "/admin/projects/big").await) })
    });
    group.bench_function("features_page_100", |b| {
        b.to_async(&runtime).iter(|| async move {
            black_box(page(&s.app, &s.cookie, "/admin/projects/big?page=100").await)
        })
    });
    group.bench_function("features_search", |b| {
        b.to_async(&runtime).iter(|| async move {
            black_box(page(&s.app, &s.cookie, "/admin/projects/big?q=number%20999").await)
        })
    });
    group.bench_function("baseline_facade_feature_list", |b| {
        b.to_async(&runtime).iter(|| async move {
            black_box(
                s.admin
                    .feature_list(
                        &s.caller,
                        "big",
                        &FeatureListQuery {
                            search: None,
                            offset: 0,
                            limit: 50,
                        },
                    )
                    .await
                    .unwrap(),
            )
        })
    });
    let variants = "/admin/projects/big/features/feature-00042/environments/production/variants";
    group.bench_function("variants_page", |b| {
        b.to_async(&runtime)
            .iter(|| async move { black_box(page(&s.app, &s.cookie, variants).await) })
    });
    group.bench_function("baseline_facade_variants", |b| {
        b.to_async(&runtime).iter(|| async move {
            black_box(
                s.admin
                    .variants(&s.caller, "big", "feature-00042", "production")
                    .await
                    .unwrap(),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
