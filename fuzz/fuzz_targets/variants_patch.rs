//! A variants PATCH body, decoded and applied as the facade does:
//! `decode_patch` → `apply_patch` → `normalise_variants`. Nothing may panic; a result that
//! passes must be a valid, normalised list that normalises to itself again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toggle_admin::model::Variant;
use toggle_admin::variants::{apply_patch, decode_patch, normalise_variants};

fn current() -> Vec<Variant> {
    let doc = json!([
        {"name": "blue", "weight": 0},
        {"name": "green", "weightType": "fix", "weight": 300, "stickiness": "userId",
         "payload": {"type": "json", "value": "{\"a\":1}"},
         "overrides": [{"contextName": "userId", "values": ["1", "2"]}]},
    ]);
    normalise_variants(&doc).unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(patch) = decode_patch(&body) else {
        return;
    };
    let current = current();
    let Ok(doc) = apply_patch(&current, &patch) else {
        return;
    };
    let Ok(variants) = normalise_variants(&doc) else {
        return;
    };
    let total: u64 = variants.iter().map(|v| u64::from(v.weight)).sum();
    assert!(total <= 1000, "weights total {total}");
    for pair in variants.windows(2) {
        assert_ne!(pair[0].name, pair[1].name, "duplicate names survived");
    }
    let again = serde_json::to_value(&variants).expect("variants serialise");
    let renormalised = normalise_variants(&again).expect("a normalised list is valid");
    assert_eq!(renormalised, variants, "normalising is not idempotent");
});
