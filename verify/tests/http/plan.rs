//! Flags as code through the router, on every store: `POST /api/admin/features-batch/plan`
//! says what an import would do and writes nothing; an export plans as unchanged against
//! its server; an edited document plans as exactly its edits, with old and new values, and
//! as unchanged once applied; an edit made through the API appears in the next plan;
//! `?mode=create-missing` never touches an existing flag; an import that changes nothing
//! writes nothing.

use std::sync::Arc;

use axum::http::{Method, StatusCode, header};
use serde_json::{Value, json};
use test_support::http::{Reply, Setup, setup_on};
use test_support::store::TempDir;
use toggle_admin::store::{FileStore, Store};
use toggle_admin::{MemoryStore, ToggleAdmin};

const IMPORT: &str = "/api/admin/features-batch/import";
const PLAN: &str = "/api/admin/features-batch/plan";
const EXPORT: &str = "/api/admin/features-batch/export";
const ENV: &str = "/api/admin/projects/p/features/checkout/environments/development";

/// What a request that writes nothing leaves alone: the revision, the number of events, and
/// the client API's ETag.
#[derive(Debug, PartialEq)]
struct Written {
    revision: u64,
    events: usize,
    etag: String,
}

async fn written(t: &Setup, store: &dyn Store, client_key: &str) -> Written {
    let r = t
        .call_as(client_key, Method::GET, "/api/client/features", None)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    Written {
        revision: store.revision().await.unwrap().0,
        events: store.events(0, usize::MAX).await.unwrap().len(),
        etag: r
            .headers
            .get(header::ETAG)
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned(),
    }
}

fn ok(r: &Reply, what: &str) {
    assert!(r.status.is_success(), "{what}: {} {}", r.status, r.text());
}

/// `checkout` in `p`, configured through the API in `development`: three strategies of which
/// the middle one is deleted (sort orders 0 and 2), constraints, two variable variants, a tag,
/// enabled.
async fn configure(t: &Setup) {
    ok(
        &t.call(
            Method::POST,
            "/api/admin/projects/p/features",
            Some(&json!({"name": "checkout", "type": "release", "description": "Pay"})),
        )
        .await,
        "create",
    );
    let mut ids = Vec::new();
    for (rollout, constraints) in [
        (
            "50",
            json!([
                {"contextName": "userId", "operator": "IN", "values": ["1", "2"]},
                {"contextName": "appName", "operator": "IN", "values": ["web"]}
            ]),
        ),
        ("10", json!([])),
        ("25", json!([])),
    ] {
        let body = json!({
            "name": "flexibleRollout",
            "parameters": {"rollout": rollout, "stickiness": "default", "groupId": "checkout"},
            "constraints": constraints
        });
        let r = t
            .call(Method::POST, &format!("{ENV}/strategies"), Some(&body))
            .await;
        ok(&r, "strategy");
        ids.push(r.json()["id"].as_str().unwrap().to_owned());
    }
    ok(
        &t.call(
            Method::DELETE,
            &format!("{ENV}/strategies/{}", ids[1]),
            None,
        )
        .await,
        "delete strategy",
    );
    let variants = json!([
        {"name": "blue", "weight": 0, "weightType": "variable", "stickiness": "default"},
        {"name": "green", "weight": 0, "weightType": "variable", "stickiness": "default"}
    ]);
    ok(
        &t.call(Method::PUT, &format!("{ENV}/variants"), Some(&variants))
            .await,
        "variants",
    );
    ok(
        &t.call(
            Method::POST,
            "/api/admin/features/checkout/tags",
            Some(&json!({"value": "team-pay", "type": "simple"})),
        )
        .await,
        "tag",
    );
    ok(
        &t.call(Method::POST, &format!("{ENV}/on"), None).await,
        "on",
    );
}

async fn export(t: &Setup) -> Value {
    let r = t
        .call(
            Method::POST,
            EXPORT,
            Some(&json!({"environment": "development", "project": "p"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    json!({"project": "p", "environment": "development", "data": r.json()})
}

async fn plan(t: &Setup, body: &Value, mode: &str) -> Value {
    let r = t
        .call(Method::POST, &format!("{PLAN}{mode}"), Some(body))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    r.json()
}

/// `(name, action)` of every feature of a plan.
fn actions(plan: &Value) -> Vec<(String, String)> {
    plan["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["name"].as_str().unwrap().to_owned(),
                f["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn all(plan: &Value, action: &str) -> bool {
    actions(plan).iter().all(|(_, a)| a == action)
}

fn changes<'a>(plan: &'a Value, feature: &str) -> &'a Vec<Value> {
    plan["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == feature)
        .unwrap_or_else(|| panic!("{feature} not in {plan}"))["changes"]
        .as_array()
        .unwrap()
}

async fn scenario(t: &Setup, store: &dyn Store) {
    configure(t).await;
    let r = t
        .call(
            Method::POST,
            "/api/admin/api-tokens",
            Some(&json!({"tokenName": "sdk", "type": "client", "projects": ["*"], "environment": "development"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    let client = r.json()["secret"].as_str().unwrap().to_owned();

    // Round trip: the export plans as unchanged, and planning writes nothing.
    let document = export(t).await;
    let before = written(t, store, &client).await;
    let first = plan(t, &document, "").await;
    assert_eq!(first["mode"], "replace");
    assert_eq!(
        actions(&first),
        [
            ("checkout".to_owned(), "unchanged".to_owned()),
            ("f".to_owned(), "unchanged".to_owned())
        ],
        "{first:#}"
    );
    assert!(changes(&first, "checkout").is_empty());
    assert_eq!(first["contextFields"], json!([]));
    assert_eq!(first["tagTypes"], json!([]));
    assert_eq!(
        written(t, store, &client).await,
        before,
        "a plan writes nothing"
    );
    // Importing it changes nothing, so it writes nothing: no event, no revision.
    ok(
        &t.call(Method::POST, IMPORT, Some(&document)).await,
        "import",
    );
    assert_eq!(written(t, store, &client).await, before, "a no-op import");

    // Edits: a weight, a new strategy, a removed constraint, a new flag.
    let mut edited = document.clone();
    let data = &mut edited["data"];
    let variants = data["featureEnvironments"][0]["variants"]
        .as_array_mut()
        .unwrap();
    assert_eq!(variants[0]["name"], "blue");
    variants[0]["weight"] = json!(300);
    variants[0]["weightType"] = json!("fix");
    let strategies = data["featureStrategies"].as_array_mut().unwrap();
    assert_eq!(strategies[0]["featureName"], "checkout");
    let removed = strategies[0]["constraints"]
        .as_array_mut()
        .unwrap()
        .remove(1);
    assert_eq!(removed["contextName"], "appName");
    strategies.push(json!({
        "name": "default", "featureName": "checkout", "parameters": {},
        "constraints": [{"contextName": "environment", "operator": "IN", "values": ["eu"]}]
    }));
    data["features"].as_array_mut().unwrap().push(json!({
        "name": "search", "type": "experiment", "project": "p"
    }));
    data["featureEnvironments"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "search", "featureName": "search", "enabled": false}));
    let planned = plan(t, &edited, "?mode=replace").await;
    assert_eq!(
        actions(&planned),
        [
            ("checkout".to_owned(), "update".to_owned()),
            ("f".to_owned(), "unchanged".to_owned()),
            ("search".to_owned(), "create".to_owned())
        ],
        "{planned:#}"
    );
    let checkout = changes(&planned, "checkout");
    let paths: Vec<&str> = checkout
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/strategies/0/constraints/1",
            "/strategies/2",
            "/variants/0/weight",
            "/variants/0/weightType",
            "/variants/1/weight",
        ],
        "{planned:#}"
    );
    // Old and new values; a removed value has no `to`, an added one no `from`.
    assert_eq!(checkout[0]["from"]["contextName"], "appName");
    assert!(checkout[0].get("to").is_none(), "{:#}", checkout[0]);
    assert!(checkout[1].get("from").is_none(), "{:#}", checkout[1]);
    assert_eq!(checkout[1]["to"]["name"], "default");
    assert_eq!(checkout[1]["to"]["constraints"][0]["values"], json!(["eu"]));
    assert_eq!(
        (&checkout[2]["from"], &checkout[2]["to"]),
        (&json!(500), &json!(300))
    );
    assert_eq!(
        (&checkout[3]["from"], &checkout[3]["to"]),
        (&json!("variable"), &json!("fix"))
    );
    assert_eq!(
        (&checkout[4]["from"], &checkout[4]["to"]),
        (&json!(500), &json!(700)),
        "the variable variant takes what the fixed one leaves"
    );
    let search = changes(&planned, "search");
    assert!(
        search
            .iter()
            .any(|c| c["path"] == "/type" && c["to"] == "experiment"),
        "{search:#?}"
    );
    assert!(search.iter().all(|c| c.get("from").is_none()));
    assert_eq!(
        written(t, store, &client).await,
        before,
        "a plan of changes writes nothing"
    );

    // Apply, then plan again: unchanged.
    ok(&t.call(Method::POST, IMPORT, Some(&edited)).await, "apply");
    let applied = written(t, store, &client).await;
    assert!(applied.revision > before.revision && applied.events > before.events);
    let again = plan(t, &edited, "").await;
    assert!(all(&again, "unchanged"), "{again:#}");
    ok(
        &t.call(Method::POST, IMPORT, Some(&edited)).await,
        "re-apply",
    );
    assert_eq!(
        written(t, store, &client).await,
        applied,
        "applying an applied document writes nothing"
    );

    // Drift: an edit through the API shows in the next plan as an update.
    ok(
        &t.call(Method::POST, &format!("{ENV}/off"), None).await,
        "off",
    );
    let r = t
        .call(Method::GET, &format!("{ENV}/strategies"), None)
        .await;
    let first_strategy = r.json()[0]["id"].as_str().unwrap().to_owned();
    let mut strategy = r.json()[0].clone();
    strategy["parameters"]["rollout"] = json!("75");
    ok(
        &t.call(
            Method::PUT,
            &format!("{ENV}/strategies/{first_strategy}"),
            Some(&strategy),
        )
        .await,
        "edit strategy",
    );
    let drifted = plan(t, &edited, "").await;
    assert_eq!(
        actions(&drifted)[0],
        ("checkout".to_owned(), "update".to_owned())
    );
    let drift = changes(&drifted, "checkout");
    assert!(
        drift.iter().any(|c| c["path"] == "/enabled"
            && c["from"] == json!(false)
            && c["to"] == json!(true)),
        "{drift:#?}"
    );
    assert!(
        drift
            .iter()
            .any(|c| c["path"] == "/strategies/0/parameters/rollout"
                && c["from"] == "75"
                && c["to"] == "50"),
        "{drift:#?}"
    );

    // create-missing never touches an existing flag: the drift stays, nothing is written.
    let state = written(t, store, &client).await;
    let planned = plan(t, &edited, "?mode=create-missing").await;
    assert_eq!(planned["mode"], "create-missing");
    for (name, action) in actions(&planned) {
        assert_eq!(action, "skip", "{name}");
    }
    assert_eq!(planned["features"][0]["reason"], "exists");
    ok(
        &t.call(
            Method::POST,
            &format!("{IMPORT}?mode=create-missing"),
            Some(&edited),
        )
        .await,
        "create-missing",
    );
    assert_eq!(written(t, store, &client).await, state);
    // With a new flag: only that flag is written.
    let mut more = edited.clone();
    more["data"]["features"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "wishlist"}));
    let planned = plan(t, &more, "?mode=create-missing").await;
    assert_eq!(
        actions(&planned).last().unwrap(),
        &("wishlist".to_owned(), "create".to_owned())
    );
    ok(
        &t.call(
            Method::POST,
            &format!("{IMPORT}?mode=create-missing"),
            Some(&more),
        )
        .await,
        "create-missing with a new flag",
    );
    let events = store.events(0, usize::MAX).await.unwrap();
    let events = &events[state.events..];
    assert!(!events.is_empty());
    for event in events {
        assert!(
            event
                .event
                .feature_name
                .as_deref()
                .is_none_or(|f| f == "wishlist"),
            "{event:?}"
        );
    }
    assert!(plan(t, &more, "").await["features"][0]["action"] == "update");

    // replace leaves no difference.
    ok(&t.call(Method::POST, IMPORT, Some(&more)).await, "replace");
    let after = plan(t, &more, "").await;
    assert!(all(&after, "unchanged"), "{after:#}");
    let exported = export(t).await;
    let exported = plan(t, &exported, "").await;
    assert!(all(&exported, "unchanged"), "{exported:#}");
}

/// A bad body is the import's 400 naming every problem; a bad mode a 400 naming `mode`.
async fn refusals(t: &Setup, store: &dyn Store) {
    let revision = store.revision().await.unwrap();
    let bad = json!({
        "project": "p", "environment": "development",
        "data": {"features": [{"name": "ok"}, {"name": 7}], "featureStrategies": [{"name": "nope", "featureName": "ok"}], "tagTypes": []}
    });
    let from_import = t.call(Method::POST, IMPORT, Some(&bad)).await;
    let from_plan = t.call(Method::POST, PLAN, Some(&bad)).await;
    let import_body = from_import.error(StatusCode::BAD_REQUEST, "ValidationError");
    let plan_body = from_plan.error(StatusCode::BAD_REQUEST, "ValidationError");
    assert_eq!(plan_body["details"], import_body["details"]);
    assert_eq!(plan_body["message"], import_body["message"]);
    assert!(
        plan_body["details"].as_array().unwrap().len() >= 2,
        "{plan_body}"
    );
    for path in [IMPORT, PLAN] {
        let r = t
            .call(
                Method::POST,
                &format!("{path}?mode=merge"),
                Some(&export(t).await),
            )
            .await;
        let body = r.error(StatusCode::BAD_REQUEST, "ValidationError");
        assert_eq!(body["details"][0]["path"], "mode", "{body}");
    }
    assert_eq!(store.revision().await.unwrap(), revision);
}

async fn run_on(store: Arc<dyn Store>) {
    let t = setup_on(ToggleAdmin::from_arc(store.clone())).await;
    scenario(&t, store.as_ref()).await;
    refusals(&t, store.as_ref()).await;
}

#[tokio::test]
async fn plan_and_apply_on_a_memory_store() {
    run_on(Arc::new(MemoryStore::new())).await;
}

#[tokio::test]
async fn plan_and_apply_on_a_file_store() {
    let dir = TempDir::new("plan");
    run_on(Arc::new(FileStore::open(dir.path()).unwrap())).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn plan_and_apply_on_a_postgres_store() {
    let Some(url) = test_support::postgres::database_url() else {
        return;
    };
    let schema = test_support::postgres::TestSchema::new(&url);
    run_on(Arc::new(schema.connect(4).await)).await;
}
