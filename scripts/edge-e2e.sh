#!/usr/bin/env bash
# A real Unleash Edge in front of the server, and the browser SDK `unleash-proxy-client`
# behind Edge: Edge validates the frontend key with `POST /edge/validate`, reads the flags
# with a client key through `/api/client/features`, evaluates them for the SDK, and sends
# the SDK's metrics on with `POST /api/client/metrics/bulk`; scripts/frontend_e2e.cjs checks
# the evaluations and that the counts reach the server's admin API.
#
#   EDGE_BIN=/path/to/unleash-edge scripts/edge-e2e.sh
#
# EDGE_BIN defaults to `unleash-edge` on PATH, else /work/edge-bin/bin/unleash-edge; install
# it with `cargo install --locked unleash-edge` (about 11 minutes of CPU, so not in CI).
set -euo pipefail
cd "$(dirname "$0")/.."

EDGE_BIN=${EDGE_BIN:-$(command -v unleash-edge || echo /work/edge-bin/bin/unleash-edge)}
[ -x "$EDGE_BIN" ] || { echo "no Unleash Edge at $EDGE_BIN (cargo install --locked unleash-edge)" >&2; exit 1; }
modules=target/frontend-e2e
if [ ! -d "$modules/node_modules/unleash-proxy-client" ]; then
  mkdir -p "$modules"
  npm install --silent --no-audit --no-fund --prefix "$modules" "unleash-proxy-client@3.8.2"
fi

cargo build -q -p toggle-admin-server
admin_key="edge-e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

TOGGLE_ADMIN_BOOTSTRAP_KEY="$admin_key" target/debug/toggle-admin serve --memory \
  --addr 127.0.0.1:0 >"$work/server.log" 2>"$work/server.err" &
pids+=($!)
for _ in $(seq 1 100); do
  if grep -q "listening on" "$work/server.log"; then break; fi
  sleep 0.1
done
base=$(sed -n 's/^listening on //p' "$work/server.log")
[ -n "$base" ] || { echo "the server did not start:" >&2; cat "$work/server.err" >&2; exit 1; }

client_key=$(curl -sf -X POST "$base/api/admin/api-tokens" -H "Authorization: $admin_key" \
  -H 'Content-Type: application/json' \
  -d '{"tokenName": "edge", "type": "client", "environment": "development"}' \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')

eport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
edge="http://127.0.0.1:$eport"
"$EDGE_BIN" --port "$eport" --interface 127.0.0.1 edge --upstream-url "$base" \
  --tokens "$client_key" --features-refresh-interval-seconds 1 --metrics-interval-seconds 1 \
  >"$work/edge.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do
  curl -sf -o /dev/null "$edge/internal-backstage/health" && break
  sleep 0.2
done
curl -sf -o /dev/null "$edge/internal-backstage/health" \
  || { echo "Unleash Edge did not start:" >&2; cat "$work/edge.log" >&2; exit 1; }
# Edge prints no version; `cargo install` records it beside the binary.
edge_version=$(grep -o 'unleash-edge [0-9.]*' "$(dirname "$EDGE_BIN")/../.crates.toml" 2>/dev/null | awk '{print $2}' || true)
echo "Unleash Edge ${edge_version:-(version unknown)} at $edge, in front of $base"

# Edge serves the client API from what it read from us.
n=$(curl -sf -H "Authorization: $client_key" "$edge/api/client/features" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[ "$n" = 2 ] || { echo "Edge does not serve the client features" >&2; cat "$work/edge.log" >&2; exit 1; }

if ! BASE="$base" SDK_BASE="$edge" ADMIN_KEY="$admin_key" METRICS_WAIT_SECONDS=30 \
  NODE_PATH="$modules/node_modules" node scripts/frontend_e2e.cjs; then
  echo "--- Edge's log" >&2; tail -50 "$work/edge.log" >&2
  exit 1
fi
