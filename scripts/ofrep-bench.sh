#!/usr/bin/env bash
# Load test of OFREP with wrk, next to the frontend API and the `GET /health` floor, in the
# same run on the same server: the client benchmark's 1,000 flags (as scripts/frontend-bench.sh
# creates them: a flexibleRollout each, every third with constraints, every fifth with
# strategy variants) in `development`, a frontend key, 16 connections, a new `targetingKey`
# (`userId`) on every request. The `server` example runs in memory.
#
#   scripts/ofrep-bench.sh                                  # 10 s each, 3 runs
#   SECONDS_EACH=10 RUNS=3 CONNECTIONS=16 scripts/ofrep-bench.sh
#
# Needs wrk (apt-get install wrk), curl and python3. Never run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${SECONDS_EACH:-10}
RUNS=${RUNS:-3}
FEATURES=${FEATURES:-1000}
CONNECTIONS=${CONNECTIONS:-16}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

# SKIP_BUILD=1 measures the release binary as it is.
[ -n "${SKIP_BUILD:-}" ] || cargo build --quiet --release -p toggle-admin-server
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$port"
RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY target/release/toggle-admin serve --memory \
    --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    curl -sf -o /dev/null "$BASE/health" && break
    sleep 0.1
done

frontend_key=$(python3 - "$BASE" "$KEY" "$FEATURES" <<'PY'
import http.client, json, sys, urllib.parse
base, admin, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
def call(method, path, body=None):
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Authorization": admin, "Content-Type": "application/json"})
    answer = conn.getresponse()
    data = answer.read()
    if answer.status >= 300:
        sys.exit(f"{method} {path} answered {answer.status}: {data[:300]!r}")
    return json.loads(data) if data else None
project = "/api/admin/projects/default/features"
for i in range(count):
    name = f"client-bench-{i:04}"
    call("POST", project, {"name": name})
    strategy = {"name": "flexibleRollout", "constraints": [],
                "parameters": {"rollout": str(10 + i % 90), "stickiness": "default", "groupId": name}}
    if i % 3 == 0:
        strategy["constraints"] = [
            {"contextName": "userId", "operator": "IN", "values": [str(n) for n in range(i % 7 + 1)]},
            {"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["web", "ios"],
             "caseInsensitive": True}]
    if i % 5 == 0:
        strategy["variants"] = [
            {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default",
             "payload": {"type": "string", "value": "blue"}},
            {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"}]
    call("POST", f"{project}/{name}/environments/development/strategies", strategy)
    call("POST", f"{project}/{name}/environments/development/on")
token = call("POST", "/api/admin/api-tokens", {"tokenName": "ofrep-bench", "type": "frontend",
             "environment": "development", "projects": ["default"]})
print(token["secret"])
PY
)

# wrk scripts: a new user on every request (no answer cache keyed by context can help).
cat > "$work/get.lua" <<'LUA'
wrk.headers["Authorization"] = os.getenv("BENCH_KEY")
local counter, prefix = 0, tostring(math.random(1, 1000000000))
request = function()
    counter = counter + 1
    return wrk.format("GET", os.getenv("BENCH_PATH") .. "?appName=web&userId=" .. prefix .. "-" .. counter)
end
LUA
cat > "$work/post.lua" <<'LUA'
wrk.headers["Authorization"] = os.getenv("BENCH_KEY")
wrk.headers["Content-Type"] = "application/json"
local counter, prefix = 0, tostring(math.random(1, 1000000000))
request = function()
    counter = counter + 1
    local body = '{"context":{"appName":"web","targetingKey":"' .. prefix .. "-" .. counter .. '"}}'
    return wrk.format("POST", os.getenv("BENCH_PATH"), nil, body)
end
LUA
cat > "$work/health.lua" <<'LUA'
wrk.method = "GET"
LUA

scenario() { # label lua path → a table row; "label|req/s|p50|p99" into results
    local out rps p50 p99 errors
    out=$(BENCH_KEY=$frontend_key BENCH_PATH=$3 wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" \
        --latency -s "$work/$2.lua" "$BASE$3" 2>&1)
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "| $1 | $run | $rps | $p50 | $p99 | ${errors:-0} |"
    echo "$1|$rps|$p50|$p99" >>"$work/results"
}

bytes=$(curl -s -X POST -H "Authorization: $frontend_key" -d '{"context":{"targetingKey":"1"}}' \
    "$BASE/ofrep/v1/evaluate/flags" | wc -c)
echo "OFREP next to the frontend API: $FEATURES flags, a new user per request, $CONNECTIONS" \
    "connections, wrk -t2, ${SECONDS_EACH}s each, $(nproc) cores, load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg); a bulk answer is $bytes bytes"
echo
echo "| route | run | req/s | p50 | p99 | non-2xx/3xx |"
echo "|---|---|---|---|---|---|"
: >"$work/results"
for run in $(seq 1 "$RUNS"); do
    scenario "GET /health" health /health
    scenario "GET /api/frontend" get /api/frontend
    scenario "POST /api/frontend/all" post /api/frontend/all
    scenario "POST /ofrep/v1/evaluate/flags" post /ofrep/v1/evaluate/flags
    scenario "POST /ofrep/v1/evaluate/flags/{key}" post /ofrep/v1/evaluate/flags/client-bench-0003
done
echo
python3 - "$work/results" <<'PY'
import statistics, sys
def ms(t):
    for unit, f in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if t.endswith(unit):
            return float(t[: -len(unit)]) * f
    return float("nan")
rows = {}
for line in open(sys.argv[1]):
    label, rps, p50, p99 = line.strip().split("|")
    rows.setdefault(label, []).append((float(rps), ms(p50), ms(p99)))
med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
print("| route | median req/s | median p50 | median p99 |")
print("|---|---|---|---|")
for label, (rps, p50, p99) in med.items():
    print(f"| {label} | {rps:,.0f} | {p50:.2f} ms | {p99:.2f} ms |")
bulk = med["POST /ofrep/v1/evaluate/flags"][0]
print(f"OFREP bulk / GET /api/frontend: {bulk / med['GET /api/frontend'][0]:.2f}×; "
      f"/ POST /api/frontend/all: {bulk / med['POST /api/frontend/all'][0]:.2f}×; "
      f"single flag / GET /health: {med['POST /ofrep/v1/evaluate/flags/{key}'][0] / med['GET /health'][0]:.2f}×")
PY
