//! The PostgresStore against a real server (`TOGGLE_ADMIN_TEST_POSTGRES`; each test skips,
//! saying so, when it is not set outside CI): one module per area.

mod batch;
mod facade;
#[cfg(feature = "http")]
mod instances;
mod parallel;
mod store;
mod tls;
