#!/usr/bin/env bash
# The browser SDK `unleash-proxy-client` (npm, in Node 20 with its global fetch) against the
# real server's frontend API: starts `toggle-admin serve` in memory, then runs
# scripts/frontend_e2e.cjs. The npm package goes under target/ (git-ignored). Exits non-zero
# if any expectation fails.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=target/frontend-e2e
if [ ! -d "$modules/node_modules/unleash-proxy-client" ]; then
  mkdir -p "$modules"
  npm install --silent --no-audit --no-fund --prefix "$modules" "unleash-proxy-client@3.8.2"
fi

cargo build -q -p toggle-admin-server
admin_key="frontend-e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
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

BASE="$base" ADMIN_KEY="$admin_key" NODE_PATH="$modules/node_modules" \
  node scripts/frontend_e2e.cjs
