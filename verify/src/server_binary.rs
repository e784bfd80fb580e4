//! The `toggle-admin` program (package `toggle-admin-server`), for tests that run it as a
//! process.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `toggle-admin` binary, built (or found up to date) once per test run, so that it never
/// runs stale code. It has every store and the admin page whatever this test's features.
pub fn server_binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(build_server).clone()
}

/// `toggle-admin serve`, ready for the caller's flags.
pub fn serve_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(server_binary());
    command.arg("serve");
    command
}

fn build_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/http-<hash> → target/<profile>/toggle-admin (the workspace's
    // target directory, which every member shares)
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut build = Command::new(env!("CARGO"));
    build
        .args(["build", "--quiet", "-p", "toggle-admin-server"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo build -p toggle-admin-server");
    assert!(status.success(), "building the toggle-admin program failed");
    profile_dir.join(format!("toggle-admin{}", std::env::consts::EXE_SUFFIX))
}
