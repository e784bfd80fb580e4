//! OpenFeature's Rust OFREP provider (`open-feature-ofrep`) against the server over a
//! socket: boolean, string, number and object evaluations with their details, a missing
//! flag, a type mismatch and a flag out of the key's scope.

use std::time::Duration;

use axum::http::Method;
use open_feature::provider::FeatureProvider;
use open_feature::{EvaluationContext, EvaluationErrorCode};
use open_feature_ofrep::{OfrepOptions, OfrepProvider};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::json;
use test_support::http::*;
use toggle_admin::http::RouterConfig;

#[tokio::test(flavor = "multi_thread")]
async fn ofrep_the_rust_provider_reads_what_the_mapping_says() {
    let t = setup().await;
    let strategies = |p: &str, f: &str| {
        format!("/api/admin/projects/{p}/features/{f}/environments/production/strategies")
    };
    for (name, payload) in [
        ("on", None),
        ("text", Some(("string", "hello"))),
        ("int", Some(("number", "42"))),
        ("float", Some(("number", "2.5"))),
        ("object", Some(("json", "{\"a\": 1}"))),
    ] {
        let r = t
            .call(
                Method::POST,
                "/api/admin/projects/p/features",
                Some(&json!({"name": name})),
            )
            .await;
        assert!(r.status.is_success(), "{}", r.text());
        let mut strategy = json!({"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "default", "groupId": name},
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["u1"]}]});
        if let Some((kind, value)) = payload {
            strategy["variants"] = json!([{"name": "v", "weight": 1000, "weightType": "variable",
                "stickiness": "default", "payload": {"type": kind, "value": value}}]);
        }
        t.call(Method::POST, &strategies("p", name), Some(&strategy))
            .await;
        t.call(
            Method::POST,
            &format!("/api/admin/projects/p/features/{name}/environments/production/on"),
            None,
        )
        .await;
    }
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(
                &json!({"tokenName": "rust", "type": "client", "environment": "production",
                         "projects": ["p"]}),
            ),
        )
        .await;
    let key = r.json()["secret"].as_str().unwrap().to_owned();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(
        RouterConfig::new().serve(t.admin.clone(), listener, async move {
            let _ = stopped.await;
        }),
    );
    let mut headers = HeaderMap::new();
    headers.insert("authorization", HeaderValue::from_str(&key).unwrap());
    let provider = OfrepProvider::new(OfrepOptions {
        base_url: format!("http://{addr}"),
        headers,
        connect_timeout: Duration::from_secs(5),
        ..Default::default()
    })
    .await
    .unwrap();
    let user = EvaluationContext::default().with_targeting_key("u1");
    let other = EvaluationContext::default().with_targeting_key("u2");

    let on = provider.resolve_bool_value("on", &user).await.unwrap();
    assert!(on.value);
    assert_eq!(on.variant.as_deref(), Some("enabled"));
    let off = provider.resolve_bool_value("on", &other).await.unwrap();
    assert!(!off.value);
    assert_eq!(off.variant.as_deref(), Some("disabled"));
    let text = provider.resolve_string_value("text", &user).await.unwrap();
    assert_eq!(
        (text.value.as_str(), text.variant.as_deref()),
        ("hello", Some("v"))
    );
    assert_eq!(
        provider
            .resolve_int_value("int", &user)
            .await
            .unwrap()
            .value,
        42
    );
    assert_eq!(
        provider
            .resolve_float_value("float", &user)
            .await
            .unwrap()
            .value,
        2.5
    );
    let object = provider
        .resolve_struct_value("object", &user)
        .await
        .unwrap();
    assert!(object.value.fields.contains_key("a"), "{:?}", object.value);
    // A missing flag, and one of project `other` (out of the key's scope): FLAG_NOT_FOUND.
    for name in ["missing", "g"] {
        let error = provider.resolve_bool_value(name, &user).await.unwrap_err();
        assert_eq!(error.code, EvaluationErrorCode::FlagNotFound, "{name}");
    }
    // A string asked for as a number: the provider's type mismatch (it says ParseError).
    let error = provider.resolve_int_value("text", &user).await.unwrap_err();
    assert_eq!(error.code, EvaluationErrorCode::ParseError);
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}
