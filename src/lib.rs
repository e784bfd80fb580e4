//! # toggle-admin
//!
//! The administration core of a feature-toggle service: the four admin operations of the
//! specification — patch a feature's variants in an environment, import toggles, delete an
//! application, set a project's access — behaving as Unleash users expect, over storage you
//! choose.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use toggle_admin::{MemoryStore, ToggleAdmin};
//! use toggle_admin::model::{Environment, NewFeature, Project};
//!
//! let admin = ToggleAdmin::new(MemoryStore::new());
//! let key = admin.bootstrap_admin_key("ops").await?;          // the secret is shown once
//! let caller = admin.authenticate(Some(&key.secret)).await?;
//!
//! admin.create_environment(&caller, &Environment {
//!     name: "production".into(), environment_type: "production".into(), ..Default::default()
//! }).await?;
//! admin.create_project(&caller, &Project {
//!     id: "shop".into(), name: "Shop".into(), environments: vec!["production".into()],
//!     ..Default::default()
//! }).await?;
//! admin.create_feature(&caller, "shop", &NewFeature { name: "checkout".into(), ..Default::default() }).await?;
//!
//! // Decode the body with `decode_patch`: it refuses `test` and names the bad operation.
//! let patch = toggle_admin::variants::decode_patch(&serde_json::json!([
//!     { "op": "add", "path": "/-", "value": { "name": "blue", "weight": 0 } },
//!     { "op": "add", "path": "/-", "value": { "name": "green", "weight": 0 } },
//! ]))?;
//! let result = admin.patch_variants(&caller, "shop", "checkout", "production", &patch).await?;
//! assert_eq!(result.variants.iter().map(|v| v.weight).sum::<u32>(), 1000);
//! # Ok(())
//! # }
//! ```
//!
//! The four operations: [`ToggleAdmin::patch_variants`], [`ToggleAdmin::import_toggles`],
//! [`ToggleAdmin::delete_application`], [`ToggleAdmin::set_project_access`] (project roles
//! by id: [`access::OWNER_ROLE`], [`access::MEMBER_ROLE`], or a custom role's). Stores:
//! [`MemoryStore`], [`FileStore`] (durable, one process per directory), `PostgresStore`
//! (feature `postgres`), or your own [`Store`]. A service on a persistent store bootstraps
//! its first admin key only when [`ToggleAdmin::is_bootstrapped`] is false.
//!
//! ## Feature flags
//!
//! | feature | what it adds |
//! |---|---|
//! | `conformance` | `store::conformance`: the scenario suite every [`Store`] must pass (third-party stores too) |
//! | `http` | `http::router`: the admin API as an axum `Router` that merges into your app (routes declared by their OpenAPI annotations, so it brings `utoipa`); the `server` example embeds it in an app |
//! | `openapi` (implies `http`) | `http::openapi()`: the OpenAPI 3.1 document of the admin API, served at `GET /api/admin/openapi.json` |
//! | `postgres` | `store::PostgresStore`: many application instances sharing one PostgreSQL database |
//! | `ui` | `ui::router`: the admin page for people (sign-in, features, strategies with constraints, segments, context fields, the archive, search, the playground, variants, import and export, projects, keys, events), server-rendered, mounted next to `http::router` with one line |
//!
//! No feature is on by default. The server as a program, with every store and the admin page,
//! is the workspace's `toggle-admin-server` package (`toggle-admin serve`).
//!
//! ## Layout
//!
//! One resource `R` (projects, features, keys, users, tags, …) has one name on every floor:
//!
//! | what | where |
//! |---|---|
//! | its wire types (serde, Unleash's JSON names) | `model/R.rs`, all re-exported flat as [`model`] |
//! | its operations on the facade ([`ToggleAdmin`]) | `admin/R.rs` |
//! | its HTTP routes (feature `http`), one `routes()` each, merged in `http/mod.rs` | `http/R.rs` |
//! | how it is stored: record keys, record shapes, codecs, the shared 404s, and the one step that reads a feature environment with its 404 order | `admin/records.rs` |
//!
//! The pure domain rules (variant patching, import planning, project access) live in
//! [`variants`], [`import`] and [`access`]; authentication and secrets in [`auth`]; the
//! storage contract and its stores in [`store`]. Imports point one way: `http` → `admin` →
//! the domain and `auth` → `model` and `error`; `store` depends on none of them, and none
//! depends on `http`.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod access;
pub mod admin;
pub mod auth;
pub mod error;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod import;
pub mod model;
mod names;
pub mod store;
#[cfg(feature = "ui")]
#[cfg_attr(docsrs, doc(cfg(feature = "ui")))]
pub mod ui;
pub mod variants;

pub use admin::ToggleAdmin;
/// The attribute that implementing [`Store`] needs: `#[toggle_admin::async_trait]` on your
/// `impl Store for …` (no direct dependency on `async-trait` needed).
pub use async_trait::async_trait;
pub use auth::{Caller, NewApiKey};
pub use error::{Error, ErrorBody, ErrorDetail, Result};
/// The JSON Patch (RFC 6902) that [`ToggleAdmin::patch_variants`] takes; build one with
/// [`variants::decode_patch`].
pub use json_patch::Patch;
pub use model::{
    ClientKeyType, Grant, Group, ImportReport, ImportValidation, KeyAccess, Permission, Role,
    RolePermission, RoleType, User,
};
pub use store::{FileStore, MemoryStore, Store};
/// The client API's wire types (Unleash's `unleash-types`), re-exported.
pub use unleash_types;
