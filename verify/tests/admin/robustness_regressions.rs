//! Regression tests for what the robustness work found (ROBUSTNESS.md), at the facade level.

use serde_json::{Value, json};
use test_support::facade::*;
use toggle_admin::Error;

fn adds(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"op": "add", "path": "/-", "value": {"name": format!("v{i}"), "weight": 0}}))
            .collect(),
    )
}

/// A 10,000-operation patch used to store 10,000 variants, 9,000 of them variable with weight
/// 0 (never served). A list holds at most 1000 variants, one per unit of weight.
#[tokio::test]
async fn more_than_1000_variants_are_refused_and_nothing_is_written() {
    let (admin, caller) = setup().await;
    let events = all_events(&admin, &caller).await.len();
    for n in [1001, 10_000] {
        let error = patch_f(&admin, &caller, adds(n)).await.unwrap_err();
        let Error::Validation { message, .. } = &error else {
            panic!("{error:?}");
        };
        assert!(message.contains("more than the 1000 allowed"), "{message}");
        let set = serde_json::from_value::<Vec<toggle_admin::model::Variant>>(
            (0..n)
                .map(|i| json!({"name": format!("v{i}"), "weight": 0}))
                .collect(),
        )
        .unwrap();
        assert!(matches!(
            admin
                .set_variants(&caller, "p", "f", "production", &set)
                .await,
            Err(Error::Validation { .. })
        ));
    }
    assert_eq!(all_events(&admin, &caller).await.len(), events);
    let result = patch_f(&admin, &caller, adds(1000)).await.unwrap();
    assert_eq!(result.variants.len(), 1000);
    assert!(result.variants.iter().all(|v| v.weight == 1));
}
