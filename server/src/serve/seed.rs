//! `serve --import-file FILE`: flags seeded from an export document at every start, before
//! the server answers, as Unleash's `IMPORT_FILE` does.
//!
//! The file is read and parsed before the store is opened; the import itself runs once the
//! store is set up, as the deployment's first admin key
//! ([`ToggleAdmin::first_admin_caller`]): the key's secret is not at hand after the first
//! start, and a key created for the purpose (and revoked) would leave two events at every
//! start, where an unchanged file must leave none. A broken file (unreadable, not JSON, an
//! import the library refuses) stops the start and writes nothing: the import is one commit.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value;
use toggle_admin::model::ImportMode;
use toggle_admin::{Error, ToggleAdmin};

use crate::remote::{Mode, feature_count, import_body, read_json, thousands};

/// The seeding flags of `toggle-admin serve`.
#[derive(Debug, Args)]
pub struct SeedArgs {
    /// At every start, before serving, import this export document (as `export` writes it)
    #[arg(long, env = "IMPORT_FILE", value_name = "FILE")]
    import_file: Option<PathBuf>,

    /// The project --import-file goes to
    #[arg(
        long,
        env = "IMPORT_PROJECT",
        value_name = "PROJECT",
        default_value = "default"
    )]
    import_project: String,

    /// The environment --import-file goes to
    #[arg(
        long,
        env = "IMPORT_ENVIRONMENT",
        value_name = "ENVIRONMENT",
        default_value = "development"
    )]
    import_environment: String,

    /// create-missing keeps what people changed since; replace makes the file win at each start
    #[arg(
        long,
        env = "IMPORT_MODE",
        value_name = "MODE",
        value_enum,
        default_value_t = Mode::CreateMissing
    )]
    import_mode: Mode,
}

/// The import read from `--import-file`, ready to run once the store is open.
pub struct Seed {
    file: PathBuf,
    body: Value,
    mode: ImportMode,
}

impl SeedArgs {
    /// The file read and parsed, if one is given; a file that cannot be read or is not an
    /// export document is an error naming it.
    pub async fn read(&self) -> Result<Option<Seed>, String> {
        let Some(file) = &self.import_file else {
            return Ok(None);
        };
        let document = read_json(file)
            .await
            .map_err(|e| format!("--import-file {e}"))?;
        let body = import_body(
            document,
            Some(&self.import_project),
            Some(&self.import_environment),
        )
        .map_err(|e| format!("--import-file {}: {e}", file.display()))?;
        Ok(Some(Seed {
            file: file.clone(),
            body,
            mode: self.import_mode.into(),
        }))
    }
}

impl Seed {
    /// Import the file as the first admin key, in one commit; every problem of a refused
    /// import on a line of its own.
    pub async fn run(&self, admin: &ToggleAdmin) -> Result<(), String> {
        let file = self.file.display();
        let caller = admin
            .first_admin_caller()
            .await
            .map_err(|e| format!("--import-file {file}: reading the store's keys: {e}"))?
            .ok_or_else(|| {
                format!(
                    "--import-file {file}: the store has no admin key left to import as \
                     (every admin key is revoked or expired)"
                )
            })?;
        let count = feature_count(&self.body);
        eprintln!(
            "importing {} flag{} from {file} ({})…",
            thousands(count),
            if count == 1 { "" } else { "s" },
            self.mode
        );
        let report = admin
            .import_toggles_json_with(&caller, &self.body, self.mode)
            .await
            .map_err(|e| format!("--import-file {file}: {}", told(&e)))?;
        tracing::info!(
            file = %file,
            mode = %self.mode,
            created = report.created.len(),
            updated = report.updated.len(),
            unchanged = report.unchanged.len(),
            skipped_archived = report.skipped_archived.len(),
            skipped_existing = report.skipped_existing.len(),
            "imported the start-up file"
        );
        for warning in &report.warnings {
            tracing::warn!(
                path = warning.path.as_deref().unwrap_or(""),
                "--import-file: {}",
                warning.message
            );
        }
        Ok(())
    }
}

/// The error and each of its details on a line of its own.
fn told(error: &Error) -> String {
    let mut out = error.to_string();
    for detail in error.details() {
        match &detail.path {
            Some(path) => write!(out, "\n  {path}: {}", detail.message),
            None => write!(out, "\n  {}", detail.message),
        }
        .ok();
    }
    out
}
