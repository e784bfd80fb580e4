//! Contract checks and benches of `toggle-admin`, a member of its workspace that is never
//! published and holds no code of its own.
//!
//! What lives here needs dependencies the library does not: contract tests against external
//! references (the OpenAPI 3.1 schema, validated with `jsonschema`; Unleash's client
//! specification, evaluated with `unleash-yggdrasil`; ICU's root collation with
//! `icu_collator`, the reference of the variant name order), the tests that drive the server
//! over sockets or as a process (`reqwest`), and the criterion benches (see BENCHMARKS.md).
//! Cargo compiles every dev-dependency of a package for any of its examples; kept here, these
//! stay out of the library's quick start (`cargo run --example quickstart`), which compiles
//! only what it needs.
//!
//! The tests share the library's support module and fixtures (`../tests/support`,
//! `../tests/fixtures`). Run them with the rest: `cargo test --workspace --all-features`;
//! a bench with `cargo bench -p toggle-admin-verify --all-features --bench <name>`.
