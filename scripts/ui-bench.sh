#!/usr/bin/env bash
# The admin page's speed over HTTP: starts `toggle-admin serve` in memory,
# imports a project of FEATURES features (default 10,000) in one request, signs in with curl,
# then times REQUESTS requests (default 30) of each page and prints min / median / max of
# curl's total time, next to a same-run baseline (the admin API's JSON of one feature).
# PROFILE=release builds and runs the release binary (default: debug, what CI has built).
set -euo pipefail
cd "$(dirname "$0")/.."
features=${FEATURES:-10000}
requests=${REQUESTS:-30}
profile=${PROFILE:-debug}
if [ "$profile" = release ]; then
  cargo build -q --release -p toggle-admin-server
else
  cargo build -q -p toggle-admin-server
fi
key="ui-bench-admin-key-0123456789abcdef-$(date +%s)-$$"
log=$(mktemp); jar=$(mktemp); doc=$(mktemp)
TOGGLE_ADMIN_BOOTSTRAP_KEY="$key" "target/$profile/toggle-admin" serve --memory \
  --addr 127.0.0.1:0 >"$log" 2>"$log.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$log" "$log.err" "$jar" "$doc"' EXIT
for _ in $(seq 1 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
base=$(sed -n 's/^listening on //p' "$log")

python3 - "$features" >"$doc" <<'PY'
import json, sys
n = int(sys.argv[1])
names = [f"feature-{i:05d}" for i in range(n)]
print(json.dumps({"project": "default", "environment": "production", "data": {
    "features": [{"name": f, "type": "release", "description": f"the feature number {i}"}
                 for i, f in enumerate(names)],
    "featureStrategies": [],
    "featureEnvironments": [{"name": f, "featureName": f, "environment": "x",
                             "enabled": i % 2 == 0,
                             "variants": [{"name": v, "weight": 0, "weightType": "variable",
                                           "stickiness": "default"} for v in "abcde"]
                             if f == "feature-00042" else []}
                            for i, f in enumerate(names)],
    "featureTags": [], "tagTypes": [], "contextFields": [], "segments": [], "dependencies": []}}))
PY
curl -sf -o /dev/null -H "Authorization: $key" -H 'Content-Type: application/json' \
  --data-binary @"$doc" "$base/api/admin/features-batch/import"
curl -sf -o /dev/null -c "$jar" --data-urlencode "key=$key" "$base/admin/sign-in"

time_of() { # name, then curl arguments
  local name=$1; shift
  for _ in $(seq 1 "$requests"); do
    curl -sf -o /dev/null -w '%{time_total}\n' "$@"
  done | sort -n | awk -v name="$name" '{ t[NR] = $1 * 1000 } END {
    printf "%-44s min %7.2f ms  median %7.2f ms  max %7.2f ms  (%d requests)\n",
      name, t[1], t[int((NR + 1) / 2)], t[NR], NR }'
}
echo "$features features, $profile build, $requests requests each"
time_of "baseline: API GET one feature (JSON)" -H "Authorization: $key" \
  "$base/api/admin/projects/default/features/feature-00042"
time_of "features page 1" -b "$jar" "$base/admin/projects/default"
time_of "features page 100" -b "$jar" "$base/admin/projects/default?page=100"
time_of "features search (q=number 999)" -b "$jar" "$base/admin/projects/default?q=number%20999"
time_of "variants page (5 variants)" -b "$jar" \
  "$base/admin/projects/default/features/feature-00042/environments/production/variants"
