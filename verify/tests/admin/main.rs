//! The admin core (`ToggleAdmin`) through its public API, over a MemoryStore unless a test
//! says otherwise: one module per area.

mod access;
mod access_matrix;
mod applications;
mod elements;
mod events;
mod export;
mod import;
mod import_rules;
mod keys;
mod model_fixtures;
mod patch_variants;
mod playground_page;
mod robustness_regressions;
mod strategy_copy;
