#!/usr/bin/env bash
# Load test of `GET /api/client/features` with wrk: 1,000 features (a
# flexibleRollout strategy each, every third with constraints, every fifth with strategy
# variants) in `development`, 16 connections, the 200 path (full answer) and the 304 path
# (`If-None-Match` with the ETag of the previous answer). The server (`toggle-admin serve`) runs on a
# temporary store; when UNLEASH_URL is set, the same state is created in that Unleash and
# measured in the same run, so the ratios compare like with like. Prints one table, then the
# medians and the ratios.
#
#   scripts/client-bench.sh                          # toggle-admin only, 10 s each, 3 runs
#   SECONDS_EACH=10 RUNS=3 STORE=memory scripts/client-bench.sh
#   UNLEASH_URL=http://127.0.0.1:4242 UNLEASH_ADMIN_TOKEN='*:*.bench-admin-token' \
#       scripts/client-bench.sh                      # and Unleash (scripts/unleash-baseline.sh)
#
# STORE: `file` (default; a FileStore in a temporary directory) or `memory`.
# UNLEASH_CLIENT_TOKEN: a client token of Unleash for `development`; one is created when unset.
# Needs wrk (apt-get install wrk), curl and python3. Never run by CI: timings belong in
# BENCHMARKS.md, not in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${SECONDS_EACH:-10}
RUNS=${RUNS:-3}
FEATURES=${FEATURES:-1000}
CONNECTIONS=${CONNECTIONS:-16}
STORE=${STORE:-file}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }

cargo build --quiet --release -p toggle-admin-server
BIN=target/release/toggle-admin
work=$(mktemp -d)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_server() {
    local port store
    port=$(free_port)
    OURS="http://127.0.0.1:$port"
    case $STORE in
        memory) store=(--memory) ;;
        file) store=(--data "$work/data") ;;
        *) echo "STORE must be file or memory, not $STORE" >&2; exit 1 ;;
    esac
    RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY "$BIN" serve "${store[@]}" --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null -H "Authorization: $KEY" "$OURS/api/admin/projects/default" && return 0
        sleep 0.1
    done
    echo "the server did not start:" >&2; cat "$work/server.log" >&2; exit 1
}

# Creates the features through the admin API (the same requests for both servers, as an
# administrator would send them to Unleash) and prints a client key for `development`.
seed() { # base-url admin-key [client-key]
    python3 - "$@" "$FEATURES" <<'PY'
import http.client, json, sys, urllib.parse
base, admin = sys.argv[1], sys.argv[2]
client = sys.argv[3] if len(sys.argv) > 4 else ""
count = int(sys.argv[-1])
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
if not client:
    token = call("POST", "/api/admin/api-tokens", {"tokenName": "client-bench", "type": "client",
                                                  "environment": "development", "projects": ["default"]})
    client = token["secret"]
print(client)
PY
}

cat > "$work/etag.lua" <<'LUA'
wrk.method = "GET"
wrk.headers["Authorization"] = os.getenv("BENCH_CLIENT_KEY")
local etag = os.getenv("BENCH_ETAG") or ""
if etag ~= "" then
    wrk.headers["If-None-Match"] = etag
end
LUA

# A first request by hand: the features are all there, and the 304 path answers 304.
check() { # base-url client-key → the ETag
    local headers status
    headers=$(curl -s -D - -o "$work/features.json" -H "Authorization: $2" "$1/api/client/features")
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=sum(1 for f in d["features"] if f["name"].startswith("client-bench-")); assert n == int(sys.argv[2]), (n, sys.argv[2])' \
        "$work/features.json" "$FEATURES" || { echo "$1 does not answer the $FEATURES features" >&2; exit 1; }
    local etag
    etag=$(awk 'tolower($1)=="etag:" {sub(/\r$/,""); $1=""; sub(/^ /,""); print}' <<<"$headers")
    [ -n "$etag" ] || { echo "$1 answers without an ETag" >&2; exit 1; }
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: $2" -H "If-None-Match: $etag" "$1/api/client/features")
    [ "$status" = 304 ] || { echo "$1 answers $status, not 304, to If-None-Match $etag" >&2; exit 1; }
    echo "$1 answers $(wc -c <"$work/features.json") bytes (uncompressed), ETag $etag" >&2
    echo "$etag"
}

scenario() { # base-url client-key etag → "req/s p50 p99 max errors"
    local out rps p50 p99 max errors
    out=$(BENCH_CLIENT_KEY=$2 BENCH_ETAG=$3 wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_EACH}s" --latency \
        -s "$work/etag.lua" "$1/api/client/features" 2>&1)
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    max=$(awk '$1=="Latency" {print $4}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "$rps $p50 $p99 $max ${errors:-0}"
}

start_server
ours_client=$(seed "$OURS" "$KEY")
ours_etag=$(check "$OURS" "$ours_client")
targets=("toggle-admin ($STORE)|$OURS|$ours_client|$ours_etag")
if [ -n "${UNLEASH_URL:-}" ]; then
    unleash_client=$(seed "$UNLEASH_URL" "${UNLEASH_ADMIN_TOKEN:?UNLEASH_ADMIN_TOKEN is needed with UNLEASH_URL}" "${UNLEASH_CLIENT_TOKEN:-}")
    unleash_etag=$(check "$UNLEASH_URL" "$unleash_client")
    version=$(curl -s -H "Authorization: $UNLEASH_ADMIN_TOKEN" "$UNLEASH_URL/api/admin/ui-config" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version","?"))' 2>/dev/null || echo "?")
    targets+=("Unleash $version|$UNLEASH_URL|$unleash_client|$unleash_etag")
fi
echo "GET /api/client/features: $FEATURES features, $CONNECTIONS connections, wrk -t2, ${SECONDS_EACH}s each," \
    "no Accept-Encoding, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server | path | run | req/s | p50 | p99 | max | non-2xx/3xx |"
echo "|---|---|---|---|---|---|---|---|"
: >"$work/results"
for run in $(seq 1 "$RUNS"); do
    for target in "${targets[@]}"; do
        IFS='|' read -r label base client etag <<<"$target"
        for path in 200 304; do
            [ "$path" = 200 ] && tag= || tag=$etag
            read -r rps p50 p99 max errors < <(scenario "$base" "$client" "$tag")
            echo "| $label | $path | $run | $rps | $p50 | $p99 | $max | $errors |"
            echo "$label|$path|$rps|$p50|$p99|$max" >>"$work/results"
        done
    done
done

echo
python3 - "$work/results" <<'PY'
import statistics, sys
def ms(text):
    for unit, factor in (("us", 0.001), ("ms", 1.0), ("s", 1000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float("nan")
rows = {}
for line in open(sys.argv[1]):
    label, path, rps, p50, p99, mx = line.strip().split("|")
    rows.setdefault((label, path), []).append((float(rps), ms(p50), ms(p99), ms(mx)))
med = {k: [statistics.median(col) for col in zip(*v)] for k, v in rows.items()}
print("| server | path | median req/s | median p50 | median p99 | median max |")
print("|---|---|---|---|---|---|")
for (label, path), (rps, p50, p99, mx) in med.items():
    print(f"| {label} | {path} | {rps:,.0f} | {p50:.2f} ms | {p99:.2f} ms | {mx:.2f} ms |")
labels = list(dict.fromkeys(label for label, _ in med))
ours = labels[0]
print()
print(f"{ours}: 304 path / 200 path = {med[(ours, '304')][0] / med[(ours, '200')][0]:.1f}×")
for other in labels[1:]:
    for path in ("200", "304"):
        print(f"{ours} / {other}, {path} path: {med[(ours, path)][0] / med[(other, path)][0]:.1f}× the throughput")
PY
