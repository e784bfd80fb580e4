#!/usr/bin/env bash
# Push figures (BENCHMARKS.md): fan-out to STREAMS streams on one instance, delta polling
# against full polling, and (with TOGGLE_ADMIN_TEST_POSTGRES) commit on A to event on B over
# PostgreSQL. Builds the `toggle-admin` program and verify/examples/push_load.rs in release.
#   scripts/push-bench.sh [STREAMS (10000)] [SECONDS per polling run (10)] [CHANGES (1000)]
set -euo pipefail
cd "$(dirname "$0")/.."
streams=${1:-10000}
seconds=${2:-10}
changes=${3:-1000}
# One socket per stream in each process (the tool's and the server's): as many open files
# as the hard limit allows (20,000 in some containers, even for root).
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -gt 65536 ]; then ulimit -n 65536; else ulimit -n "$hard"; fi

cargo build -q --release -p toggle-admin-server
cargo build -q --release -p toggle-admin-verify --features http --example push_load
load=target/release/examples/push_load
admin_key="push-bench-admin-key-0123456789abcdef-$(date +%s)-$$"
pids=()
logs=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -f "${logs[@]}"
}
trap cleanup EXIT

start() { # start LOG ARGS...: the server's base URL in $base, its pid in $pid
  local log=$1; shift
  TOGGLE_ADMIN_BOOTSTRAP_KEY="$admin_key" RUST_LOG=warn target/release/toggle-admin serve "$@" \
    --addr 127.0.0.1:0 --max-streams 1000000 --max-streams-per-key 1000000 >"$log" &
  pid=$!
  pids+=("$pid")
  logs+=("$log")
  for _ in $(seq 1 200); do grep -q "listening on" "$log" && break; sleep 0.1; done
  base=$(sed -n 's/^listening on //p' "$log")
}

echo "--- fan-out: $streams streams, one change (memory store)"
start "$(mktemp)" --memory
"$load" fanout "$base" "$admin_key" "$streams" "$pid"
kill "$pid"

echo "--- delta polling against full polling: 1,000 flags, 16 connections, one change a second"
start "$(mktemp)" --memory
"$load" delta "$base" "$admin_key" "$seconds"
kill "$pid"

if [ -n "${TOGGLE_ADMIN_TEST_POSTGRES:-}" ]; then
  schema="push_bench_$(date +%s)_$$"
  echo "--- cross-instance: commit on A to event on B, $changes changes (PostgreSQL schema $schema)"
  start "$(mktemp)" --postgres "$TOGGLE_ADMIN_TEST_POSTGRES" --postgres-schema "$schema"
  base_a=$base
  start "$(mktemp)" --postgres "$TOGGLE_ADMIN_TEST_POSTGRES" --postgres-schema "$schema"
  base_b=$base
  pid_b=$pid
  "$load" cross "$base_a" "$base_b" "$admin_key" "$changes"
  idle=${IDLE_SECONDS:-30}
  echo "--- idle: the database's transactions while both instances sit idle, a stream open on B, ${idle} s"
  # Every transaction of the database meanwhile. PostgreSQL's statistics lag: a backend
  # reports its counts at most once a second, and an idle one 10 s after its last
  # transaction, so the count starts 12 s after the last change (or the changes above would
  # be counted as idle ones) and is a difference of two counts that lag alike. Each psql
  # call counts one. Nothing else should use the database.
  count() { psql "$TOGGLE_ADMIN_TEST_POSTGRES" -tAc \
    "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"; }
  "$load" hold "$base_b" "$admin_key" $((idle + 16)) &
  holder=$!
  sleep 12
  before=$(count)
  sleep "$idle"
  after=$(count)
  wait "$holder"
  echo "idle instances: $((after - before - 1)) transactions in ${idle} s"
  psql "$TOGGLE_ADMIN_TEST_POSTGRES" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null
fi
