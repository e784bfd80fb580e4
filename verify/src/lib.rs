//! The support library of the workspace's integration tests (`verify/tests/`), by what the
//! tests drive:
//!
//! * [`facade`]: the admin core over a MemoryStore with a project, environments and
//!   features; patch helpers and the event log.
//! * [`access`]: users with keys, roles and project access configurations.
//! * [`import`]: the import and export tests' set-up, fixtures and state dumps.
//! * [`rollouts`]: the benches' data set of many flags, with a key to read them.
//! * [`store`]: stores driven directly: temporary directories, events, dumps.
//! * [`wrapped`]: a MemoryStore whose commits misbehave as a test says.
//! * `http` (feature `http`): one request through the router.
//! * [`server_binary`]: the `toggle-admin` program (`server/`), built once.
//! * [`unleash_schema`]: answers checked against the schemas of Unleash's own OpenAPI
//!   document.
//! * `postgres` (feature `postgres`): the server from `TOGGLE_ADMIN_TEST_POSTGRES` and a
//!   schema per test.
//!
//! A library of the `verify` member rather than a module each test binary includes: it is
//! compiled once, not once per binary, and the library package itself cannot depend on it
//! (this package depends on the library), which is why the integration tests live here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod access;
pub mod facade;
#[cfg(feature = "http")]
pub mod http;
pub mod import;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod rollouts;
pub mod server_binary;
pub mod store;
pub mod unleash_schema;
pub mod wrapped;
