//! The `server` example's binary, for tests that run it as a process.

use std::path::{Path, PathBuf};

/// The example binary, built (or found up to date) once per test run with this test's
/// features, so that it never runs stale code.
pub fn server_binary() -> PathBuf {
    static BINARY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BINARY.get_or_init(build_server).clone()
}

fn build_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/http_server-<hash> → target/<profile>/examples/server (the
    // workspace's target directory, whichever member the test belongs to)
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut features = vec!["http"];
    if cfg!(feature = "postgres") {
        features.push("postgres");
    }
    if cfg!(feature = "conformance") {
        features.push("conformance");
    }
    // `-p toggle-admin`: the example is the library's, also when this runs in a test of the
    // workspace's `verify` member (whose manifest directory this is then); the workspace
    // shares one target directory.
    let mut build = std::process::Command::new(env!("CARGO"));
    build
        .args([
            "build",
            "--quiet",
            "-p",
            "toggle-admin",
            "--example",
            "server",
            "--features",
        ])
        .arg(features.join(","))
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo build --example server");
    assert!(status.success(), "building the server example failed");
    profile_dir
        .join("examples")
        .join(format!("server{}", std::env::consts::EXE_SUFFIX))
}
