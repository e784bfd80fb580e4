#!/usr/bin/env bash
# The admin page in a real browser: installs Debian's chromium and chromium-driver (only if
# missing), selenium in a virtualenv and axe-core from npm (both under target/), starts the
# server (`toggle-admin serve`) in memory, then runs scripts/ui_e2e.py. Screenshots of
# every page go to target/ui-screenshots/. Exits non-zero if any expectation fails.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi

venv=target/ui-e2e-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import selenium" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "selenium==4.51.0"
fi

node_dir=target/ui-e2e-node
axe="$node_dir/node_modules/axe-core/axe.min.js"
if [ ! -f "$axe" ]; then
  mkdir -p "$node_dir"
  npm install --silent --no-audit --no-fund --prefix "$node_dir" "axe-core@4.14.1" >/dev/null
fi

cargo build -q -p toggle-admin-server
admin_key="ui-e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
log=$(mktemp)
TOGGLE_ADMIN_BOOTSTRAP_KEY="$admin_key" target/debug/toggle-admin serve --memory \
  --addr 127.0.0.1:0 >"$log" 2>"$log.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; tail -n 20 "$log.err"; rm -f "$log" "$log.err"' EXIT

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

shots=target/ui-screenshots
rm -rf "$shots"
mkdir -p "$shots"
BASE="$base" ADMIN_KEY="$admin_key" AXE="$axe" SHOTS="$shots" \
  FIXTURE=tests/fixtures/unleash-6.10.1/export-two-features.json \
  "$venv/bin/python" scripts/ui_e2e.py
echo "screenshots: $shots"
