#!/usr/bin/env bash
# Instructions per request of the OFREP bulk evaluation next to the frontend API, counted by
# valgrind's callgrind on the release server in memory with the benchmark's 1,000 flags
# (scripts/ofrep-bench.sh's): a count, not a time, so it is the same whatever else the
# machine is doing, and two builds compare exactly. The server starts with the count off;
# after the flags are created and every route answered once, each route is counted over
# REQUESTS requests (a new user each), alone. Periodic work that falls in a route's window
# (the write of buffered usage metrics, every 5 s) is counted with it and shown apart.
#
#   scripts/ofrep-instructions.sh                                     # this build
#   BASELINE_BIN=/path/to/older/toggle-admin scripts/ofrep-instructions.sh
#   REQUESTS=200 SKIP_BUILD=1 scripts/ofrep-instructions.sh
#
# Needs valgrind, curl and python3. Never run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${REQUESTS:-100}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
# SKIP_BUILD=1 counts the release binary as it is.
[ -n "${SKIP_BUILD:-}" ] || cargo build --quiet --release -p toggle-admin-server
bins=(target/release/toggle-admin)
[ -n "${BASELINE_BIN:-}" ] && bins+=("$BASELINE_BIN")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for bin in "${bins[@]}"; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    rm -f "$work"/callgrind.out*
    RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$work/callgrind.out" "$bin" serve --memory \
        --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.2
    done
    python3 - "http://127.0.0.1:$port" "$KEY" "$REQUESTS" "$pid" <<'PY'
import http.client, json, subprocess, sys, urllib.parse
base, admin, n, pid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
def call(method, path, body=None, key=admin):
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Authorization": key, "Content-Type": "application/json"})
    answer = conn.getresponse()
    data = answer.read()
    if answer.status >= 300:
        sys.exit(f"{method} {path} answered {answer.status}: {data[:300]!r}")
    return data
project = "/api/admin/projects/default/features"
for i in range(1000):
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
token = json.loads(call("POST", "/api/admin/api-tokens", {"tokenName": "ofrep-bench",
    "type": "frontend", "environment": "development", "projects": ["default"]}))["secret"]
routes = {
    "GET /api/frontend": lambda u: call("GET", f"/api/frontend?appName=web&userId={u}", key=token),
    "POST /api/frontend/all": lambda u: call("POST", "/api/frontend/all",
                                             {"appName": "web", "userId": u}, key=token),
    "POST /ofrep/v1/evaluate/flags": lambda u: call("POST", "/ofrep/v1/evaluate/flags",
        {"context": {"appName": "web", "targetingKey": u}}, key=token),
}
for label, route in routes.items():
    route("warm-up")
def control(*args):
    subprocess.run(["callgrind_control", *args, pid], check=True, capture_output=True)
for i, (label, route) in enumerate(routes.items()):
    control("--zero")
    control("--instr=on")
    for r in range(n):
        route(f"{i}-{r}")
    control("--instr=off")
    control(f"--dump={label.replace(' ', '_')}")
PY
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$bin ($REQUESTS requests a route):"
    for out in "$work"/callgrind.out.*; do
        label=$(sed -n 's/^desc: Trigger: dump //p' "$out" | tr '_' ' ')
        [ -n "$label" ] || continue
        total=$(sed -n 's/^totals: //p' "$out")
        periodic=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null |
            awk '/flush_client_metrics::\{\{closure\}\} / {gsub(",", "", $1); print $1; exit}')
        python3 -c "
total, periodic, n = $total, ${periodic:-0}, $REQUESTS
print(f'  {\"$label\":32} {total / n / 1e6:6.2f} M instructions a request'
      + (f' ({periodic / n / 1e6:.2f} M of them the write of usage metrics)' if periodic else ''))"
    done
done
