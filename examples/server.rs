//! The admin API embedded in your own axum app, over a MemoryStore.
//!
//! ```sh
//! cargo run --features http --example server
//! curl -H "Authorization: $KEY" http://127.0.0.1:4242/api/admin/projects/default
//! curl http://127.0.0.1:4242/hello
//! ```
//!
//! The router owns the paths under `/api/`; the app keeps its own routes and fallback beside
//! it. To run the server as it ships (every store, the admin page, flags and environment
//! variables), use the `toggle-admin` program instead: `toggle-admin serve --memory`.

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use toggle_admin::model::Environment;
use toggle_admin::model::NewProject;
use toggle_admin::{MemoryStore, ToggleAdmin};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let admin = ToggleAdmin::new(MemoryStore::new());

    // A new store has no key: make the first admin key (its secret is shown once), then an
    // environment and a project for the flags, as the admin.
    let key = admin.bootstrap_admin_key("ops").await?;
    let caller = admin.authenticate(Some(&key.secret)).await?;
    let development = Environment {
        name: "development".into(),
        environment_type: "development".into(),
        ..Default::default()
    };
    admin.create_environment(&caller, &development).await?;
    let project = NewProject {
        id: "default".into(),
        name: "Default".into(),
        environments: vec!["development".into()],
        ..Default::default()
    };
    admin.create_project(&caller, &project).await?;

    let app = Router::new()
        .route("/hello", get(|| async { "the app's own route" }))
        .merge(toggle_admin::http::router(admin))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not one of the app's pages") });

    let listener = tokio::net::TcpListener::bind("127.0.0.1:4242").await?;
    println!("admin API key: {}", key.secret);
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
