#!/usr/bin/env bash
# A real Unleash SDK against the real server: starts `toggle-admin serve`
# in memory, then runs scripts/sdk_e2e.py with the Python UnleashClient (from PyPI, in a
# virtualenv under target/). Exits non-zero if any expectation fails.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/sdk-e2e-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "UnleashClient==6.9.1"
fi

cargo build -q -p toggle-admin-server
admin_key="e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
log=$(mktemp)
TOGGLE_ADMIN_BOOTSTRAP_KEY="$admin_key" target/debug/toggle-admin serve --memory \
  --addr 127.0.0.1:0 >"$log" 2>"$log.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log" "$log.err"' EXIT

for _ in $(seq 1 100); do
  if grep -q "listening on" "$log"; then break; fi
  sleep 0.1
done
base=$(sed -n 's/^listening on //p' "$log")
if [ -z "$base" ]; then
  echo "the server did not start:" >&2
  cat "$log.err" >&2
  exit 1
fi

BASE="$base" ADMIN_KEY="$admin_key" "$venv/bin/python" scripts/sdk_e2e.py
