//! The command line: `toggle-admin <COMMAND> [FLAGS]`, one module per command, dispatched in
//! one `match`.
//!
//! Exit status: 0 when the command did its job (and for `--help`, `--version`), 1 for a usage
//! error (an unknown flag, a bad value: clap's own default is 2) and for a failure at run time,
//! 2 only for `plan` finding changes (Terraform's detailed exit code: 2 never means anything
//! else).

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::{apply, export, plan, serve};

/// A feature-toggle service wire-compatible with Unleash's admin, client and frontend APIs.
#[derive(Debug, Parser)]
#[command(name = "toggle-admin", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the admin API, the SDKs' APIs and the admin page over a store.
    Serve(Box<serve::ServeArgs>),
    /// Say what applying a file would change on a server; exit 0 no changes, 2 changes, 1 error.
    Plan(plan::PlanArgs),
    /// Apply a file to a server (one atomic import) and say what it did.
    Apply(apply::ApplyArgs),
    /// Write a project's flags in one environment as an export document.
    Export(export::ExportArgs),
}

/// The exit status of a usage error and of a failure.
const FAILURE: u8 = 1;

/// The exit status of `plan` when something would change.
const CHANGES: u8 = 2;

/// Parse `args` (the program's name first), run the command, and say how it went.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match parse(args) {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` come this way too, to stdout, and are no failure.
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(FAILURE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(FAILURE);
        }
    };
    let done = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve::run(*args).await.map(|()| ExitCode::SUCCESS),
            Command::Plan(args) => plan::run(args).await.map(|planned| match planned {
                plan::Planned::NoChanges => ExitCode::SUCCESS,
                plan::Planned::Changes => ExitCode::from(CHANGES),
            }),
            Command::Apply(args) => apply::run(args).await.map(|()| ExitCode::SUCCESS),
            Command::Export(args) => export::run(args).await.map(|()| ExitCode::SUCCESS),
        }
    });
    match done {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(FAILURE)
        }
    }
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    let mut command = read_environment(Cli::command());
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// How every flag of every command reads its environment variable: set to the empty string,
/// it counts as unset (`DATABASE_URL=` in a compose file means "none"); `--help` names it but
/// never shows its value (`DATABASE_URL` may hold a password).
fn read_environment(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            let empty = arg
                .get_env()
                .and_then(std::env::var_os)
                .is_some_and(|value| value.is_empty());
            let arg = arg.hide_env_values(true);
            if empty { arg.env(None) } else { arg }
        })
        .mut_subcommands(read_environment)
}

/// Logs go to stderr, filtered by `RUST_LOG` (default `info`).
fn init_logging() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
