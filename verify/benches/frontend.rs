//! The frontend API's evaluation: 1,000 flags (the client benchmark's data: a rollout with a
//! constraint on `userId`, two environment variants each) evaluated for one context by
//! `ToggleAdmin::frontend_features` (unleash-yggdrasil over the cached engine), and the same
//! through the router (`GET /api/frontend`, the answer serialised). A new `userId` on every
//! iteration. See BENCHMARKS.md.

use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{Request, header};
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::BodyExt;
use toggle_admin::KeyAccess;
use toggle_admin::unleash_types::client_features::Context;
use tower::ServiceExt;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (admin, secret) = runtime.block_on(test_support::rollouts::admin_with_rollouts(
        1_000,
        "web",
        KeyAccess::frontend(vec![], "production"),
    ));
    let caller = runtime.block_on(admin.authenticate(Some(&secret))).unwrap();
    let user = AtomicU64::new(0);
    let context = || Context {
        user_id: Some(user.fetch_add(1, Ordering::Relaxed).to_string()),
        app_name: Some("web".into()),
        ..Context::default()
    };
    let all = runtime
        .block_on(admin.frontend_features(&caller, &context(), true))
        .unwrap();
    assert_eq!(all.toggles.len(), 1_000);
    let app = toggle_admin::http::router(admin.clone());
    let mut group = c.benchmark_group("frontend_1000");
    group.bench_function("evaluate all, one context", |b| {
        b.to_async(&runtime).iter(|| async {
            let context = context();
            admin.frontend_features(&caller, &context, true).await
        })
    });
    group.bench_function("evaluate enabled, one context", |b| {
        b.to_async(&runtime).iter(|| async {
            let context = context();
            admin.frontend_features(&caller, &context, false).await
        })
    });
    group.bench_function("GET /api/frontend", |b| {
        b.to_async(&runtime).iter(|| {
            let request = Request::get(format!(
                "/api/frontend?appName=web&userId={}",
                user.fetch_add(1, Ordering::Relaxed)
            ))
            .header(header::AUTHORIZATION, secret.clone())
            .body(Body::empty())
            .unwrap();
            let app = app.clone();
            async move {
                let response = app.oneshot(request).await.unwrap();
                response
                    .into_body()
                    .collect()
                    .await
                    .unwrap()
                    .to_bytes()
                    .len()
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
