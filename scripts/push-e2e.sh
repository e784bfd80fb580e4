#!/usr/bin/env bash
# The Node SDK (unleash-client from npm) in streaming and delta-polling modes against the
# server (`toggle-admin serve`): on one instance (in memory; a FileStore, restarted once) and
# on two instances over one PostgreSQL schema (changes through A, SDKs on B). Runs
# scripts/push_e2e.mjs; installs node and npm if missing, and the SDK under target/. Needs TOGGLE_ADMIN_TEST_POSTGRES for
# the two-instance part (skipped, with a note, without it).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq nodejs npm >/dev/null
fi
sdk=target/push-e2e
if [ ! -f "$sdk/node_modules/unleash-client/package.json" ]; then
  mkdir -p "$sdk"
  echo '{"private": true}' > "$sdk/package.json"
  (cd "$sdk" && npm install --silent --no-audit --no-fund unleash-client@6.12.1)
fi

cargo build -q -p toggle-admin-server

admin_key="push-e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
export SERVER=target/debug/toggle-admin ADMIN_KEY="$admin_key"
export NODE_MODULES_DIR="$PWD/$sdk/node_modules"

STORAGE=memory node scripts/push_e2e.mjs
STORAGE="data:$data/store" node scripts/push_e2e.mjs

if [ -n "${TOGGLE_ADMIN_TEST_POSTGRES:-}" ]; then
  schema="push_e2e_$(date +%s)_$$"
  drop() { psql "$TOGGLE_ADMIN_TEST_POSTGRES" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true; rm -rf "$data"; }
  trap drop EXIT
  STORAGE="postgres:$TOGGLE_ADMIN_TEST_POSTGRES:$schema" node scripts/push_e2e.mjs
else
  echo "two instances over PostgreSQL: skipped (TOGGLE_ADMIN_TEST_POSTGRES is not set)"
fi
