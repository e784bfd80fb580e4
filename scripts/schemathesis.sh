#!/usr/bin/env bash
# Contract-test the HTTP adapter against its own OpenAPI document with schemathesis (PyPI):
# the server example on an in-memory store and a loopback port, every operation with a bounded
# number of generated examples, and the checks not_a_server_error, status_code_conformance,
# content_type_conformance and response_schema_conformance. Exits non-zero when schemathesis
# finds anything.
#
#   scripts/schemathesis.sh                 # 25 examples per operation
#   MAX_EXAMPLES=100 scripts/schemathesis.sh
#
# Needs python3 (with venv) and network access to PyPI on the first run; the virtualenv is
# kept in target/schemathesis-venv (SCHEMATHESIS_VENV to override).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${SCHEMATHESIS_VENV:-target/schemathesis-venv}
max_examples=${MAX_EXAMPLES:-25}
key=${TOGGLE_ADMIN_BOOTSTRAP_KEY:-schemathesis-admin-key-0123456789abcdef}

if [ ! -x "$venv/bin/schemathesis" ]; then
    echo "--- installing schemathesis into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet "schemathesis>=4,<5"
fi
"$venv/bin/schemathesis" --version

echo "--- building the server example"
cargo build --quiet --features openapi --example server

log=$(mktemp)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -f "$log"
}
trap cleanup EXIT

echo "--- starting the server (in memory, loopback, a free port)"
TOGGLE_ADMIN_BOOTSTRAP_KEY=$key RUST_LOG=${RUST_LOG:-warn} \
    target/debug/examples/server --memory --addr 127.0.0.1:0 > "$log" 2>&1 &
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

echo "--- schemathesis run ($max_examples examples per operation)"
status=0
"$venv/bin/schemathesis" run "$base/api/admin/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$max_examples" \
    --header "Authorization: $key" \
    --seed "${SCHEMATHESIS_SEED:-1}" \
    --no-color \
    || status=$?
if [ "$status" -ne 0 ]; then
    echo "--- server log"
    tail -n 50 "$log"
    echo "schemathesis found problems (exit $status)"
fi
exit "$status"
