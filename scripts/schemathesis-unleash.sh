#!/usr/bin/env bash
# Contract-test the HTTP adapter against Unleash's own OpenAPI document (Unleash 6.10.1, as
# served at /docs/openapi.json; kept in tests/fixtures/unleash-compat/) with schemathesis:
# only the operations of the four admin operations and their supporting reads (variants
# GET/PUT/PATCH in one environment and in every environment of a feature, features-batch
# import/validate/export, metrics/applications/{appName} GET/POST/DELETE), and the reads that
# scripts and dashboards call (ui-config, user/roles, a project's health-report and status),
# path parameters pinned to a seeded project, feature, environment and application so that
# generated bodies reach the real logic (scripts/schemathesis-unleash.toml).
# Checks: not_a_server_error, content_type_conformance, response_schema_conformance, and
# unleash_status_conformance (status_code_conformance, except that 405, 413 and 415 are
# allowed where Unleash does not document them). The document is used with the errata of
# scripts/unleash_contract.py: where Unleash's document contradicts what Unleash 6.10.1
# itself answers (recorded in tests/fixtures/unleash-compat/), the recorded answer wins.
# Exits non-zero when schemathesis finds anything.
#
#   scripts/schemathesis-unleash.sh                 # 25 examples per operation
#   MAX_EXAMPLES=100 scripts/schemathesis-unleash.sh
#
# Shares scripts/schemathesis.sh's virtualenv (target/schemathesis-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${SCHEMATHESIS_VENV:-target/schemathesis-venv}
max_examples=${MAX_EXAMPLES:-25}
key=${TOGGLE_ADMIN_BOOTSTRAP_KEY:-schemathesis-admin-key-0123456789abcdef}
schema=tests/fixtures/unleash-compat/unleash-openapi-6.10.1.json

# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
install_schemathesis
document=$(mktemp --suffix=.json)
temp_files+=("$document")
python3 scripts/unleash_contract.py "$schema" "$document"
start_server

echo "--- seeding: feature schemathesis-feature in default, application schemathesis-app"
seed() {
    local method=$1 path=$2 body=$3
    python3 - "$method" "$base$path" "$key" "$body" <<'PY'
import sys, urllib.request
method, url, key, body = sys.argv[1:]
request = urllib.request.Request(url, data=body.encode(), method=method,
                                 headers={"Authorization": key, "Content-Type": "application/json"})
with urllib.request.urlopen(request) as response:
    print(method, url, response.status)
PY
}
seed POST /api/admin/projects/default/features '{"name":"schemathesis-feature"}'
seed POST /api/admin/metrics/applications/schemathesis-app '{"description":"seeded"}'

echo "--- schemathesis run against Unleash's document ($max_examples examples per operation)"
status=0
PYTHONPATH=scripts SCHEMATHESIS_HOOKS=unleash_contract \
"$venv/bin/schemathesis" --config-file scripts/schemathesis-unleash.toml run "$document" \
    --url "$base" \
    --include-operation-id getEnvironmentFeatureVariants \
    --include-operation-id patchEnvironmentsFeatureVariants \
    --include-operation-id overwriteEnvironmentFeatureVariants \
    --include-operation-id getFeatureVariants \
    --include-operation-id patchFeatureVariants \
    --include-operation-id overwriteFeatureVariants \
    --include-operation-id importToggles \
    --include-operation-id validateImport \
    --include-operation-id exportFeatures \
    --include-operation-id getApplication \
    --include-operation-id createApplication \
    --include-operation-id deleteApplication \
    --include-operation-id getUiConfig \
    --include-operation-id getUserRoles \
    --include-operation-id getProjectHealthReport \
    --include-operation-id getProjectStatus \
    --checks not_a_server_error,unleash_status_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$max_examples" \
    --header "Authorization: $key" \
    --seed "${SCHEMATHESIS_SEED:-1}" \
    --no-color \
    || status=$?
if [ "$status" -ne 0 ]; then
    echo "--- server log"
    tail -n 50 "$log"
    echo "schemathesis found problems against Unleash's contract (exit $status)"
fi
exit "$status"
