# shellcheck shell=bash
# What scripts/schemathesis.sh and scripts/schemathesis-unleash.sh share, sourced by both
# from the repository root with `venv` (the virtualenv's directory) and `key` (the bootstrap
# admin key) set: schemathesis installed in the virtualenv, and the server (`toggle-admin serve`)
# started on an in-memory store and a free loopback port, and stopped (its temporary files removed)
# when the script exits.

# Temporary files to remove on exit; a script adds its own.
temp_files=()
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [ "${#temp_files[@]}" -gt 0 ]; then
        rm -f "${temp_files[@]}"
    fi
}
trap cleanup EXIT

# Install schemathesis into "$venv" unless it is there already (needs PyPI on the first run).
install_schemathesis() {
    if [ ! -x "$venv/bin/schemathesis" ]; then
        echo "--- installing schemathesis into $venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --upgrade pip
        "$venv/bin/pip" install --quiet "schemathesis>=4,<5"
    fi
    "$venv/bin/schemathesis" --version
}

# Build and start the server; sets `log` (its output) and `base` (its URL, read from
# the line it logs once listening).
start_server() {
    echo "--- building the server (toggle-admin)"
    cargo build --quiet -p toggle-admin-server

    log=$(mktemp)
    temp_files+=("$log")
    echo "--- starting the server (in memory, loopback, a free port)"
    TOGGLE_ADMIN_BOOTSTRAP_KEY=$key RUST_LOG=${RUST_LOG:-warn} \
        target/debug/toggle-admin serve --memory --addr 127.0.0.1:0 > "$log" 2>&1 &
    server_pid=$!
    base=
    for _ in $(seq 1 100); do
        base=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -n 1)
        [ -n "$base" ] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$log"; echo "the server exited"; exit 1; }
        sleep 0.1
    done
    [ -n "$base" ] || { cat "$log"; echo "the server did not start"; exit 1; }
    echo "server at $base"
}
