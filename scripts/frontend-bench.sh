#!/usr/bin/env bash
# Load test of `GET /api/frontend` with wrk: the client benchmark's 1,000 flags
# (scripts/client-bench.sh: a flexibleRollout each, every third with constraints, every
# fifth with strategy variants) in `development`, 16 connections, a new `userId` on every
# request (so no per-context answer cache can help). The server (`toggle-admin serve`) runs in memory.
#
# Side by side in the same run, when available:
# * Unleash Edge in front of our server (EDGE_BIN, default /work/edge-bin/bin/unleash-edge
#   or `unleash-edge` on PATH; `cargo install --locked unleash-edge`): it validates the
#   frontend key with `POST /edge/validate`, reads the flags with a client key through
#   `/api/client/features` and evaluates them itself;
# * an Unleash (UNLEASH_URL and UNLEASH_ADMIN_TOKEN, e.g. scripts/unleash-baseline.sh): the
#   same flags are created there through its admin API.
#
#   scripts/frontend-bench.sh                        # 10 s each, 3 runs
#   SECONDS_EACH=10 RUNS=3 CONNECTIONS=16 scripts/frontend-bench.sh
#
# Then the client API (`/api/client/features`) of the same servers, its 200 path (no ETag)
# and its 304 path (the current ETag).
#
# Needs wrk (apt-get install wrk), curl and python3. Never run by CI: timings belong in
# BENCHMARKS.md, not in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${SECONDS_EACH:-10}
RUNS=${RUNS:-3}
FEATURES=${FEATURES:-1000}
CONNECTIONS=${CONNECTIONS:-16}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
EDGE_BIN=${EDGE_BIN:-$(command -v unleash-edge || echo /work/edge-bin/bin/unleash-edge)}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

cargo build --quiet --release -p toggle-admin-server
BIN=target/release/toggle-admin
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

port=$(free_port)
OURS="http://127.0.0.1:$port"
RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY "$BIN" serve --memory --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
    curl -sf -o /dev/null -H "Authorization: $KEY" "$OURS/api/admin/projects/default" && break
    sleep 0.1
done

# Creates the flags through the admin API (as scripts/client-bench.sh does) and prints a
# frontend key and a client key for `development`.
seed() { # base-url admin-key
    python3 - "$1" "$2" "$FEATURES" <<'PY'
import http.client, json, sys, urllib.parse
base, admin, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

def call(method, path, body=None, ok=(200, 201, 202, 204)):
    headers = {"Authorization": admin, "Content-Type": "application/json"}
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    answer = conn.getresponse()
    data = answer.read()
    if answer.status not in ok:
        sys.exit(f"{method} {path} answered {answer.status}: {data[:300]!r}")
    return json.loads(data) if data else None

project = "/api/admin/projects/default/features"
for i in range(count):
    name = f"client-bench-{i:04}"
    conn.request("GET", f"{project}/{name}", headers={"Authorization": admin})
    exists = conn.getresponse()
    exists.read()
    if exists.status == 200:
        continue
    call("POST", project, {"name": name, "description": f"benchmark feature {i}"})
    strategy = {
        "name": "flexibleRollout",
        "parameters": {"rollout": str(10 + i % 90), "stickiness": "default", "groupId": name},
        "constraints": [],
    }
    if i % 3 == 0:
        strategy["constraints"] = [
            {"contextName": "userId", "operator": "IN", "values": [str(n) for n in range(i % 7 + 1)]},
            {"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["web", "ios"],
             "caseInsensitive": True},
        ]
    if i % 5 == 0:
        strategy["variants"] = [
            {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default",
             "payload": {"type": "string", "value": "blue"}},
            {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"},
        ]
    call("POST", f"{project}/{name}/environments/development/strategies", strategy)
    call("POST", f"{project}/{name}/environments/development/on")
frontend = call("POST", "/api/admin/api-tokens", {"tokenName": "frontend-bench", "type": "frontend",
                                                 "environment": "development", "projects": ["default"]})
client = call("POST", "/api/admin/api-tokens", {"tokenName": "frontend-bench-edge", "type": "client",
                                               "environment": "development", "projects": ["default"]})
print(frontend["secret"], client["secret"])
PY
}

cat > "$work/frontend.lua" <<'LUA'
-- A new userId on every request: no answer cache keyed by context can help.
wrk.method = "GET"
wrk.headers["Authorization"] = os.getenv("BENCH_KEY")
local counter = 0
local prefix = tostring(math.random(1, 1000000000))
request = function()
    counter = counter + 1
    return wrk.format(nil, "/api/frontend?appName=web&userId=" .. prefix .. "-" .. counter)
end
LUA
cat > "$work/client.lua" <<'LUA'
-- The client API's document, with the ETag of BENCH_ETAG when set (the 304 path).
wrk.method = "GET"
wrk.headers["Authorization"] = os.getenv("BENCH_KEY")
local etag = os.getenv("BENCH_ETAG")
if etag ~= nil and etag ~= "" then wrk.headers["If-None-Match"] = etag end
LUA

check() { # base-url frontend-key: the answer lists flags
    local n
    n=$(curl -s -H "Authorization: $2" "$1/api/frontend?appName=web&userId=check-1" \
        | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["toggles"]))')
    [ "$n" -gt 0 ] || { echo "$1 answers no flags" >&2; exit 1; }
    echo "$1: $n of $FEATURES flags enabled for one user; $(curl -s -H "Authorization: $2" \
        "$1/api/frontend?appName=web&userId=check-1" | wc -c) bytes an answer" >&2
}

scenario() { # url key [lua script] [etag] → "req/s p50 p99 max errors"
    local out rps p50 p99 max errors
    out=$(BENCH_KEY=$2 BENCH_ETAG=${4:-} wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" --latency \
        -s "${3:-$work/frontend.lua}" "$1" 2>&1)
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    max=$(awk '$1=="Latency" {print $4}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "$rps $p50 $p99 $max ${errors:-0}"
}

read -r frontend_key client_key < <(seed "$OURS" "$KEY")
check "$OURS" "$frontend_key"
targets=("toggle-admin|$OURS|$frontend_key")
clients=("toggle-admin|$OURS|$client_key")

if [ -x "$EDGE_BIN" ]; then
    eport=$(free_port)
    EDGE="http://127.0.0.1:$eport"
    "$EDGE_BIN" --port "$eport" --interface 127.0.0.1 edge --upstream-url "$OURS" \
        --tokens "$client_key" --features-refresh-interval-seconds 3600 >"$work/edge.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null -H "Authorization: $frontend_key" "$EDGE/api/frontend" && break
        sleep 0.2
    done
    check "$EDGE" "$frontend_key"
    # Edge prints no version; `cargo install` records it beside the binary.
    edge_version=${EDGE_VERSION:-$(grep -o 'unleash-edge [0-9.]*' "$(dirname "$EDGE_BIN")/../.crates.toml" 2>/dev/null | awk '{print $2}' || true)}
    edge_label="Unleash Edge $edge_version (in front)"
    targets+=("$edge_label|$EDGE|$frontend_key")
    clients+=("$edge_label|$EDGE|$client_key")
else
    echo "no Unleash Edge at $EDGE_BIN: measuring without it" >&2
fi
if [ -n "${UNLEASH_URL:-}" ]; then
    read -r unleash_frontend unleash_client < <(seed "$UNLEASH_URL" "${UNLEASH_ADMIN_TOKEN:?UNLEASH_ADMIN_TOKEN is needed with UNLEASH_URL}")
    check "$UNLEASH_URL" "$unleash_frontend"
    targets+=("Unleash|$UNLEASH_URL|$unleash_frontend")
    clients+=("Unleash|$UNLEASH_URL|$unleash_client")
fi

summarise() { # results-file: medians per server, and the first server's ratio to each
python3 - "$1" <<'PY'
import statistics, sys
def ms(text):
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float("nan")
rows = {}
for line in open(sys.argv[1]):
    label, rps, p50, p99, mx = line.strip().split("|")
    rows.setdefault(label, []).append((float(rps), ms(p50), ms(p99), ms(mx)))
med = {k: [statistics.median(col) for col in zip(*v)] for k, v in rows.items()}
print("| server | median req/s | median p50 | median p99 | median max |")
print("|---|---|---|---|---|")
for label, (rps, p50, p99, mx) in med.items():
    print(f"| {label} | {rps:,.0f} | {p50:.2f} ms | {p99:.2f} ms | {mx:.2f} ms |")
labels = list(med)
for other in labels[1:]:
    print(f"{labels[0]} / {other}: {med[labels[0]][0] / med[other][0]:.1f}× the throughput")
PY
}

echo "GET /api/frontend: $FEATURES flags, a new userId per request, $CONNECTIONS connections," \
    "wrk -t2, ${SECONDS_EACH}s each, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server | run | req/s | p50 | p99 | max | non-2xx/3xx |"
echo "|---|---|---|---|---|---|---|"
: >"$work/results"
for run in $(seq 1 "$RUNS"); do
    for target in "${targets[@]}"; do
        IFS='|' read -r label base key <<<"$target"
        read -r rps p50 p99 max errors < <(scenario "$base/api/frontend" "$key")
        echo "| $label | $run | $rps | $p50 | $p99 | $max | $errors |"
        echo "$label|$rps|$p50|$p99|$max" >>"$work/results"
    done
done

echo
summarise "$work/results"

# The client API of the same servers (Unleash Edge serves its copy of our document): the 200
# path (no ETag) and the 304 path (the current ETag).
for path in 200 304; do
    echo
    echo "GET /api/client/features, the $path path: $CONNECTIONS connections, wrk -t2, ${SECONDS_EACH}s each"
    echo
    echo "| server | run | req/s | p50 | p99 | max | non-2xx/3xx |"
    echo "|---|---|---|---|---|---|---|"
    : >"$work/results-$path"
    for run in $(seq 1 "$RUNS"); do
        for target in "${clients[@]}"; do
            IFS='|' read -r label base key <<<"$target"
            etag=
            if [ "$path" = 304 ]; then
                etag=$(curl -sf -D - -o /dev/null -H "Authorization: $key" "$base/api/client/features" \
                    | awk 'tolower($1) == "etag:" {sub(/\r$/, "", $2); print $2}')
            fi
            read -r rps p50 p99 max errors < <(scenario "$base/api/client/features" "$key" "$work/client.lua" "$etag")
            echo "| $label | $run | $rps | $p50 | $p99 | $max | $errors |"
            echo "$label|$rps|$p50|$p99|$max" >>"$work/results-$path"
        done
    done
    echo
    summarise "$work/results-$path"
done
