#!/usr/bin/env bash
# OpenFeature's OFREP providers against the real server: the web provider
# (@openfeature/ofrep-web-provider 0.4 with @openfeature/web-sdk, in Node with an EventSource
# polyfill, changes pushed through its stream) and the server provider
# (@openfeature/ofrep-provider) from npm, and the Python provider (openfeature-provider-ofrep
# 0.3 with openfeature-sdk) from PyPI. Starts `toggle-admin serve --memory`, creates the
# flags through the admin API, then runs scripts/ofrep_e2e.mjs and scripts/ofrep_e2e.py. The
# npm packages and the virtualenv go under target/ofrep-e2e (git-ignored). The Rust provider
# (open-feature-ofrep) is tested by verify/tests/http/ofrep_rust.rs. Exits non-zero if any
# expectation fails.
set -euo pipefail
cd "$(dirname "$0")/.."

local_dir=target/ofrep-e2e
mkdir -p "$local_dir"
if [ ! -d "$local_dir/node_modules/@openfeature/ofrep-web-provider" ]; then
  npm install --silent --no-audit --no-fund --prefix "$local_dir" \
    "@openfeature/ofrep-web-provider@~0.4.3" "@openfeature/web-sdk@^1.10.0" \
    "@openfeature/ofrep-provider@0.1.3" "@openfeature/server-sdk@^1.17.0" "eventsource@4.1.1"
fi
if [ ! -x "$local_dir/venv/bin/python" ]; then
  python3 -m venv "$local_dir/venv"
  "$local_dir/venv/bin/pip" install --quiet "openfeature-provider-ofrep>=0.3,<0.4" "openfeature-sdk"
fi

cargo build -q -p toggle-admin-server
admin_key="ofrep-e2e-admin-key-0123456789abcdef-$(date +%s)-$$"
log=$(mktemp)
TOGGLE_ADMIN_BOOTSTRAP_KEY="$admin_key" target/debug/toggle-admin serve --memory \
  --addr 127.0.0.1:0 >"$log" 2>"$log.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log" "$log.err" "$log.keys"' EXIT

for _ in $(seq 1 100); do
  if grep -q "listening on" "$log"; then break; fi
  sleep 0.1
done
base=$(sed -n 's/^listening on \(http:\/\/[^ ]*\).*/\1/p' "$log" | head -n 1)
if [ -z "$base" ]; then
  echo "the server did not start:" >&2
  cat "$log.err" >&2
  exit 1
fi

# The flags, in project `default`, environment `development` (a frontend and a client key
# for `default` alone), and `elsewhere` in a project the keys do not see:
# * `on`: a flexibleRollout at 100 % for userId u1 and u2 (constraint);
# * `half`: a 50 % rollout; `everyone`: `default`, no constraint (STATIC);
# * `text`, `int`, `float`, `object`, `csv`: one variant each with that payload type;
# * `bare`: a variant without a payload; `off`: disabled.
python3 - "$base" "$admin_key" >"$log.keys" <<'PY'
import http.client, json, sys, urllib.parse
base, admin = sys.argv[1], sys.argv[2]
url = urllib.parse.urlsplit(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)

def call(method, path, body=None):
    headers = {"Authorization": admin, "Content-Type": "application/json"}
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    answer = conn.getresponse()
    data = answer.read()
    if answer.status >= 300:
        sys.exit(f"{method} {path} answered {answer.status}: {data[:300]!r}")
    return json.loads(data) if data else None

call("POST", "/api/admin/projects", {"id": "elsewhere", "name": "Elsewhere"})
call("POST", "/api/admin/projects/elsewhere/environments", {"environment": "development"})
def flag(project, name, strategy=None, variants=None, on=True):
    call("POST", f"/api/admin/projects/{project}/features", {"name": name})
    base_path = f"/api/admin/projects/{project}/features/{name}/environments/development"
    if strategy is not None:
        if variants is not None:
            strategy = dict(strategy, variants=variants)
        call("POST", f"{base_path}/strategies", strategy)
    if on:
        call("POST", f"{base_path}/on")

everyone = {"name": "default"}
def variant(kind=None, value=None):
    v = {"name": "v1", "weight": 1000, "weightType": "variable", "stickiness": "default"}
    if kind:
        v["payload"] = {"type": kind, "value": value}
    return [v]
flag("default", "on", {"name": "flexibleRollout",
     "parameters": {"rollout": "100", "stickiness": "default", "groupId": "on"},
     "constraints": [{"contextName": "userId", "operator": "IN", "values": ["u1", "u2"]}]})
flag("default", "half", {"name": "flexibleRollout",
     "parameters": {"rollout": "50", "stickiness": "default", "groupId": "half"}})
flag("default", "everyone", everyone)
flag("default", "text", everyone, variant("string", "hello"))
flag("default", "int", everyone, variant("number", "42"))
flag("default", "float", everyone, variant("number", "2.5"))
flag("default", "object", everyone, variant("json", '{"color": "red", "sizes": [1, 2]}'))
flag("default", "csv", everyone, variant("csv", "a,b,c"))
flag("default", "bare", everyone, variant())
flag("default", "off", everyone, on=False)
flag("elsewhere", "hidden", everyone)
frontend = call("POST", "/api/admin/api-tokens", {"tokenName": "ofrep-web", "type": "frontend",
                "environment": "development", "projects": ["default"]})
client = call("POST", "/api/admin/api-tokens", {"tokenName": "ofrep-server", "type": "client",
              "environment": "development", "projects": ["default"]})
print(frontend["secret"], client["secret"])
PY
read -r frontend_key client_key <"$log.keys"

echo "--- the JavaScript providers (web, with its stream; server)"
BASE="$base" ADMIN_KEY="$admin_key" FRONTEND_KEY="$frontend_key" CLIENT_KEY="$client_key" \
  NODE_PATH="$PWD/$local_dir/node_modules" node scripts/ofrep_e2e.mjs
echo "--- the Python provider"
BASE="$base" CLIENT_KEY="$client_key" "$local_dir/venv/bin/python" scripts/ofrep_e2e.py
