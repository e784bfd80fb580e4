//! `patch_variants` through the public API on MemoryStore: weights, order, strictness,
//! validation, existence, auth, concurrency.

use proptest::prelude::*;
use serde_json::{Value, json};
use test_support::facade::{add_variants, all_events, patch, patch_f, setup, weights};
use test_support::wrapped::{Behaviour, Wrapped};
use toggle_admin::model::{Variant, WeightType};
use toggle_admin::{Error, Grant, KeyAccess, Permission, Store, ToggleAdmin};

/// Variants to add, `(name, weightType, weight)`, and the expected `(name, weight)` result.
type WeightCase = (
    Vec<(&'static str, &'static str, u32)>,
    Vec<(&'static str, u32)>,
);

fn named(pairs: &[(&str, u32)]) -> Vec<(String, u32)> {
    pairs.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

fn status(result: Result<impl std::fmt::Debug, Error>) -> u16 {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.status(),
    }
}

#[tokio::test]
async fn weight_table_matches_unleash() {
    let cases: Vec<WeightCase> = vec![
        (
            vec![
                ("c", "variable", 0),
                ("a", "variable", 0),
                ("b", "variable", 0),
            ],
            vec![("a", 333), ("b", 333), ("c", 334)],
        ),
        (
            vec![
                ("fixed", "fix", 900),
                ("variant2", "variable", 0),
                ("variant3", "variable", 0),
                ("variant4", "variable", 0),
                ("variant5", "variable", 0),
                ("variant6", "variable", 0),
                ("variant7", "variable", 0),
            ],
            vec![
                ("fixed", 900),
                ("variant2", 17),
                ("variant3", 17),
                ("variant4", 17),
                ("variant5", 17),
                ("variant6", 16),
                ("variant7", 16),
            ],
        ),
        (
            ["a", "b", "c", "d", "e", "f", "g"]
                .iter()
                .map(|n| (*n, "variable", 0))
                .collect(),
            vec![
                ("a", 143),
                ("b", 143),
                ("c", 143),
                ("d", 143),
                ("e", 143),
                ("f", 143),
                ("g", 142),
            ],
        ),
        (
            vec![
                ("x", "fix", 999),
                ("a", "variable", 0),
                ("b", "variable", 0),
                ("c", "variable", 0),
            ],
            vec![("a", 1), ("b", 0), ("c", 0), ("x", 999)],
        ),
        (
            vec![("x", "fix", 1000), ("a", "variable", 7)],
            vec![("a", 0), ("x", 1000)],
        ),
    ];
    for (input, expected) in cases {
        let (admin, caller) = setup().await;
        let result = add_variants(&admin, &caller, &input).await.unwrap();
        assert_eq!(weights(&result), named(&expected), "input {input:?}");
        assert_eq!(result.version, 1);
        // What was returned is what is stored.
        let stored = admin
            .variants(&caller, "p", "f", "production")
            .await
            .unwrap();
        assert_eq!(stored, result);
    }
}

#[tokio::test]
async fn fixed_weights_over_1000_and_all_fixed_are_rejected() {
    let (admin, caller) = setup().await;
    let err = add_variants(&admin, &caller, &[("x", "fix", 1001), ("a", "variable", 0)])
        .await
        .unwrap_err();
    assert_eq!(err.status(), 400, "{err}");
    let err = add_variants(&admin, &caller, &[("x", "fix", 500), ("y", "fix", 500)])
        .await
        .unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(
        err.to_string()
            .contains(r#"There must be at least one "variable" variant"#),
        "{err}"
    );
    assert!(
        admin
            .variants(&caller, "p", "f", "production")
            .await
            .unwrap()
            .variants
            .is_empty()
    );
}

#[tokio::test]
async fn names_come_back_in_unleash_order() {
    let (admin, caller) = setup().await;
    let names = ["Z", "b", "a9", "a10", "a.b", "a-b", "A", "1", "_x", "B"];
    let input: Vec<_> = names.iter().map(|n| (*n, "variable", 0)).collect();
    let result = add_variants(&admin, &caller, &input).await.unwrap();
    let got: Vec<_> = result.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        got,
        ["_x", "1", "A", "a-b", "a.b", "a10", "a9", "b", "B", "Z"]
    );
}

#[tokio::test]
async fn defaults_are_filled_in() {
    let (admin, caller) = setup().await;
    let result = patch_f(
        &admin,
        &caller,
        json!([{"op": "add", "path": "/0", "value": {"name": "v", "weight": 5}}]),
    )
    .await
    .unwrap();
    assert_eq!(
        result.variants,
        vec![Variant {
            name: "v".into(),
            weight: 1000,
            weight_type: Some(WeightType::Variable),
            stickiness: Some("default".into()),
            payload: None,
            overrides: None,
        }]
    );
}

#[tokio::test]
async fn strict_patches_fail_naming_the_op_and_change_nothing() {
    let (admin, caller) = setup().await;
    add_variants(&admin, &caller, &[("one", "variable", 0)])
        .await
        .unwrap();
    let before_variants = admin
        .variants(&caller, "p", "f", "production")
        .await
        .unwrap();
    let before_events = all_events(&admin, &caller).await;
    let cases = [
        json!([{"op": "add", "path": "/5", "value": {"name": "x", "weight": 1}}]),
        json!([{"op": "remove", "path": "/3"}]),
        json!([{"op": "replace", "path": "/0/nope", "value": 1}]),
        json!([{"op": "add", "path": "/abc", "value": {"name": "x", "weight": 1}}]),
        json!([{"op": "replace", "path": "/0/weight", "value": 1}, {"op": "replace", "path": "/7/weight", "value": 1}]),
    ];
    for (i, ops) in cases.iter().enumerate() {
        let err = patch_f(&admin, &caller, ops.clone()).await.unwrap_err();
        assert_eq!(err.status(), 400, "case {i}: {err}");
        assert!(
            err.to_string()
                .starts_with("Could not apply provided patch"),
            "case {i}: {err}"
        );
        let failing = ops.as_array().unwrap().len() - 1;
        assert!(
            err.details()
                .iter()
                .any(|d| d.path.as_deref() == Some(&format!("/{failing}"))),
            "case {i}: the error must name op {failing}: {:?}",
            err.details()
        );
    }
    // `test` and a path without a leading slash are refused when the body is decoded.
    for body in [
        json!([{"op": "test", "path": "/0/name", "value": "one"}]),
        json!([{"op": "replace", "path": "0/weight", "value": 1}]),
    ] {
        let err = toggle_admin::variants::decode_patch(&body).unwrap_err();
        assert_eq!(err.status(), 400);
        assert!(
            err.details()
                .iter()
                .any(|d| d.path.as_deref().is_some_and(|p| p.starts_with("/0"))),
            "{err:?}"
        );
    }
    assert_eq!(
        admin
            .variants(&caller, "p", "f", "production")
            .await
            .unwrap(),
        before_variants
    );
    assert_eq!(all_events(&admin, &caller).await, before_events);
}

#[tokio::test]
async fn invalid_results_are_rejected_with_paths() {
    let (admin, caller) = setup().await;
    add_variants(&admin, &caller, &[("one", "variable", 0)])
        .await
        .unwrap();
    let before_events = all_events(&admin, &caller).await.len();
    let cases: Vec<(Value, &str)> = vec![
        (json!({"name": "x", "weight": 1001}), "/1/weight"),
        (json!({"name": "x", "weight": -1}), "/1/weight"),
        (json!({"name": "x", "weight": 10.5}), "/1/weight"),
        (json!({"name": "x", "weight": "100"}), "/1/weight"),
        (json!({"name": "", "weight": 1}), "/1/name"),
        (json!({"name": "a".repeat(101), "weight": 1}), "/1/name"),
        (json!({"name": "a b", "weight": 1}), "/1/name"),
        (json!({"name": "one", "weight": 1}), "/1/name"),
        (
            json!({"name": "x", "weight": 1, "payload": {"type": "xml", "value": "<a/>"}}),
            "/1/payload/type",
        ),
        (
            json!({"name": "x", "weight": 1, "payload": {"type": "json", "value": "{x"}}),
            "/1/payload/value",
        ),
        (
            json!({"name": "x", "weight": 1, "payload": {"type": "number", "value": "abc"}}),
            "/1/payload/value",
        ),
        (
            json!({"name": "x", "weight": 1, "color": "red"}),
            "/1/color",
        ),
    ];
    for (variant, path) in cases {
        let err = patch_f(
            &admin,
            &caller,
            json!([{"op": "add", "path": "/-", "value": variant}]),
        )
        .await
        .unwrap_err();
        assert_eq!(err.status(), 400, "{variant}: {err}");
        assert!(
            err.details()
                .iter()
                .any(|d| d.path.as_deref() == Some(path)),
            "{variant}: expected a problem at {path}, got {:?}",
            err.details()
        );
    }
    // Several problems are all listed.
    let err = patch_f(
        &admin,
        &caller,
        json!([
            {"op": "add", "path": "/-", "value": {"name": "a b", "weight": 1}},
            {"op": "add", "path": "/-", "value": {"name": "y", "weight": 2000, "color": 1}}
        ]),
    )
    .await
    .unwrap_err();
    let paths: Vec<_> = err
        .details()
        .iter()
        .filter_map(|d| d.path.clone())
        .collect();
    for expected in ["/1/name", "/2/weight", "/2/color"] {
        assert!(
            paths.iter().any(|p| p == expected),
            "missing {expected} in {paths:?}"
        );
    }
    assert_eq!(all_events(&admin, &caller).await.len(), before_events);
}

#[tokio::test]
async fn missing_things_are_404_and_say_which() {
    let (admin, caller) = setup().await;
    let ops = patch(json!([]));
    let cases = [
        ("nope", "f", "production", "project"),
        ("p", "nope", "production", "feature"),
        ("p", "g", "production", "feature"), // g lives in project `other`
        ("p", "f", "nope", "environment"),
        ("p", "f", "staging", "not enabled"),
    ];
    for (project, feature, env, says) in cases {
        let err = admin
            .patch_variants(&caller, project, feature, env, &ops)
            .await
            .unwrap_err();
        assert_eq!(err.status(), 404, "{project}/{feature}/{env}: {err}");
        assert_eq!(err.name(), "NotFoundError");
        assert!(
            err.to_string().contains(says),
            "{err} should mention {says}"
        );
    }
}

#[tokio::test]
async fn archived_features_cannot_be_patched() {
    let (admin, caller) = setup().await;
    admin.archive_feature(&caller, "p", "f").await.unwrap();
    let err = add_variants(&admin, &caller, &[("a", "variable", 0)])
        .await
        .unwrap_err();
    assert_eq!(err.status(), 400, "{err}");
}

#[tokio::test]
async fn auth_401_and_403() {
    let (admin, caller) = setup().await;
    assert_eq!(status(admin.authenticate(None).await), 401);
    assert_eq!(status(admin.authenticate(Some("ta_unknown")).await), 401);

    let scoped = |grants: Vec<Grant>| {
        let admin = admin.clone();
        let caller = caller.clone();
        async move {
            let key = admin
                .create_api_key(&caller, "scoped", KeyAccess::Grants { grants })
                .await
                .unwrap();
            admin.authenticate(Some(&key.secret)).await.unwrap()
        }
    };
    let p = Permission::UpdateFeatureEnvironmentVariants;
    let allowed = scoped(vec![Grant::in_environment(p, "p", "production")]).await;
    add_variants(&admin, &allowed, &[("a", "variable", 0)])
        .await
        .unwrap();

    for denied in [
        scoped(vec![Grant::in_environment(p, "p", "development")]).await,
        scoped(vec![Grant::in_project(p, "other")]).await,
        scoped(vec![Grant::everywhere(Permission::UpdateFeature)]).await,
    ] {
        let err = add_variants(&admin, &denied, &[("b", "variable", 0)])
            .await
            .unwrap_err();
        assert_eq!(err.status(), 403, "{err}");
        assert_eq!(err.name(), "NoAccessError");
        assert!(
            err.to_string()
                .contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS"),
            "{err}"
        );
    }

    // A revoked key stops working at its next call.
    admin
        .revoke_api_key(&caller, allowed.key().id)
        .await
        .unwrap();
    let err = add_variants(&admin, &allowed, &[("c", "variable", 0)])
        .await
        .unwrap_err();
    assert_eq!(err.status(), 401);
    assert_eq!(
        admin
            .variants(&caller, "p", "f", "production")
            .await
            .unwrap()
            .variants
            .len(),
        1
    );
}

#[tokio::test]
async fn one_event_with_old_and_new_lists() {
    let (admin, caller) = setup().await;
    add_variants(&admin, &caller, &[("a", "variable", 0)])
        .await
        .unwrap();
    let before = all_events(&admin, &caller).await.len();
    let result = add_variants(&admin, &caller, &[("b", "variable", 0)])
        .await
        .unwrap();
    let events = all_events(&admin, &caller).await;
    assert_eq!(events.len(), before + 1);
    let e = &events[before].event;
    assert_eq!(e.event_type, "feature-environment-variants-updated");
    assert_eq!(
        (
            e.project.as_deref(),
            e.feature_name.as_deref(),
            e.environment.as_deref()
        ),
        (Some("p"), Some("f"), Some("production"))
    );
    assert_eq!(e.created_by, "test-admin");
    let pre: Vec<Variant> = serde_json::from_value(
        e.pre_data.as_ref().unwrap().to_value().unwrap()["variants"].clone(),
    )
    .unwrap();
    let post: Vec<Variant> =
        serde_json::from_value(e.data.as_ref().unwrap().to_value().unwrap()["variants"].clone())
            .unwrap();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0].weight, 1000);
    assert_eq!(post, result.variants);
}

/// 16 tasks × 50 patches each append a uniquely named variant: no update is lost.
pub async fn concurrent_patches_lose_nothing(admin: ToggleAdmin, caller: toggle_admin::Caller) {
    let before = all_events(&admin, &caller).await.len();
    let tasks: Vec<_> = (0..16)
        .map(|t| {
            let (admin, caller) = (admin.clone(), caller.clone());
            tokio::spawn(async move {
                for i in 0..50 {
                    let name = format!("t{t}-v{i}");
                    patch_f(
                        &admin,
                        &caller,
                        json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 0}}]),
                    )
                    .await
                    .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let result = admin
        .variants(&caller, "p", "f", "production")
        .await
        .unwrap();
    assert_eq!(result.variants.len(), 800);
    assert_eq!(result.variants.iter().map(|v| v.weight).sum::<u32>(), 1000);
    let events = all_events(&admin, &caller).await;
    let patches = events[before..]
        .iter()
        .filter(|e| e.event.event_type == "feature-environment-variants-updated")
        .count();
    assert_eq!(patches, 800);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_patches_on_memory_store() {
    let (admin, caller) = setup().await;
    concurrent_patches_lose_nothing(admin, caller).await;
}

fn arb_variant() -> impl Strategy<Value = (String, bool, u32)> {
    ("[a-zA-Z0-9_.~-]{1,12}", any::<bool>(), 0u32..=1000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// For any list and patch, either the weights total exactly 1000 (or the list is empty),
    /// or the call fails and nothing changed.
    #[test]
    fn weights_total_1000_or_nothing_changes(
        initial in proptest::collection::vec(arb_variant(), 0..6),
        added in proptest::collection::vec(arb_variant(), 0..4),
        remove_first in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let (admin, caller) = setup().await;
            let to_ops = |list: &[(String, bool, u32)]| -> Value {
                Value::Array(list.iter().map(|(name, fix, weight)| json!({
                    "op": "add", "path": "/-",
                    "value": {"name": name, "weightType": if *fix { "fix" } else { "variable" }, "weight": weight}
                })).collect())
            };
            // The initial list may itself be rejected; then start from empty.
            let _ = patch_f(&admin, &caller, to_ops(&initial)).await;
            let before = admin.variants(&caller, "p", "f", "production").await.unwrap();
            let events_before = all_events(&admin, &caller).await.len();
            let mut ops = to_ops(&added);
            if remove_first {
                ops.as_array_mut().unwrap().insert(0, json!({"op": "remove", "path": "/0"}));
            }
            match patch_f(&admin, &caller, ops).await {
                Ok(result) => {
                    let total: u32 = result.variants.iter().map(|v| v.weight).sum();
                    prop_assert!(result.variants.is_empty() || total == 1000, "total {}", total);
                }
                Err(_) => {
                    prop_assert_eq!(admin.variants(&caller, "p", "f", "production").await.unwrap(), before);
                    prop_assert_eq!(all_events(&admin, &caller).await.len(), events_before);
                }
            }
            Ok(())
        })?;
    }
}

/// Once armed, every commit conflicts; the attempts are counted.
#[derive(Debug, Default)]
struct AlwaysConflicting {
    armed: std::sync::atomic::AtomicBool,
    attempts: std::sync::atomic::AtomicUsize,
}

#[toggle_admin::async_trait]
impl Behaviour for AlwaysConflicting {
    async fn commit(
        &self,
        inner: &toggle_admin::MemoryStore,
        changes: toggle_admin::store::ChangeSet,
    ) -> Result<toggle_admin::store::Revision, toggle_admin::store::StoreError> {
        if self.armed.load(std::sync::atomic::Ordering::SeqCst) {
            self.attempts
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Err(toggle_admin::store::StoreError::Conflict(
                "always, in this test".to_owned(),
            ));
        }
        inner.commit(changes).await
    }
}

/// The give-up path: when every attempt conflicts, a patch stops after a bounded number of
/// attempts with `Error::Contention` (409 `ConflictError`) and writes nothing.
#[tokio::test]
async fn endless_conflicts_end_in_a_contention_error_after_bounded_attempts() {
    let store = std::sync::Arc::new(Wrapped::<AlwaysConflicting>::default());
    let admin = ToggleAdmin::from_arc(store.clone());
    let (admin, caller) = test_support::facade::setup_on(admin).await;
    add_variants(&admin, &caller, &[("a", "variable", 0)])
        .await
        .unwrap();
    let events_before = all_events(&admin, &caller).await.len();
    store
        .behaviour
        .armed
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let error = add_variants(&admin, &caller, &[("b", "variable", 0)])
        .await
        .unwrap_err();
    match &error {
        Error::Contention { message } => {
            assert!(message.contains("gave up after 200 attempts"), "{message}");
            assert!(message.contains("nothing was written"), "{message}");
        }
        other => panic!("expected Contention, got {other:?}"),
    }
    assert_eq!(status(Err::<(), _>(error)), 409);
    assert_eq!(
        store
            .behaviour
            .attempts
            .load(std::sync::atomic::Ordering::SeqCst),
        200
    );
    store
        .behaviour
        .armed
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let stored = admin
        .variants(&caller, "p", "f", "production")
        .await
        .unwrap();
    assert_eq!(weights(&stored), vec![("a".to_owned(), 1000)]);
    assert_eq!(all_events(&admin, &caller).await.len(), events_before);
}

/// Every commit takes 20 ms; the commits are counted.
#[derive(Debug, Default)]
struct SlowCommits {
    commits: std::sync::atomic::AtomicUsize,
}

#[toggle_admin::async_trait]
impl Behaviour for SlowCommits {
    async fn commit(
        &self,
        inner: &toggle_admin::MemoryStore,
        changes: toggle_admin::store::ChangeSet,
    ) -> Result<toggle_admin::store::Revision, toggle_admin::store::StoreError> {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        self.commits
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        inner.commit(changes).await
    }
}

/// Changes of one feature environment that queue up while one is committed go to the store
/// together: 16 concurrent additions take far fewer than 16 commits, and each writer still
/// gets the list its own change made, and its own event.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changes_that_queue_up_together_share_a_commit() {
    let store = std::sync::Arc::new(Wrapped::<SlowCommits>::default());
    let admin = ToggleAdmin::from_arc(store.clone());
    let (admin, caller) = test_support::facade::setup_on(admin).await;
    let events_before = all_events(&admin, &caller).await.len();
    let commits_before = store
        .behaviour
        .commits
        .load(std::sync::atomic::Ordering::SeqCst);

    let mut tasks = Vec::new();
    for n in 0..16 {
        let (admin, caller) = (admin.clone(), caller.clone());
        tasks.push(tokio::spawn(async move {
            let name = format!("v{n:02}");
            let op = json!([{"op": "add", "path": "/-", "value": {"name": name, "weight": 0}}]);
            (name, patch_f(&admin, &caller, op).await)
        }));
    }
    for task in tasks {
        let (name, result) = task.await.unwrap();
        let result = result.unwrap();
        assert!(
            result.variants.iter().any(|v| v.name == name),
            "{name} is in the list its own change answered"
        );
    }

    let commits = store
        .behaviour
        .commits
        .load(std::sync::atomic::Ordering::SeqCst)
        - commits_before;
    assert!(commits <= 8, "16 queued changes took {commits} commits");
    let stored = admin
        .variants(&caller, "p", "f", "production")
        .await
        .unwrap();
    assert_eq!(stored.variants.len(), 16);
    let events = all_events(&admin, &caller).await;
    let changes = events[events_before..]
        .iter()
        .filter(|e| e.event.event_type == "feature-environment-variants-updated")
        .count();
    assert_eq!(changes, 16, "one event per change");
}
