//! Quick start: a durable store in `./toggle-admin-data`, an admin key, an environment, a
//! project and a feature; each run adds a variant to the feature and prints the variants as
//! JSON, so a second run shows the first run's data.
//!
//! ```text
//! cargo run --example quickstart              # FileStore in ./toggle-admin-data
//! cargo run --example quickstart -- --memory  # in memory: nothing is kept
//! cargo run --example quickstart -- --data DIR
//! ```

use std::path::{Path, PathBuf};

use serde_json::json;
use toggle_admin::model::NewFeature;
use toggle_admin::model::{Environment, Project};
use toggle_admin::store::FileStore;
use toggle_admin::{Caller, Error, MemoryStore, ToggleAdmin};

/// Where the quick start keeps the secret of the admin key it bootstrapped, so later runs
/// can use it. A real deployment keeps it in a secret store instead.
const KEY_FILE: &str = "quickstart.key";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut data = Some(PathBuf::from("toggle-admin-data"));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--memory" => data = None,
            "--data" => data = Some(args.next().ok_or("--data needs a directory")?.into()),
            other => {
                return Err(format!("unknown argument {other}; use --memory or --data DIR").into());
            }
        }
    }

    let (admin, caller) = match &data {
        Some(dir) => {
            let admin = ToggleAdmin::new(FileStore::open(dir)?);
            let caller = admin_caller(&admin, Some(dir)).await?;
            println!("store: {} (run again to see the data kept)", dir.display());
            (admin, caller)
        }
        None => {
            let admin = ToggleAdmin::new(MemoryStore::new());
            let caller = admin_caller(&admin, None).await?;
            println!("store: in memory");
            (admin, caller)
        }
    };

    ensure_setup(&admin, &caller).await?;

    // The body of PATCH /api/admin/projects/shop/features/checkout/environments/production/variants:
    // add one more variable variant; weights are shared out again.
    let current = admin
        .variants(&caller, "shop", "checkout", "production")
        .await?;
    let name = format!("run-{}", current.variants.len() + 1);
    let body = json!([
        { "op": "add", "path": "/-", "value": { "name": name, "weight": 0,
            "payload": { "type": "json", "value": "{\"color\":\"green\"}" } } }
    ]);
    let patch = toggle_admin::variants::decode_patch(&body)?;
    let result = admin
        .patch_variants(&caller, "shop", "checkout", "production", &patch)
        .await?;
    println!("{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}

/// The admin caller: bootstrap a key in an empty store (keeping its secret beside the data),
/// or use the kept one.
async fn admin_caller(
    admin: &ToggleAdmin,
    dir: Option<&Path>,
) -> Result<Caller, Box<dyn std::error::Error>> {
    let key_file = dir.map(|d| d.join(KEY_FILE));
    if let Some(path) = &key_file
        && let Ok(secret) = std::fs::read_to_string(path)
    {
        return Ok(admin.authenticate(Some(secret.trim())).await?);
    }
    let key = admin.bootstrap_admin_key("quickstart").await?;
    if let Some(path) = &key_file {
        std::fs::write(path, &key.secret)?;
    }
    Ok(admin.authenticate(Some(&key.secret)).await?)
}

/// Create the environment, project and feature unless an earlier run did.
async fn ensure_setup(admin: &ToggleAdmin, caller: &Caller) -> Result<(), Error> {
    let environment = Environment {
        name: "production".into(),
        environment_type: "production".into(),
        ..Default::default()
    };
    let project = Project {
        id: "shop".into(),
        name: "Shop".into(),
        environments: vec!["production".into()],
        ..Default::default()
    };
    let feature = NewFeature {
        name: "checkout".into(),
        ..Default::default()
    };
    ignore_existing(admin.create_environment(caller, &environment).await)?;
    ignore_existing(admin.create_project(caller, &project).await)?;
    ignore_existing(admin.create_feature(caller, "shop", &feature).await)?;
    Ok(())
}

fn ignore_existing<T>(result: Result<T, Error>) -> Result<(), Error> {
    match result {
        Ok(_) | Err(Error::NameExists { .. }) => Ok(()),
        Err(other) => Err(other),
    }
}
