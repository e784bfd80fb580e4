//! A NUL (U+0000) in any text an operation would store is refused with a 400 naming where it
//! is, and nothing is written, on every store: through the router and through the facade, for
//! a context field's legal value, a project's name, a feature's description, a variant's
//! payload and an import document. (PostgreSQL cannot store a NUL; the other stores could.)

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toggle_admin::model::NewFeature;
use toggle_admin::model::{ContextField, Project};
use toggle_admin::store::{FileStore, Store};
use toggle_admin::{MemoryStore, ToggleAdmin};

use test_support::http::{Setup, setup_on};
use test_support::store::TempDir;

const VARIANTS: &str = "/api/admin/projects/p/features/f/environments/production/variants";

/// The revision and the number of events: what a refused request must leave alone.
async fn state(store: &dyn Store) -> (u64, usize) {
    let revision = store.revision().await.unwrap().0;
    let events = store.events(0, usize::MAX).await.unwrap().len();
    (revision, events)
}

/// An Unleash 6.10.1 export whose first feature's description holds a NUL.
fn import_document() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/unleash-6.10.1/export-two-features.json"
    );
    let mut data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    data["features"][0]["description"] = json!("imported\u{0}");
    json!({"project": "p", "environment": "development", "data": data})
}

/// Every request below is refused with a 400 whose details name the text's path, and the
/// store is left as it was.
async fn refused_over_http(t: &Setup, store: &dyn Store) {
    let cases: [(Method, &str, Value, &str); 6] = [
        (
            Method::POST,
            "/api/admin/context",
            json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "u\u{0}s"}]}),
            "legalValues[1].value",
        ),
        (
            Method::POST,
            "/api/admin/projects",
            json!({"id": "q", "name": "Q\u{0}"}),
            "name",
        ),
        (
            Method::POST,
            "/api/admin/projects/p/features",
            json!({"name": "described", "description": "a\u{0}b"}),
            "description",
        ),
        (
            Method::PATCH,
            VARIANTS,
            json!([{"op": "add", "path": "/-", "value": {"name": "blue", "weight": 0,
                "weightType": "variable", "stickiness": "default",
                "payload": {"type": "string", "value": "nul\u{0}"}}}]),
            "payload",
        ),
        (
            Method::POST,
            "/api/admin/features-batch/import",
            import_document(),
            "description",
        ),
        (
            Method::POST,
            "/api/admin/tag-types",
            json!({"name": "team", "description": "\u{0}"}),
            "description",
        ),
    ];
    for (method, path, body, field) in cases {
        let before = state(store).await;
        let r = t.call(method.clone(), path, Some(&body)).await;
        let error = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        let paths: Vec<&str> = error["details"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|detail| detail["path"].as_str())
            .collect();
        assert!(
            paths.iter().any(|p| p.contains(field)),
            "{method} {path}: no detail names {field}: {error}"
        );
        assert_eq!(
            state(store).await,
            before,
            "{method} {path} wrote something"
        );
    }
}

/// The same through the facade: a context field and a project.
async fn refused_by_the_facade(t: &Setup, store: &dyn Store) {
    let before = state(store).await;
    let field: ContextField =
        serde_json::from_value(json!({"name": "region", "legalValues": [{"value": "eu\u{0}"}]}))
            .unwrap();
    let error = t
        .admin
        .create_context_field(&t.caller, &field)
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400, "{error}");
    assert!(
        error
            .details()
            .iter()
            .any(|d| d.path.as_deref() == Some("legalValues[0].value")),
        "{error:?}"
    );
    let project = Project {
        id: "q".into(),
        name: "Q".into(),
        description: Some("\u{0}".into()),
        ..Default::default()
    };
    let error = t
        .admin
        .create_project(&t.caller, &project)
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400, "{error}");
    let feature = NewFeature {
        name: "described".into(),
        description: Some("x\u{0}".into()),
        ..Default::default()
    };
    let error = t
        .admin
        .create_feature(&t.caller, "p", &feature)
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400, "{error}");
    assert_eq!(state(store).await, before);
    // Text without a NUL, even an escaped-looking one, is stored as ever.
    let feature = NewFeature {
        name: "plain".into(),
        description: Some("C:\\u0000 is not a NUL".into()),
        ..Default::default()
    };
    t.admin
        .create_feature(&t.caller, "p", &feature)
        .await
        .unwrap();
}

async fn refused_on(store: Arc<dyn Store>) {
    let t = setup_on(ToggleAdmin::from_arc(store.clone())).await;
    refused_over_http(&t, store.as_ref()).await;
    refused_by_the_facade(&t, store.as_ref()).await;
}

#[tokio::test]
async fn a_nul_is_refused_on_a_memory_store() {
    refused_on(Arc::new(MemoryStore::new())).await;
}

#[tokio::test]
async fn a_nul_is_refused_on_a_file_store() {
    let dir = TempDir::new("nul");
    refused_on(Arc::new(FileStore::open(dir.path()).unwrap())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn a_nul_is_refused_on_a_postgres_store() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    refused_on(Arc::new(schema.connect(4).await)).await;
}
