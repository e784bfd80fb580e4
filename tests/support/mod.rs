//! The one support module of the tests (`mod support;` in each test file; the `verify`
//! member's tests include it by path, `#[path = "../../tests/support/mod.rs"]`), by what the
//! tests drive:
//!
//! * [`facade`]: the admin core over a MemoryStore with a project, environments and
//!   features; patch helpers and the event log.
//! * [`access`]: users with keys, roles and project access configurations.
//! * [`import`]: the import and export tests' set-up, fixtures and state dumps.
//! * [`store`]: stores driven directly: temporary directories, events, dumps.
//! * [`wrapped`]: a MemoryStore whose commits misbehave as a test says.
//! * [`http`] (feature `http`): one request through the router.
//! * [`server_binary`] (feature `http`): the `server` example's binary, built once.
//! * [`postgres`] (feature `postgres`): the server from `TOGGLE_ADMIN_TEST_POSTGRES` and a
//!   schema per test.
#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

pub mod access;
pub mod facade;
#[cfg(feature = "http")]
pub mod http;
pub mod import;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "http")]
pub mod server_binary;
pub mod store;
pub mod wrapped;
