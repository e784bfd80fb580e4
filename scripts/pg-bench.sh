#!/usr/bin/env bash
# The PostgreSQL path side by side with Unleash 6.10.1 on one PostgreSQL: the PATCH
# env-variants request of scripts/http-bench.sh (3 ops) with wrk, in the scenarios 1
# connection on one feature, 16 connections on one feature and 16 connections over 16
# features, against `toggle-admin serve --postgres` and against Unleash, alternating
# within each run. Besides req/s and latency it prints what a PATCH costs the database:
#
# * its CPU: the user + system time of every process of the cluster (the postmaster and its
#   children: backends, WAL writer, checkpointer…) over the wrk run, per 1,000 answered
#   requests;
# * its statements and transactions: `pg_stat_statements` calls and `pg_stat_database`
#   commits over the run, per answered request.
#
# So that nothing else counts, the script starts a cluster of its own (initdb into a
# temporary directory, `pg_stat_statements` preloaded, the server's default durability:
# fsync and synchronous_commit on), on a free port, and removes it afterwards. The servers
# not being measured are stopped meanwhile. Then, per run, one instance with 16 connections
# on a hot feature, two of our instances on one schema with 8 connections each on the same
# hot feature (their sum), then on a hot feature each, and two instances of two schemas;
# and a check that 16 × 20 concurrent variant additions through two instances all survive.
#
#   scripts/pg-bench.sh                              # ours only
#   UNLEASH_DIR=/work/unleash-server RUNS=3 SECONDS_EACH=10 scripts/pg-bench.sh
#   SCENARIOS="16:16" INSTANCES=0 RUNS=1 scripts/pg-bench.sh   # one scenario, ours only
#
# UNLEASH_DIR: where scripts/unleash-baseline.sh installed (or installs) Unleash 6.10.1;
# without it Unleash is left out. BASELINE_BIN: another build of `toggle-admin` (or of the
# `server` example of the commits before it, with `postgres`), measured in every row too, in
# a database of its own. Needs wrk, curl, python3, PostgreSQL's server binaries
# (/usr/lib/postgresql/*/bin) and, as root, `runuser`. Never run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${SECONDS_EACH:-10}
RUNS=${RUNS:-3}
SCENARIOS=${SCENARIOS:-1:1 16:1 16:16}   # connections:features
INSTANCES=${INSTANCES:-1}                # 0 leaves out the two-instance runs
KEY=bench-admin-key-0123456789abcdef0123456789abcdef
UNLEASH_KEY='*:*.bench-admin-token'
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
[ -x "$pg_bin/initdb" ] || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; exit 1; }

cargo build --quiet --release -p toggle-admin-server
BIN=target/release/toggle-admin
# The word before a binary's flags: `serve` for `toggle-admin`, none for an older `server`.
subcommand() { [ "$(basename "$1")" = server ] || echo serve; }
work=$(mktemp -d)
chmod 755 "$work"
pids=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
tree() { local child; echo "$1"; for child in $(pgrep -P "$1"); do tree "$child"; done; }
cleanup() {
    for p in "${pids[@]}"; do kill -CONT $(tree "$p") 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -f "$work/pg/postmaster.pid" ] && as_pg "$pg_bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The cluster.
pg_port=$(free_port)
mkdir -p "$work/pg" && [ "$(id -u)" = 0 ] && chown postgres:postgres "$work/pg"
as_pg "$pg_bin/initdb" -D "$work/pg" -U postgres -A trust --no-sync >/dev/null
as_pg "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/log" -w start -o \
    "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements -c max_connections=200" >/dev/null
PG="postgres://postgres@127.0.0.1:$pg_port"
psql() { command psql -X -q -h 127.0.0.1 -p "$pg_port" -U postgres "$@"; }
psql -d postgres -c "CREATE DATABASE toggle" -c "CREATE EXTENSION pg_stat_statements"
postmaster=$(head -n 1 "$work/pg/postmaster.pid")

cluster_ticks() { # user + system clock ticks of the cluster: the postmaster's own and its
    # reaped children's (cutime, cstime: backends that ended), and its live children's
    local total pid
    total=$(awk '{sub(/^.*\) /, ""); print $12 + $13 + $14 + $15}' "/proc/$postmaster/stat")
    for pid in $(pgrep -P "$postmaster"); do
        [ -r "/proc/$pid/stat" ] || continue
        total=$((total + $(awk '{sub(/^.*\) /, ""); print $12 + $13}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
db_counts() { # database → "statements transactions"
    psql -d postgres -tAc "SELECT (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s
        JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$1'),
        (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1')" | tr '|' ' '
}

start_ours() { # schema [database [binary]] → base URL in $BASE
    local port; port=$(free_port)
    local bin=${3:-$BIN}
    # shellcheck disable=SC2046 # `subcommand` prints one word or none
    RUST_LOG=warn TOGGLE_ADMIN_BOOTSTRAP_KEY=$KEY "$bin" $(subcommand "$bin") --postgres "$PG/${2:-toggle}" \
        --postgres-schema "$1" --addr "127.0.0.1:$port" >>"$work/ours.log" 2>&1 &
    pids+=($!)
    BASE="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null -H "Authorization: $KEY" "$BASE/api/admin/projects/default" && return 0
        sleep 0.1
    done
    echo "our server did not start:" >&2; cat "$work/ours.log" >&2; exit 1
}

seed() { # base key: 16 features with two variants each in `development`
    local i
    for i in $(seq 0 15); do
        curl -s -o /dev/null -X POST "$1/api/admin/projects/default/features" \
            -H "Authorization: $2" -H 'Content-Type: application/json' -d "{\"name\":\"bench$i\"}"
        curl -sf -o /dev/null -X PUT "$1/api/admin/projects/default/features/bench$i/environments/development/variants" \
            -H "Authorization: $2" -H 'Content-Type: application/json' \
            -d '[{"name":"a","weight":500,"weightType":"variable","stickiness":"default"},{"name":"b","weight":500,"weightType":"variable","stickiness":"default"}]'
    done
}

cat > "$work/patch.lua" <<'LUA'
local features = tonumber(os.getenv("BENCH_FEATURES") or "1")
local first = tonumber(os.getenv("BENCH_FIRST") or "0")
local n = 0
wrk.method = "PATCH"
wrk.headers["Authorization"] = os.getenv("BENCH_KEY")
wrk.headers["Content-Type"] = "application/json"
wrk.body = '[{"op":"replace","path":"/0/stickiness","value":"userId"},{"op":"add","path":"/1/payload","value":{"type":"string","value":"x"}},{"op":"replace","path":"/1/stickiness","value":"default"}]'
request = function()
    n = n + 1
    local path = "/api/admin/projects/default/features/bench" .. (first + n % features) .. "/environments/development/variants"
    return wrk.format(nil, path)
end
LUA

wrk_run() { # base key connections features [first feature] → "requests req/s p50 p99 errors"
    local out
    out=$(BENCH_KEY=$2 BENCH_FEATURES=$4 BENCH_FIRST=${5:-0} wrk -t"$(( $3 < 2 ? 1 : 2 ))" -c"$3" -d"${SECONDS_EACH}s" \
        --latency -s "$work/patch.lua" "$1" 2>&1)
    local requests rps p50 p99 errors
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    echo "$requests $rps $p50 $p99 ${errors:-0}"
}

measure() { # label base key database connections features run: one table row
    local ticks0 ticks1 s0 t0 s1 t1 requests rps p50 p99 errors
    ticks0=$(cluster_ticks); read -r s0 t0 < <(db_counts "$4")
    read -r requests rps p50 p99 errors < <(wrk_run "$2" "$3" "$5" "$6")
    ticks1=$(cluster_ticks); read -r s1 t1 < <(db_counts "$4")
    python3 - "$1" "$5" "$6" "$7" "$requests" "$rps" "$p50" "$p99" "$errors" \
        "$((ticks1 - ticks0))" "$((s1 - s0))" "$((t1 - t0))" "$(getconf CLK_TCK)" <<'PY'
import sys
label, conns, feats, run, requests, rps, p50, p99, errors, ticks, stmts, xacts, hz = sys.argv[1:]
answered = max(int(requests) - int(errors), 1)
cpu_ms = int(ticks) / int(hz) * 1000
print(f"| {label} | {conns} conn, {feats} feature(s) | {run} | {float(rps):,.0f} | {p50} | {p99} | {errors} "
      f"| {cpu_ms / answered:.2f} s | {int(stmts) / answered:.1f} | {int(xacts) / answered:.2f} |")
PY
}

echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $NF}') (a cluster of its own on port $pg_port)," \
    "wrk ${SECONDS_EACH}s per row, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server | scenario | run | req/s | p50 | p99 | non-2xx | DB CPU per 1,000 | statements per PATCH | transactions per PATCH |"
echo "|---|---|---|---|---|---|---|---|---|---|"

start_ours bench
ours=$BASE
seed "$ours" "$KEY"
targets=("toggle-admin (PostgresStore)|$ours|$KEY|toggle|${pids[-1]}")
if [ -n "${BASELINE_BIN:-}" ]; then
    psql -d postgres -c "CREATE DATABASE toggle_baseline"
    start_ours bench toggle_baseline "$BASELINE_BIN"
    seed "$BASE" "$KEY"
    targets+=("toggle-admin baseline build|$BASE|$KEY|toggle_baseline|${pids[-1]}")
fi
if [ -n "${UNLEASH_DIR:-}" ]; then
    unleash_port=$(free_port)
    PGHOST=127.0.0.1 PGPORT=$pg_port PGUSER=postgres UNLEASH_DIR=$UNLEASH_DIR UNLEASH_DB=unleash_bench \
        UNLEASH_PORT=$unleash_port scripts/unleash-baseline.sh >"$work/unleash.log" 2>&1 &
    pids+=($!)
    unleash_pid=$!
    unleash="http://127.0.0.1:$unleash_port"
    for _ in $(seq 1 300); do
        curl -sf -o /dev/null -H "Authorization: $UNLEASH_KEY" "$unleash/api/admin/projects/default" && break
        sleep 0.5
    done
    curl -sf -o /dev/null -H "Authorization: $UNLEASH_KEY" "$unleash/api/admin/projects/default" \
        || { echo "Unleash did not start:" >&2; tail -n 30 "$work/unleash.log" >&2; exit 1; }
    seed "$unleash" "$UNLEASH_KEY"
    targets+=("Unleash 6.10.1|$unleash|$UNLEASH_KEY|unleash_bench|$unleash_pid")
fi
# One request by hand first on each: a benchmark of error answers measures nothing.
for target in "${targets[@]}"; do
    IFS='|' read -r label base key _ _ <<<"$target"
    status=$(curl -s -o "$work/answer" -w '%{http_code}' -X PATCH -H "Authorization: $key" \
        -H 'Content-Type: application/json' --data "$(awk -F"'" '/wrk.body/ {print $2}' "$work/patch.lua")" \
        "$base/api/admin/projects/default/features/bench0/environments/development/variants")
    [ "$status" = 200 ] || { echo "$label: the PATCH answers $status: $(cat "$work/answer")" >&2; exit 1; }
done
# While one server is measured the others are stopped (SIGSTOP, then SIGCONT): an idle
# Unleash still runs its scheduled jobs, which cost the server measured beside it 5–10 %.
signal_others() { # signal label: every target's processes but the one labelled
    local target other pid
    for target in "${targets[@]}"; do
        IFS='|' read -r other _ _ _ pid <<<"$target"
        [ "$other" = "$2" ] || kill -s "$1" $(tree "$pid") 2>/dev/null || true
    done
}
for run in $(seq 1 "$RUNS"); do
    for spec in $SCENARIOS; do
        for target in "${targets[@]}"; do
            IFS='|' read -r label base key db _ <<<"$target"
            signal_others STOP "$label"
            measure "$label" "$base" "$key" "$db" "${spec%:*}" "${spec#*:}" "$run"
            signal_others CONT "$label"
        done
    done
done

# Where a PATCH's statements go: every statement of each database over all the runs above,
# per answered request.
for target in "${targets[@]}"; do
    IFS='|' read -r label _ _ db _ <<<"$target"
    echo
    echo "$label: statements over the runs above, most called first (calls, share of all calls, mean ms):"
    psql -d postgres -tA -F ' | ' -c "SELECT s.calls, round(100.0 * s.calls / sum(s.calls) OVER (), 1) || ' %',
        round(s.mean_exec_time::numeric, 3), left(regexp_replace(s.query, '\s+', ' ', 'g'), 110)
        FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '$db'
        ORDER BY s.calls DESC LIMIT 14" | sed 's/^/  /'
done

[ "$INSTANCES" = 0 ] && exit 0

# Two instances on one schema, 8 connections each: the same hot feature, then one hot
# feature each (bench0 on the first, bench1 on the second); next to them one instance with
# all 16 connections on bench0, and two instances of two stores (schemas) that share
# nothing, 8 connections each: what two servers on this machine reach at most. Unleash and
# the baseline build stay stopped from here on.
signal_others STOP "toggle-admin (PostgresStore)"
start_ours bench
second=$BASE
start_ours bench_apart
apart=$BASE
seed "$apart" "$KEY"
two() { # label base-a base-b feature-of-b run
    local ticks0 ticks1 a ra rpsa p50a p99a ea rb rpsb p50b p99b eb
    ticks0=$(cluster_ticks)
    wrk_run "$2" "$KEY" 8 1 >"$work/a" &
    a=$!
    wrk_run "$3" "$KEY" 8 1 "$4" >"$work/b"
    wait "$a"
    ticks1=$(cluster_ticks)
    read -r ra rpsa p50a p99a ea <"$work/a"
    read -r rb rpsb p50b p99b eb <"$work/b"
    python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'| $1 | $5 | {a + b:,.0f} ({a:,.0f} + {b:,.0f}) | $p99a, $p99b | $ea + $eb | {int(sys.argv[3]) / int(sys.argv[4]) * 1000 / max(int(sys.argv[5]) - $ea - $eb, 1):.2f} s |')" \
        "$rpsa" "$rpsb" "$((ticks1 - ticks0))" "$(getconf CLK_TCK)" "$((ra + rb))"
}
echo
echo "Two instances, 8 connections each (wrk at both at once), and one with 16:"
echo
echo "| case | run | req/s | p99 | non-2xx | DB CPU per 1,000 |"
echo "|---|---|---|---|---|---|"
for run in $(seq 1 "$RUNS"); do
    read -r requests rps _ p99 errors < <(wrk_run "$ours" "$KEY" 16 1)
    python3 -c "import sys; print(f'| one instance, 16 connections on bench0 | $run | {float(sys.argv[1]):,.0f} | $p99 | $errors | |')" "$rps"
    two "two instances of one store, both on bench0" "$ours" "$second" 0 "$run"
    two "two instances of one store, on bench0 and bench1" "$ours" "$second" 1 "$run"
    two "two stores (schemas), each on its bench0" "$ours" "$apart" 0 "$run"
done

# 16 writers × 20 variant additions, 8 writers through each instance, on one feature: every
# addition must survive.
curl -sf -o /dev/null -X POST "$ours/api/admin/projects/default/features" \
    -H "Authorization: $KEY" -H 'Content-Type: application/json' -d '{"name":"additions"}'
python3 - "$ours" "$second" "$KEY" <<'PY'
import http.client, json, sys, threading, urllib.parse
bases, key = sys.argv[1:3], sys.argv[3]
path = "/api/admin/projects/default/features/additions/environments/development/variants"
failures = []
def writer(w):
    url = urllib.parse.urlsplit(bases[w % 2])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    for i in range(20):
        op = [{"op": "add", "path": "/-", "value": {"name": f"w{w}-{i}", "weight": 0,
               "weightType": "variable", "stickiness": "default"}}]
        conn.request("PATCH", path, json.dumps(op), {"Authorization": key, "Content-Type": "application/json"})
        answer = conn.getresponse(); body = answer.read()
        if answer.status != 200:
            failures.append((w, i, answer.status, body[:200]))
threads = [threading.Thread(target=writer, args=(w,)) for w in range(16)]
[t.start() for t in threads]; [t.join() for t in threads]
url = urllib.parse.urlsplit(bases[0])
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
conn.request("GET", "/api/admin/projects/default/features/additions", headers={"Authorization": key})
feature = json.loads(conn.getresponse().read())
variants = [v for e in feature["environments"] if e["name"] == "development" for v in e.get("variants", [])]
print(f"16 × 20 concurrent additions through two instances: {len(variants)} of 320 variants kept, "
      f"{len(failures)} refused {failures[:3]}")
sys.exit(0 if len(variants) == 320 and not failures else 1)
PY
