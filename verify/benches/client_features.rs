//! `GET /api/client/features` with 1,000 features (a rollout with a constraint, an
//! environment with 2 variants each) through the router over a MemoryStore: the cached 200
//! path, the 304 path (`If-None-Match`), and the document built afresh (a new facade over the
//! same store, so nothing is cached). See BENCHMARKS.md.

use axum::body::Body;
use axum::http::{Request, header};
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::BodyExt;
use toggle_admin::{KeyAccess, ToggleAdmin};
use tower::ServiceExt;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (admin, secret) = runtime.block_on(test_support::rollouts::admin_with_rollouts(
        1_000,
        "sdk",
        KeyAccess::client(vec![], "production"),
    ));
    let app = toggle_admin::http::router(admin.clone());
    let get = |app: axum::Router, etag: Option<String>| {
        let secret = secret.clone();
        async move {
            let mut request = Request::get("/api/client/features")
                .header(header::AUTHORIZATION, secret)
                .header("unleash-client-spec", "5.2.0");
            if let Some(etag) = etag {
                request = request.header(header::IF_NONE_MATCH, etag);
            }
            let response = app
                .oneshot(request.body(Body::empty()).unwrap())
                .await
                .unwrap();
            let etag = response.headers()[header::ETAG]
                .to_str()
                .unwrap()
                .to_owned();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            (etag, bytes.len())
        }
    };
    let (etag, size) = runtime.block_on(get(app.clone(), None));
    assert!(size > 100_000, "{size}");
    let mut group = c.benchmark_group("client_features_1000");
    group.bench_function("200 cached", |b| {
        b.to_async(&runtime).iter(|| get(app.clone(), None))
    });
    group.bench_function("304", |b| {
        b.to_async(&runtime)
            .iter(|| get(app.clone(), Some(etag.clone())))
    });
    group.bench_function("200 built afresh", |b| {
        b.to_async(&runtime).iter(|| {
            let fresh = toggle_admin::http::router(ToggleAdmin::from_arc(admin.store().clone()));
            get(fresh, None)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
