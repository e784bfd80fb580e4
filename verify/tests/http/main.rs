//! The HTTP contract through the router (`oneshot`, no socket), and the `toggle-admin` program
//! as a process: one module per area.

/// Three tests running `scenario(&Setup)` over a MemoryStore, a FileStore and (with feature
/// `postgres` and `TOGGLE_ADMIN_TEST_POSTGRES` set) a PostgresStore, each after
/// `test_support::http::setup_on`.
macro_rules! on_every_store {
    ($scenario:ident => $memory:ident, $file:ident, $postgres:ident) => {
        #[tokio::test]
        async fn $memory() {
            let admin = toggle_admin::ToggleAdmin::new(toggle_admin::MemoryStore::new());
            $scenario(&test_support::http::setup_on(admin).await).await;
        }

        #[tokio::test]
        async fn $file() {
            let dir = test_support::store::TempDir::new(stringify!($file));
            let store: std::sync::Arc<dyn toggle_admin::Store> =
                std::sync::Arc::new(toggle_admin::FileStore::open(dir.path()).unwrap());
            let admin = toggle_admin::ToggleAdmin::from_arc(store);
            $scenario(&test_support::http::setup_on(admin).await).await;
        }

        #[cfg(feature = "postgres")]
        #[tokio::test(flavor = "multi_thread")]
        async fn $postgres() {
            let Some(url) = test_support::postgres::database_url() else {
                return;
            };
            let schema = test_support::postgres::TestSchema::new(&url);
            let store: std::sync::Arc<dyn toggle_admin::Store> =
                std::sync::Arc::new(schema.connect(4).await);
            let admin = toggle_admin::ToggleAdmin::from_arc(store);
            $scenario(&test_support::http::setup_on(admin).await).await;
        }
    };
}

mod access;
mod catalog;
mod catalogue_ops;
mod catalogue_writes;
mod client;
mod client_reports;
mod delta;
mod dependencies_ops;
mod embed;
mod env_variants;
mod event_authors;
mod events_search;
mod feature_ops;
mod feature_variants;
mod frontend;
mod hostile;
mod import;
mod keys;
mod keys_users;
mod links_lifecycle;
mod maintenance;
mod malformed_bodies;
mod observability;
mod ofrep;
mod ofrep_metrics;
mod ofrep_push;
mod ofrep_rust;
mod plan;
mod playground;
mod project_health;
mod project_status;
mod projects_envs;
mod readiness;
mod robustness;
mod router;
mod server;
mod server_config;
mod stored_text;
mod strategy_shapes;
mod supporting;
mod tags;
mod terraform_provider;
mod ui_config;
mod unleash_compat;
mod user_roles;
mod users_admin;
