#!/usr/bin/env bash
# Instructions per variants PATCH over HTTP (the request of scripts/http-bench.sh) on a
# MemoryStore, counted by valgrind's callgrind: a count, not a time, so it is the same
# whatever else the machine is doing, and two builds compare exactly. Each binary runs
# twice, once with N requests and once with none; the difference over N is the cost of one
# request (routing, the door, the flow, the commit, the answer).
#
#   scripts/patch-instructions.sh                                   # this build
#   BASELINE_BIN=/path/to/older/toggle-admin scripts/patch-instructions.sh
#   REQUESTS=2000 ALLOCATOR=mimalloc scripts/patch-instructions.sh
#
# Needs valgrind, curl and python3. Never run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${REQUESTS:-1000}
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
allocator=()
[ "${ALLOCATOR:-system}" = system ] && allocator=(--no-default-features)
# SKIP_BUILD=1 counts the release binary as it is.
[ -n "${SKIP_BUILD:-}" ] || cargo build --quiet --release -p toggle-admin-server "${allocator[@]}"
bins=(target/release/toggle-admin)
[ -n "${BASELINE_BIN:-}" ] && bins+=("$BASELINE_BIN")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The word before a binary's flags: `serve` for `toggle-admin`, none for an older `server`.
subcommand() { [ "$(basename "$1")" = server ] || echo serve; }

count() { # binary requests → instructions collected over the process's life
    local bin=$1 requests=$2 port pid
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # shellcheck disable=SC2046 # `subcommand` prints one word or none
    RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY valgrind --tool=callgrind \
        --callgrind-out-file="$work/callgrind.out" "$bin" $(subcommand "$bin") --memory \
        --addr "127.0.0.1:$port" >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break
        sleep 0.1
    done
    python3 - "$port" "$KEY" "$requests" <<'PY'
import http.client, json, sys
port, key, requests = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
def call(method, path, body):
    conn.request(method, path, json.dumps(body), {"Authorization": key, "Content-Type": "application/json"})
    answer = conn.getresponse()
    data = answer.read()
    if answer.status >= 300:
        sys.exit(f"{method} {path}: {answer.status} {data[:200]!r}")
features = "/api/admin/projects/default/features"
call("POST", features, {"name": "bench0"})
variants = f"{features}/bench0/environments/development/variants"
call("PUT", variants, [{"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"},
                       {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default"}])
patch = [{"op": "replace", "path": "/0/stickiness", "value": "userId"},
         {"op": "add", "path": "/1/payload", "value": {"type": "string", "value": "x"}},
         {"op": "replace", "path": "/1/stickiness", "value": "default"}]
for _ in range(requests):
    call("PATCH", variants, patch)
PY
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    awk '/Collected :/ {print $NF}' "$work/server.log"
}

echo "| build | instructions per PATCH ($REQUESTS requests, MemoryStore, callgrind) |"
echo "|---|---|"
for bin in "${bins[@]}"; do
    with=$(count "$bin" "$REQUESTS")
    without=$(count "$bin" 0)
    echo "| $bin | $(( (with - without) / REQUESTS )) |"
done
