#!/usr/bin/env bash
# Starts Unleash 6.10.1 (npm `unleash-server`, on PostgreSQL) as the baseline of
# scripts/client-bench.sh, outside this repository: Unleash's code is neither committed nor
# needed by CI. Installs it into UNLEASH_DIR on first use, recreates the database
# UNLEASH_DB (default `unleash_bench`) so every run starts from the same empty state, starts
# the server on UNLEASH_PORT (default 4242) in the foreground with an admin token, and prints
# the variables client-bench.sh takes.
#
#   scripts/unleash-baseline.sh &            # then, once it says it is up:
#   UNLEASH_URL=http://127.0.0.1:4242 UNLEASH_ADMIN_TOKEN='*:*.bench-admin-token' \
#       scripts/client-bench.sh
#
# Needs Node 20 + npm, psql, and PostgreSQL at PGHOST/PGPORT/PGUSER (default
# 127.0.0.1:5432, postgres, no password).
set -euo pipefail

UNLEASH_DIR=${UNLEASH_DIR:-/tmp/unleash-server}
UNLEASH_DB=${UNLEASH_DB:-unleash_bench}
UNLEASH_PORT=${UNLEASH_PORT:-4242}
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-5432} PGUSER=${PGUSER:-postgres}

mkdir -p "$UNLEASH_DIR"
cd "$UNLEASH_DIR"
if [ ! -d node_modules/unleash-server ]; then
    [ -f package.json ] || npm init -y >/dev/null
    npm install --no-audit --no-fund unleash-server@6.10.1
fi
psql -d postgres -qc "DROP DATABASE IF EXISTS $UNLEASH_DB" -c "CREATE DATABASE $UNLEASH_DB"

cat > start.js <<'JS'
// Unleash 6.10.1 as the baseline of toggle-admin's scripts/client-bench.sh.
const unleash = require('unleash-server');
unleash.start({
    db: {
        host: process.env.PGHOST, port: Number(process.env.PGPORT), user: process.env.PGUSER,
        password: process.env.PGPASSWORD || '', database: process.env.UNLEASH_DB, ssl: false,
    },
    server: { port: Number(process.env.UNLEASH_PORT) },
    logLevel: 'warn',
    // Environment variants (the admin API's variants PATCH, scripts/pg-bench.sh): off by
    // default in 6.10.1, as in the recorded answers' profile.
    experimental: { flags: { enableLegacyVariants: true } },
    authentication: {
        initApiTokens: [{
            secret: '*:*.bench-admin-token', type: 'admin', project: '*', environment: '*',
            tokenName: 'bench-admin',
        }],
    },
});
JS
echo "Unleash 6.10.1 starting on http://127.0.0.1:$UNLEASH_PORT (database $UNLEASH_DB);" \
    "UNLEASH_URL=http://127.0.0.1:$UNLEASH_PORT UNLEASH_ADMIN_TOKEN='*:*.bench-admin-token'" >&2
UNLEASH_DB=$UNLEASH_DB UNLEASH_PORT=$UNLEASH_PORT exec node start.js
