//! The HTTP contract through the router (`oneshot`, no socket), and the `toggle-admin` program
//! as a process: one module per area.

mod access;
mod catalog;
mod catalogue_writes;
mod client;
mod client_reports;
mod delta;
mod embed;
mod feature_ops;
mod frontend;
mod hostile;
mod import;
mod keys;
mod maintenance;
mod malformed_bodies;
mod ofrep;
mod ofrep_push;
mod ofrep_rust;
mod plan;
mod playground;
mod readiness;
mod robustness;
mod router;
mod server;
mod server_config;
mod stored_text;
mod strategy_shapes;
mod supporting;
mod terraform_provider;
mod unleash_compat;
