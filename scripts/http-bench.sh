#!/usr/bin/env bash
# Load test of the server (`toggle-admin serve`) with wrk: the PATCH env-variants request of
# BENCHMARKS.md, three scenarios (1 connection on one feature, 16 connections on one feature,
# 16 connections over 16 features) against a MemoryStore, a durable FileStore and, when POSTGRES_URL is set,
# a PostgresStore, all in one run so the ratios compare like with like. Prints one table.
#
#   scripts/http-bench.sh                 # 10 s per scenario, 1 run
#   SECONDS_EACH=10 RUNS=3 scripts/http-bench.sh
#   POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test scripts/http-bench.sh
#   STORES="postgres" BASELINE_BIN=/path/to/old/toggle-admin POSTGRES_URL=... scripts/http-bench.sh
#
# STORES picks stores (default: memory file, and postgres when POSTGRES_URL is set);
# BASELINE_BIN names another build of `toggle-admin` (an earlier commit's, say, or the `server`
# example of the commits before the program) that runs every scenario right after this
# build's, in the same run, in rows marked "baseline";
# SCENARIOS picks the scenarios as connections:features pairs (default "1:1 16:1 16:16");
# ALLOCATOR=system builds the server without its feature `mimalloc` (default: mimalloc, as
# it ships);
# SKIP_EXPORT=1 leaves out the export timings.
#
# Needs wrk (apt-get install wrk) and curl. Never run by CI: timings belong here, not in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${SECONDS_EACH:-10}
RUNS=${RUNS:-1}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

allocator=()
[ "${ALLOCATOR:-mimalloc}" = system ] && allocator=(--no-default-features)
cargo build --quiet --release -p toggle-admin-server "${allocator[@]}"
BIN=target/release/toggle-admin
# The word before a binary's flags: `serve` for `toggle-admin`, none for an older `server`.
subcommand() { [ "$(basename "$1")" = server ] || echo serve; }
server_bin=$BIN
bins=("$BIN")
[ -n "${BASELINE_BIN:-}" ] && bins+=("$BASELINE_BIN")
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_server() { # args: store arguments
    port=$(free_port)
    BASE="http://127.0.0.1:$port"
    # shellcheck disable=SC2046 # `subcommand` prints one word or none
    RUST_LOG=warn,toggle_admin::serve=info,server=info TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY "$server_bin" $(subcommand "$server_bin") "$@" --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null -H "Authorization: $KEY" "$BASE/api/admin/projects/default" && return 0
        sleep 0.1
    done
    echo "the server did not start:" >&2; cat "$work/server.log" >&2; exit 1
}

stop_server() { # and print what the FileStore counted, if it was one
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
    grep -o 'commits=.*longest_batch_us=[0-9]*' "$work/server.log" | sed 's/^/  FileStore: /' >&2 || true
}

seed() { # 16 features with two variants each in `development`
    for i in $(seq 0 15); do
        curl -sf -o /dev/null -X POST "$BASE/api/admin/projects/default/features" \
            -H "Authorization: $KEY" -H 'Content-Type: application/json' -d "{\"name\":\"bench$i\"}"
        curl -sf -o /dev/null -X PUT "$BASE/api/admin/projects/default/features/bench$i/environments/development/variants" \
            -H "Authorization: $KEY" -H 'Content-Type: application/json' \
            -d '[{"name":"a","weight":500,"weightType":"variable","stickiness":"default"},{"name":"b","weight":500,"weightType":"variable","stickiness":"default"}]'
    done
}

cat > "$work/patch.lua" <<LUA
local features = tonumber(os.getenv("BENCH_FEATURES") or "1")
local n = 0
wrk.method = "PATCH"
wrk.headers["Authorization"] = "$KEY"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '[{"op":"replace","path":"/0/stickiness","value":"userId"},{"op":"add","path":"/1/payload","value":{"type":"string","value":"x"}},{"op":"replace","path":"/1/stickiness","value":"default"}]'
request = function()
    n = n + 1
    local path = "/api/admin/projects/default/features/bench" .. (n % features) .. "/environments/development/variants"
    return wrk.format(nil, path)
end
LUA

scenario() { # connections features → "req/s p50 p99 max errors"
    local out
    out=$(BENCH_FEATURES=$2 wrk -t"$(( $1 < 2 ? 1 : 2 ))" -c"$1" -d"${SECONDS_EACH}s" --latency -s "$work/patch.lua" "$BASE" 2>&1)
    local rps p50 p99 max errors
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    max=$(awk '$1=="Latency" {print $4}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "$rps $p50 $p99 $max ${errors:-0}"
}

# Export of 3,000 features: median of 5, unloaded and while 1 and 4 wrk connections patch.
export_times() { # → median seconds of 5 exports
    for _ in 1 2 3 4 5; do
        curl -s -o "$work/export.json" -w '%{time_total}\n' -X POST "$BASE/api/admin/features-batch/export" \
            -H "Authorization: $KEY" -H 'Content-Type: application/json' \
            -d '{"environment":"development","project":"default"}'
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["features"]) >= 3000, len(d["features"])' "$work/export.json" \
            || { echo "an export answered without all features" >&2; exit 1; }
    done | sort -n | sed -n 3p
}

export_scenario() { # store arguments
    start_server "$@"
    seed
    python3 - "$work/import.json" <<'PY'
import json, sys
features = [{"name": f"export{i:04}", "type": "release", "project": "default"} for i in range(3000)]
strategies = [{"name": "default", "featureName": f["name"], "parameters": {}, "constraints": []} for f in features]
environments = [{"name": f["name"], "featureName": f["name"], "environment": "development", "enabled": True, "variants": []} for f in features]
body = {"project": "default", "environment": "development",
        "data": {"features": features, "featureStrategies": strategies, "featureEnvironments": environments, "contextFields": [], "featureTags": [], "segments": [], "tagTypes": [], "dependencies": []}}
json.dump(body, open(sys.argv[1], "w"))
PY
    curl -sf -o /dev/null -X POST "$BASE/api/admin/features-batch/import" -H "Authorization: $KEY" \
        -H 'Content-Type: application/json' --data-binary @"$work/import.json"
    local idle one four
    idle=$(export_times)
    BENCH_FEATURES=1 wrk -t1 -c1 -d60s -s "$work/patch.lua" "$BASE" > "$work/wrk1.txt" 2>&1 &
    local load=$!
    sleep 1; one=$(export_times); kill "$load"; wait "$load" 2>/dev/null || true
    BENCH_FEATURES=16 wrk -t2 -c4 -d60s -s "$work/patch.lua" "$BASE" > "$work/wrk4.txt" 2>&1 &
    load=$!
    sleep 1; four=$(export_times); kill "$load"; wait "$load" 2>/dev/null || true
    stop_server
    echo "$idle $one $four"
}

# The floor a durable commit pays, median of 300 on the data directory's file system (the
# same run as the figures it explains): a 1.3 KB append + fdatasync (what the FileStore did
# before journal format 2, and the floor a durable commit was first compared with), and a 1.3 KB write
# over zeros written and synced beforehand + fdatasync (what it does now).
fsync_floor() {
    python3 - "$work" <<'PY'
import os, statistics, sys, time
path = os.path.join(sys.argv[1], "fsync-floor")
def median(prezeroed):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
    if prezeroed:
        os.write(fd, bytes(1300 * 300)); os.fdatasync(fd)
    times = []
    for i in range(300):
        started = time.perf_counter()
        os.pwrite(fd, b"x" * 1300, i * 1300)
        os.fdatasync(fd)
        times.append(time.perf_counter() - started)
    os.close(fd)
    os.remove(path)
    return statistics.median(times) * 1e6
print(f"append {median(False):.0f} µs, over zeros {median(True):.0f} µs")
PY
}
echo "fsync floor (1.3 KB write + fdatasync, median of 300): $(fsync_floor)"
echo

if [ -n "${STORES:-}" ]; then
    read -r -a stores <<<"$STORES"
else
    stores=("memory" "file")
    [ -n "${POSTGRES_URL:-}" ] && stores+=("postgres")
fi
read -r -a scenarios <<<"${SCENARIOS:-1:1 16:1 16:16}"
echo "| store | scenario | run | req/s | p50 | p99 | max | non-2xx |"
echo "|---|---|---|---|---|---|---|---|"
for run in $(seq 1 "$RUNS"); do
    for store in "${stores[@]}"; do
      for server_bin in "${bins[@]}"; do
        label=$store
        [ "$server_bin" != "$BIN" ] && label="$store (baseline)"
        case $store in
            memory) start_server --memory ;;
            file) rm -rf "$work/data"; start_server --data "$work/data" ;;
            postgres)
                schema="bench_$(date +%s%N)_$run"
                start_server --postgres "$POSTGRES_URL" --postgres-schema "$schema" ;;
        esac
        seed
        # One request by hand first: a benchmark of error answers measures nothing.
        status=$(curl -s -o "$work/answer" -w '%{http_code}' -X PATCH -H "Authorization: $KEY" \
            -H 'Content-Type: application/json' --data "$(awk -F"'" '/wrk.body/ {print $2}' "$work/patch.lua")" \
            "$BASE/api/admin/projects/default/features/bench0/environments/development/variants")
        [ "$status" = 200 ] || { echo "the PATCH answers $status: $(cat "$work/answer")" >&2; exit 1; }
        for spec in "${scenarios[@]}"; do
            set -- ${spec/:/ }
            read -r rps p50 p99 max errors < <(scenario "$1" "$2")
            echo "| $label | $1 conn, $2 feature(s) | $run | $rps | $p50 | $p99 | $max | $errors |"
        done
        stop_server
        if [ "$store" = postgres ]; then
            psql "$POSTGRES_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
        fi
      done
    done
done
server_bin=$BIN

echo
echo "fsync floor after the runs: $(fsync_floor)"
[ "${SKIP_EXPORT:-}" = 1 ] && exit 0
echo
echo "| store | export of 3,000 features, unloaded | while 1 client patches | while 4 clients patch |"
echo "|---|---|---|---|"
for store in memory file; do
    case $store in
        memory) read -r idle one four < <(export_scenario --memory) ;;
        file) rm -rf "$work/data"; read -r idle one four < <(export_scenario --data "$work/data") ;;
    esac
    echo "| $store | ${idle}s | ${one}s | ${four}s |"
done
