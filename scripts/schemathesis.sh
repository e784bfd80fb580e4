#!/usr/bin/env bash
# Contract-test the HTTP adapter against its own OpenAPI document with schemathesis (PyPI):
# the server (`toggle-admin serve`) on an in-memory store and a loopback port, every
# operation with a bounded number of generated examples, and the checks not_a_server_error,
# status_code_conformance, content_type_conformance and response_schema_conformance. Exits
# non-zero when schemathesis finds anything. Switching maintenance mode on is left out: from
# then on every write is a deliberate 503 (verify/tests/http/maintenance.rs tests it).
#
#   scripts/schemathesis.sh                 # 25 examples per operation
#   MAX_EXAMPLES=100 scripts/schemathesis.sh
#
# Needs python3 (with venv) and network access to PyPI on the first run; the virtualenv is
# kept in target/schemathesis-venv (SCHEMATHESIS_VENV to override).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${SCHEMATHESIS_VENV:-target/schemathesis-venv}
max_examples=${MAX_EXAMPLES:-25}
key=${TOGGLE_ADMIN_BOOTSTRAP_KEY:-schemathesis-admin-key-0123456789abcdef}

# shellcheck source=scripts/lib/server.sh
. scripts/lib/server.sh
install_schemathesis
start_server

echo "--- schemathesis run ($max_examples examples per operation)"
status=0
"$venv/bin/schemathesis" run "$base/api/admin/openapi.json" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --max-examples "$max_examples" \
    --header "Authorization: $key" \
    --seed "${SCHEMATHESIS_SEED:-1}" \
    --exclude-name 'POST /api/admin/maintenance' \
    --no-color \
    || status=$?
if [ "$status" -ne 0 ]; then
    echo "--- server log"
    tail -n 50 "$log"
    echo "schemathesis found problems (exit $status)"
fi
exit "$status"
