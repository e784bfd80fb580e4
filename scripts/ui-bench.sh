#!/usr/bin/env bash
# The admin page's speed over HTTP: starts `toggle-admin serve` in memory,
# imports a project of FEATURES features (default 10,000) in one request, signs in with curl,
# then times REQUESTS requests (default 30) of each page and prints min / median / max of
# curl's total time, next to a same-run baseline (the admin API's JSON of one feature).
# Besides the features list and the variants form: a feature's page with a constrained,
# segmented strategy, the strategy forms, search, the archive (100 archived), segments,
# context fields and the playground (every flag evaluated for a context, one page of them
# explained; unfiltered, and filtered by name on a later page).
# PROFILE=release builds and runs the release binary (default: debug, what CI has built).
set -euo pipefail
cd "$(dirname "$0")/.."
features=${FEATURES:-10000}
requests=${REQUESTS:-30}
profile=${PROFILE:-debug}
# SKIP_BUILD=1 measures the binary as it is.
if [ -n "${SKIP_BUILD:-}" ]; then
  :
elif [ "$profile" = release ]; then
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

# The day's pages: a context field with legal values, a segment, a rollout of feature-00042
# in production on both, 100 features archived.
api() { # method, path, JSON body
  curl -sf -X "$1" -H "Authorization: $key" -H 'Content-Type: application/json' \
    --data-binary "$3" "$base$2"
}
api POST /api/admin/context \
  '{"name":"country","legalValues":[{"value":"NO"},{"value":"SE"},{"value":"DK"}]}' >/dev/null
segment=$(api POST /api/admin/segments \
  '{"name":"early","constraints":[{"contextName":"userId","operator":"STR_STARTS_WITH","values":["user-"]}]}' |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
strategy=$(api POST /api/admin/projects/default/features/feature-00042/environments/production/strategies \
  "{\"name\":\"flexibleRollout\",\"parameters\":{\"rollout\":\"25\",\"stickiness\":\"default\",\"groupId\":\"feature-00042\"},\"constraints\":[{\"contextName\":\"country\",\"operator\":\"IN\",\"values\":[\"NO\",\"SE\"]}],\"segments\":[$segment]}" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
archived=$(python3 -c 'import json; print(json.dumps({"features": [f"feature-{i:05d}" for i in range(9900, 10000)]}))')
if [ "$features" -ge 10000 ]; then api POST /api/admin/projects/default/archive "$archived" >/dev/null; fi
feature="$base/admin/projects/default/features/feature-00042"
time_of "feature page (strategies, summary, events)" -b "$jar" "$feature"
time_of "strategy form (constraints, segments)" -b "$jar" \
  "$feature/environments/production/strategies/$strategy"
time_of "new strategy form (flexibleRollout)" -b "$jar" \
  "$feature/environments/production/strategies/new?type=flexibleRollout"
time_of "new feature form" -b "$jar" "$base/admin/projects/default/new-feature"
time_of "search across projects (q=feature-0004)" -b "$jar" "$base/admin/search?q=feature-0004"
time_of "archive page 1" -b "$jar" "$base/admin/archive"
time_of "segments" -b "$jar" "$base/admin/segments"
time_of "segment form (with its uses)" -b "$jar" "$base/admin/segments/$segment"
time_of "context fields" -b "$jar" "$base/admin/context"
time_of "playground ($features flags, page 1 explained)" -b "$jar" \
  "$base/admin/playground?environment=production&userId=user-1&properties=country%3DNO"
time_of "playground (q=feature-01, page 3 explained)" -b "$jar" \
  "$base/admin/playground?environment=production&userId=user-1&properties=country%3DNO&q=feature-01&page=3"
