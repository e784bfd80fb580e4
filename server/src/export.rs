//! `toggle-admin export`: the project's flags in one environment as an export document (the
//! file `plan` and `apply` read, and `serve --import-file` seeds from), to stdout or
//! `--output FILE`. Exit status 0, or 1 on any error.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use crate::remote::{Connection, Failure, Server};

/// The flags of `toggle-admin export`.
#[derive(Debug, Args)]
#[command(after_help = "\
TOGGLE_ADMIN_URL and TOGGLE_ADMIN_KEY stand for --url and --key.")]
pub struct ExportArgs {
    /// The project to export
    #[arg(long, value_name = "PROJECT", default_value = "default")]
    project: String,

    /// The environment whose strategies, variants and enabled state are exported
    #[arg(long, value_name = "ENVIRONMENT")]
    environment: String,

    /// Write the document to FILE (replaced whole, never half-written) instead of stdout
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,

    #[command(flatten)]
    connection: Connection,
}

/// Export and write the document.
pub async fn run(args: ExportArgs) -> Result<(), String> {
    let server = Server::new(&args.connection)?;
    let query = json!({"project": args.project, "environment": args.environment});
    let document: Value = server
        .post_json("/api/admin/features-batch/export", &query)
        .await
        .map_err(|failure| match failure {
            Failure::NoRoute => format!(
                "the server at {} has no POST /api/admin/features-batch/export",
                server.base()
            ),
            Failure::Other(message) => message,
        })?;
    let mut text = serde_json::to_string_pretty(&document)
        .map_err(|e| format!("writing the document: {e}"))?;
    text.push('\n');
    match &args.output {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| format!("writing to stdout: {e}"))
        }
        Some(path) => write_whole(path, text.as_bytes()).await,
    }
}

/// Write `bytes` to a sibling temporary file, then rename it over `path`: a reader (or a
/// crash) never sees half a document.
async fn write_whole(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .ok_or_else(|| format!("--output {}: not a file name", path.display()))?;
    let mut temporary = name.to_os_string();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(temporary);
    let written = async {
        tokio::fs::write(&temporary, bytes).await?;
        tokio::fs::rename(&temporary, path).await
    }
    .await;
    if let Err(e) = written {
        let _ = tokio::fs::remove_file(&temporary).await;
        return Err(format!("--output {}: {e}", path.display()));
    }
    Ok(())
}
