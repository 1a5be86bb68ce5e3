#!/usr/bin/env bash
# The PostgreSQL store measured beside SQLite, in the same run (issue 23):
#
#   bench/postgres.sh [--rounds 4] [--seconds 5] [--connections 64]
#                     [--no-build] [--no-two-nodes] [--no-statements] [--out DIR]
#
# Starts its own throwaway PostgreSQL cluster (initdb into a scratch folder,
# a private socket folder, a free port on 127.0.0.1, trust for `postgres`;
# fsync and synchronous_commit ON, as in production; run as the `postgres`
# user when this script runs as root), one release polld on it
# (--db postgresql://postgres@127.0.0.1:PORT/bench --keys FILE) and one on a
# SQLite file, each with the same 8 polls created over the API (3 questions
# of 4 options, public results, as anonbench's hot polls).
#
# 1. Engines, alternating: each round measures both pollds back to back (the
#    order swaps every round): poll JSON, results JSON, the share page (wrk,
#    after a 1 s warm-up) and the vote (httpload vote: GET the share page,
#    POST its form), then the write path alone (anonbench cast: Store::cast
#    from as many threads, no HTTP). Per scenario: requests/s, p99, and CPU per request of
#    polld AND of PostgreSQL (utime + stime of every process of the cluster
#    from /proc, plus what the postmaster reaped of ended children), read
#    before and after the run. Every acknowledged vote is checked stored.
# 2. Two nodes against one (unless --no-two-nodes): a second polld on the
#    same database with a copy of the first one's key file; alternating
#    rounds of votes on one node (all connections) and on both (half the
#    connections each, two httpload processes at once): votes/s, CPU per
#    vote of the pollds, PostgreSQL and the load generators, and how busy
#    the whole machine was (/proc/stat), which says what its cores allow.
# 3. Statements per request (unless --no-statements): the cluster restarted
#    with pg_stat_statements, one short run of each scenario, every
#    statement PostgreSQL ran per request (the round trips of a vote).
#
# Writes DIR/postgres.tsv, two-nodes.tsv, statements.txt, postgres.log,
# postgres.meta and the summary DIR/summary.md (default DIR:
# bench/results/<date>-postgres). Needs wrk, cargo, PostgreSQL (Debian's
# postgresql: /usr/lib/postgresql/*/bin), /usr/bin/time. Method and figures:
# docs/PERFORMANCE.md, section "PostgreSQL against SQLite".
# Environment: BENCH_TARGET_DIR (default /tmp/bench-target), BENCH_WORK
# (scratch folder, default a new /tmp/anonpoll-pgbench.*, removed at the end).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${BENCH_TARGET_DIR:-/tmp/bench-target}
ROUNDS=4
SECS=5
CONNS=64
BUILD=1
TWO_NODES=1
STATEMENTS=1
OUT=
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift ;;
        --seconds) SECS=$2; shift ;;
        --connections) CONNS=$2; shift ;;
        --no-build) BUILD=0 ;;
        --no-two-nodes) TWO_NODES=0 ;;
        --no-statements) STATEMENTS=0 ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
        *) echo "postgres.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for tool in wrk cargo curl /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "postgres.sh: $tool is needed" >&2; exit 2; }
done
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "postgres.sh: PostgreSQL is needed (apt-get install postgresql)" >&2; exit 2; }

if [ "$BUILD" = 1 ]; then
    echo "postgres.sh: building polld (release) and the bench tools into $TARGET" >&2
    (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --bin polld)
    CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --manifest-path "$ROOT/bench/tools/Cargo.toml"
fi
BIN=$TARGET/release
for b in polld httpload anonbench; do
    [ -x "$BIN/$b" ] || { echo "postgres.sh: $BIN/$b is missing (run without --no-build)" >&2; exit 2; }
done

OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y-%m-%d)-postgres}
mkdir -p "$OUT"
: >"$OUT/postgres.log"
WORK=${BENCH_WORK:-$(mktemp -d /tmp/anonpoll-pgbench.XXXXXX)}
mkdir -p "$WORK"
# The server's user must reach its folders (as root, the server runs as postgres).
chmod 755 "$WORK"
PG=$WORK/pg
PGDATA=$PG/data
PIDS=()
PG_UP=
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_ctl_() { (cd "$PG" && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" "$@"); }
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    [ -n "$PG_UP" ] && pg_ctl_ -m fast -w stop >/dev/null 2>&1 || true
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '[pgbench %s] %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/postgres.log" >&2; }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
HZ=$(getconf CLK_TCK)

# ------------------------------------------------------------ CPU from /proc
ticks() { # utime + stime of the given pids, in clock ticks
    local t=0 p line
    for p in "$@"; do
        read -r line <"/proc/$p/stat"
        set -- ${line##*) }
        t=$((t + ${12} + ${13}))
    done
    echo "$t"
}
pg_ticks() { # every process of the cluster, plus what the postmaster reaped
    local pm t=0 f line
    read -r pm <"$PGDATA/postmaster.pid"
    for f in /proc/[0-9]*/stat; do
        read -r line 2>/dev/null <"$f" || continue
        # shellcheck disable=SC2086
        set -- ${line##*) }
        if [ "${f#/proc/}" = "$pm/stat" ]; then
            t=$((t + ${12} + ${13} + ${14} + ${15}))
        elif [ "$2" = "$pm" ]; then
            t=$((t + ${12} + ${13}))
        fi
    done
    echo "$t"
}
pg_settle() {
    # After a client that held connections (anonbench) ends, its backends
    # exit and the postmaster reaps them: a backend read live just before
    # it is reaped would count twice (alive, then in the postmaster's
    # cutime), which made figures swing from 1 to 236 µs per vote. Sampled
    # once they are gone.
    sleep 1
}
machine_ticks() { # busy and total jiffies of all CPUs (/proc/stat)
    # user nice system idle iowait irq softirq steal (guest time is within user)
    awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t }' /proc/stat
}
per_op() { # per_op TICKS0 TICKS1 N: µs per operation
    awk -v a="$1" -v b="$2" -v n="$3" -v hz="$HZ" 'BEGIN { if (n > 0) printf "%.1f", (b - a) * 1e6 / hz / n; else print "-" }'
}

# ------------------------------------------------------------ PostgreSQL
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
mkdir -p "$PG/sock"
[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$PG"
say "initdb ($PGBIN)"
(cd "$PG" && as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust --no-sync -U postgres -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1) ||
    { cat "$WORK/initdb.log" >&2; exit 1; }
PGPORT_=$(free_port)
pg_conf() { # pg_conf [EXTRA LINE]: the bench's settings, rewritten whole
    {
        echo "# Written by bench/postgres.sh: as in production but for the address."
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $PGPORT_"
        echo "unix_socket_directories = '$PG/sock'"
        echo "fsync = on"
        echo "synchronous_commit = on"
        echo "max_connections = 200"
        echo "timezone = 'UTC'"
        [ $# -gt 0 ] && echo "$1"
    } >"$PGDATA/bench.conf"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$PGDATA/bench.conf"
    return 0
}
grep -q "include 'bench.conf'" "$PGDATA/postgresql.conf" || echo "include 'bench.conf'" >>"$PGDATA/postgresql.conf"
pg_conf
pg_start() {
    pg_ctl_ -l "$PG/server.log" -w -t 60 start >/dev/null || { cat "$PG/server.log" >&2; exit 1; }
    PG_UP=1
}
pg_start
psql_() { "$PGBIN/psql" -X -q -A -t -h 127.0.0.1 -p "$PGPORT_" -U postgres "$@"; }
psql_ -d postgres -c "CREATE DATABASE bench"
URL="postgresql://postgres@127.0.0.1:$PGPORT_/bench"
say "PostgreSQL $(psql_ -d bench -c 'SHOW server_version') on 127.0.0.1:$PGPORT_: fsync=$(psql_ -d bench -c 'SHOW fsync'), synchronous_commit=$(psql_ -d bench -c 'SHOW synchronous_commit'), shared_buffers=$(psql_ -d bench -c 'SHOW shared_buffers')"

# ------------------------------------------------------------ polld
POLLD_FLAGS=(--create-limit 1000000000 --trusted-proxy 127.0.0.1/8 --vote-limit 4000000000 --network-votes-per-day 0)
ADDR=
start_polld() { # start_polld NAME ARGS...: sets ADDR and LAST_PID
    local name=$1 logf=$WORK/polld-$1.log i
    shift
    : >"$logf"
    "$BIN/polld" "$@" --listen 127.0.0.1:0 "${POLLD_FLAGS[@]}" >"$logf" 2>&1 &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
    for i in $(seq 200); do
        ADDR=$(sed -n 's/.*listening on \(http:\/\/\)\{0,1\}\([0-9.:]*\).*/\2/p' "$logf" | head -1)
        [ -n "$ADDR" ] && return 0
        kill -0 "$LAST_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "postgres.sh: polld ($name) did not start" >&2
    cat "$logf" >&2
    exit 1
}
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
POLL_JSON='{"title":"Benchmark poll","lang":"en","expiryDays":30,"resultsPublic":true,"questions":['
for q in 1 2 3; do
    [ "$q" = 1 ] || POLL_JSON+=','
    POLL_JSON+="{\"type\":\"single\",\"label\":\"Question $q of the benchmark poll?\",\"options\":[\"Option 1\",\"Option 2\",\"Option 3\",\"Option 4\"]}"
done
POLL_JSON+=']}'
make_polls() { # make_polls ADDR IDS_FILE: 8 polls over the API
    local i id
    : >"$2"
    for i in $(seq 8); do
        id=$(curl -sf -H 'Content-Type: application/json' -H "X-Forwarded-For: 198.18.0.$i" \
            --data "$POLL_JSON" "http://$1/api/polls" | sed -n 's/.*"id" *: *"\([^"]*\)".*/\1/p')
        [ -n "$id" ] || { echo "postgres.sh: creating a poll on $1 failed" >&2; exit 1; }
        echo "$id" >>"$2"
    done
}
stored_votes() { # stored_votes ENGINE
    if [ "$1" = pg ]; then
        psql_ -d bench -c "SELECT count(*) FROM sealed_ballots"
    else
        field responses "$("$BIN/anonbench" dbsize "$WORK/sqlite/anonpoll.sqlite3")"
    fi
}

mkdir -p "$WORK/sqlite"
start_polld pg --db "$URL" --keys "$WORK/pg.keys"
PG_PID=$LAST_PID PG_ADDR=$ADDR
start_polld sqlite --db "$WORK/sqlite/anonpoll.sqlite3"
SQ_PID=$LAST_PID SQ_ADDR=$ADDR
make_polls "$PG_ADDR" "$WORK/pg.ids"
make_polls "$SQ_ADDR" "$WORK/sqlite.ids"
# anonbench's own copy of the key file, as for any other node.
cp -p "$WORK/pg.keys" "$WORK/pg-cast.keys"
"$BIN/httpload" detect "$PG_ADDR" "$WORK/pg.ids" >/dev/null || { echo "postgres.sh: no vote form on polld (pg)" >&2; exit 1; }

{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "cpu=$(nproc) × $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "postgresql=$(psql_ -d bench -c 'SHOW server_version') fsync=on synchronous_commit=on shared_buffers=$(psql_ -d bench -c 'SHOW shared_buffers') (default) max_connections=200"
    echo "polld=default workers (32), one per engine, running through phase 1; 8 polls each (3 single questions of 4 options)"
    echo "rounds=$ROUNDS seconds=$SECS connections=$CONNS (wrk -t2; httpload vote)"
    echo "load average at start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/postgres.meta"

# ------------------------------------------------------------ 1. engines, alternating
TSV=$OUT/postgres.tsv
printf 'round\tengine\tscenario\tops\trps\tp99_ms\tpolld_us\tpg_us\ttotal_us\tnote\n' >"$TSV"
record() { # record ROUND ENGINE SCENARIO OPS RPS P99 POLLD_US PG_US NOTE
    local total IFS=$'\t'
    total=$(awk -v a="$7" -v b="$8" 'BEGIN { printf "%.1f", a + (b == "-" ? 0 : b) }')
    echo "$1	$2	$3	$4	$5	$6	$7	$8	$total	$9" >>"$TSV"
    say "round $1 $2 $3: $5/s p99 $6 ms; CPU per request polld $7 µs + PostgreSQL $8 µs = $total µs ($9)"
}
measure() { # measure ROUND ENGINE
    local round=$1 engine=$2 pid addr ids spec out c0 c1 g0 g1 n r0 r1 settled
    if [ "$engine" = pg ]; then pid=$PG_PID addr=$PG_ADDR ids=$WORK/pg.ids; else pid=$SQ_PID addr=$SQ_ADDR ids=$WORK/sqlite.ids; fi
    export BENCH_IDS=$ids BENCH_METHOD=GET
    for spec in "poll JSON|/api/polls/{id}" "results JSON|/api/polls/{id}/results" "share page|/p/{id}"; do
        export BENCH_PATH=${spec#*|}
        wrk -t2 -c"$CONNS" -d1s --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "http://$addr" >/dev/null 2>&1 || true
        c0=$(ticks "$pid"); g0=$(pg_ticks)
        out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "http://$addr" 2>&1 | grep '^RESULT' || true)
        c1=$(ticks "$pid"); g1=$(pg_ticks)
        n=$(field requests "$out")
        record "$round" "$engine" "${spec%%|*}" "$n" "$(field rps "$out")" "$(field p99_ms "$out")" \
            "$(per_op "$c0" "$c1" "$n")" "$(per_op "$g0" "$g1" "$n")" "$(field errors "$out") errors"
    done
    "$BIN/httpload" vote "$addr" "$CONNS" 1 "$ids" >/dev/null 2>&1 || true
    sleep 0.5
    r0=$(stored_votes "$engine")
    c0=$(ticks "$pid"); g0=$(pg_ticks)
    out=$("$BIN/httpload" vote "$addr" "$CONNS" "$SECS" "$ids" 2>>"$OUT/postgres.log" | grep '^RESULT' || true)
    c1=$(ticks "$pid"); g1=$(pg_ticks)
    n=$(field ops "$out")
    # What the run left to do once answered (SQLite's writer mixes after an
    # idle moment), counted apart: polld's CPU 2 s later.
    sleep 2
    settled=$(per_op "$c0" "$(ticks "$pid")" "$n")
    r1=$(stored_votes "$engine")
    record "$round" "$engine" "vote (GET + POST)" "$n" "$(field rps "$out")" "$(field p99_ms "$out")" \
        "$(per_op "$c0" "$c1" "$n")" "$(per_op "$g0" "$g1" "$n")" \
        "$(field errors "$out") errors; POST p99, whole vote p99 $(field vote_p99_ms "$out") ms; $((r1 - r0)) stored of $n acknowledged; polld $settled µs with 2 s after"
    # The write path alone, no HTTP: anonbench cast ($CONNS threads, each
    # ballot with a fresh vote form's nonce as the web's votes bring), on
    # the same database. On PostgreSQL it is one more node beside polld
    # (with its own copy of the key file); SQLite takes one writer process,
    # so its polld stops meanwhile. "polld" is anonbench's whole process here.
    local db=$WORK/sqlite/anonpoll.sqlite3 keys=
    if [ "$engine" = pg ]; then db=$URL keys=$WORK/pg-cast.keys; else stop_pid "$SQ_PID"; fi
    g0=$(pg_ticks)
    out=$(ANONBENCH_KEYS=$keys "$BIN/anonbench" cast "$db" "$SECS" "$CONNS" "$ids" single forms 2>>"$OUT/postgres.log" | grep '^RESULT' || true)
    pg_settle
    g1=$(pg_ticks)
    n=$(field requests "$out")
    record "$round" "$engine" "Store::cast + form (no HTTP)" "$n" "$(field rps "$out")" "$(field p99_ms "$out")" \
        "$(field cpu_us_per_op "$out")" "$(per_op "$g0" "$g1" "$n")" \
        "$(field errors "$out") errors; writer thread $(field writer_cpu_us_per_op "$out") µs"
    if [ "$engine" = sqlite ]; then
        start_polld sqlite --db "$WORK/sqlite/anonpoll.sqlite3"
        SQ_PID=$LAST_PID SQ_ADDR=$ADDR
    fi
}
for round in $(seq "$ROUNDS"); do
    order="sqlite pg"
    [ $((round % 2)) = 0 ] && order="pg sqlite"
    for engine in $order; do
        measure "$round" "$engine"
    done
done
echo "load average after phase 1=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/postgres.meta"
stop_pid "$SQ_PID"

# ------------------------------------------------------------ 2. two nodes against one
TWO=$OUT/two-nodes.tsv
if [ "$TWO_NODES" = 1 ]; then
    # A second node: a copy of the first one's key file (docs/OPERATIONS.md).
    cp -p "$WORK/pg.keys" "$WORK/pg-b.keys"
    start_polld pg-b --db "$URL" --keys "$WORK/pg-b.keys"
    PGB_PID=$LAST_PID PGB_ADDR=$ADDR
    printf 'round\tnodes\tvotes\tvotes_per_s\tpost_p99_ms\tpolld_us\tpg_us\tloadgen_us\tmachine_busy\tstored\n' >"$TWO"
    half=$((CONNS / 2))
    # The 8 polls split between the nodes (4 each): two writers that never
    # lock the same poll row, against all 8 on both (every batch of both
    # nodes locks nearly every poll, so their commits take turns).
    head -4 "$WORK/pg.ids" >"$WORK/pg-a.ids"
    tail -n +5 "$WORK/pg.ids" >"$WORK/pg-b.ids"
    vote_run() { # vote_run MODE (1, 2 = same polls, 2split = 4 polls each)
        local tf=$WORK/time
        local m0 m1 c0 c1 g0 g1 r0 r1 out outa outb n rps p99 lg ida=$WORK/pg.ids idb=$WORK/pg.ids
        [ "$1" = 2split ] && ida=$WORK/pg-a.ids idb=$WORK/pg-b.ids
        "$BIN/httpload" vote "$PG_ADDR" "$half" 1 "$WORK/pg.ids" >/dev/null 2>&1 &
        "$BIN/httpload" vote "$PGB_ADDR" "$half" 1 "$WORK/pg.ids" >/dev/null 2>&1
        wait $! 2>/dev/null || true
        sleep 0.5
        r0=$(stored_votes pg)
        read -r m0 mt0 < <(machine_ticks)
        c0=$(ticks "$PG_PID" "$PGB_PID"); g0=$(pg_ticks)
        if [ "$1" = 1 ]; then
            out=$(/usr/bin/time -f '%U %S' -o "$tf.a" "$BIN/httpload" vote "$PG_ADDR" "$CONNS" "$SECS" "$WORK/pg.ids" 2>>"$OUT/postgres.log" | grep '^RESULT' || true)
            n=$(field ops "$out"); rps=$(field rps "$out"); p99=$(field p99_ms "$out")
            lg=$(awk '{ print $1 + $2 }' "$tf.a")
        else
            /usr/bin/time -f '%U %S' -o "$tf.b" "$BIN/httpload" vote "$PGB_ADDR" "$half" "$SECS" "$idb" >"$WORK/out.b" 2>>"$OUT/postgres.log" &
            local bpid=$!
            outa=$(/usr/bin/time -f '%U %S' -o "$tf.a" "$BIN/httpload" vote "$PG_ADDR" "$half" "$SECS" "$ida" 2>>"$OUT/postgres.log" | grep '^RESULT' || true)
            wait "$bpid" || true
            outb=$(grep '^RESULT' "$WORK/out.b" || true)
            n=$(($(field ops "$outa") + $(field ops "$outb")))
            rps=$(awk -v a="$(field rps "$outa")" -v b="$(field rps "$outb")" 'BEGIN { printf "%.1f", a + b }')
            p99=$(awk -v a="$(field p99_ms "$outa")" -v b="$(field p99_ms "$outb")" 'BEGIN { print (a > b ? a : b) }')
            lg=$(cat "$tf.a" "$tf.b" | awk '{ s += $1 + $2 } END { print s }')
        fi
        c1=$(ticks "$PG_PID" "$PGB_PID"); g1=$(pg_ticks)
        read -r m1 mt1 < <(machine_ticks)
        sleep 0.5
        r1=$(stored_votes pg)
        local IFS=$'\t'
        local busy lgus
        busy=$(awk -v a="$m0" -v b="$m1" -v x="$mt0" -v y="$mt1" 'BEGIN { printf "%.0f%%", (b - a) * 100 / (y - x) }')
        lgus=$(awk -v s="$lg" -v n="$n" 'BEGIN { if (n > 0) printf "%.1f", s * 1e6 / n; else print "-" }')
        echo "$round	$1	$n	$rps	$p99	$(per_op "$c0" "$c1" "$n")	$(per_op "$g0" "$g1" "$n")	$lgus	$busy	$((r1 - r0))" >>"$TWO"
        say "two nodes, round $round, $1 node(s): $rps votes/s (p99 $p99 ms), CPU per vote polld $(per_op "$c0" "$c1" "$n") µs, PostgreSQL $(per_op "$g0" "$g1" "$n") µs, load generator $lgus µs; machine busy $busy; $((r1 - r0)) stored of $n acknowledged"
    }
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) = 1 ]; then vote_run 1; vote_run 2; vote_run 2split; else vote_run 2split; vote_run 2; vote_run 1; fi
    done
    stop_pid "$PGB_PID"
fi

# ------------------------------------------------------------ 3. statements per request
STMT=$OUT/statements.txt
if [ "$STATEMENTS" = 1 ]; then
    stop_pid "$PG_PID"
    pg_ctl_ -m fast -w stop >/dev/null
    PG_UP=
    pg_conf "shared_preload_libraries = 'pg_stat_statements'"
    echo "pg_stat_statements.track = all" >>"$PGDATA/bench.conf"
    pg_start
    psql_ -d bench -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
    start_polld pg --db "$URL" --keys "$WORK/pg.keys"
    PG_PID=$LAST_PID PG_ADDR=$ADDR
    : >"$STMT"
    statement_table() { # statement_table N WHAT: every statement run since the reset, per WHAT
        local where="dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') AND query NOT LIKE '%pg_stat_statements%'"
        echo "calls per $2 | rows per call | statement"
        psql_ -d bench -F ' | ' -c "SELECT round(calls::numeric / $1, 3), round(rows::numeric / greatest(calls, 1), 1),
                regexp_replace(left(query, 110), '\s+', ' ', 'g') FROM pg_stat_statements WHERE $where ORDER BY calls DESC"
        echo "total statements per $2: $(psql_ -d bench -c "SELECT round(sum(calls)::numeric / $1, 2) FROM pg_stat_statements WHERE $where")"
    }
    export BENCH_IDS=$WORK/pg.ids BENCH_METHOD=GET
    for spec in "poll JSON|/api/polls/{id}" "results JSON|/api/polls/{id}/results" "share page|/p/{id}" "vote (GET + POST)|vote"; do
        # Every connection polld keeps is opened (and its statements prepared) first.
        "$BIN/httpload" vote "$PG_ADDR" "$CONNS" 1 "$WORK/pg.ids" >/dev/null 2>&1 || true
        sleep 0.5
        psql_ -d bench -c "SELECT pg_stat_statements_reset()" >/dev/null
        if [ "${spec#*|}" = vote ]; then
            out=$("$BIN/httpload" vote "$PG_ADDR" "$CONNS" 2 "$WORK/pg.ids" 2>/dev/null | grep '^RESULT' || true)
            n=$(field ops "$out")
        else
            export BENCH_PATH=${spec#*|}
            out=$(wrk -t2 -c"$CONNS" -d2s --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "http://$PG_ADDR" 2>&1 | grep '^RESULT' || true)
            n=$(field requests "$out")
        fi
        sleep 0.5
        if [ "${n:-0}" -le 0 ]; then
            say "statements: ${spec%%|*}: no requests answered"
            continue
        fi
        {
            echo "## ${spec%%|*}: $n requests (operations) in 2 s"
            echo
            statement_table "$n" request
            echo
        } >>"$STMT"
        say "statements: ${spec%%|*}: $(tail -2 "$STMT" | head -1)"
    done
    # The store alone (anonbench cast), without and with a vote form's
    # nonce: what spending the form costs the writer and PostgreSQL.
    for proof in none forms; do
        psql_ -d bench -c "SELECT pg_stat_statements_reset()" >/dev/null
        g0=$(pg_ticks)
        out=$(ANONBENCH_KEYS=$WORK/pg-cast.keys "$BIN/anonbench" cast "$URL" 3 "$CONNS" "$WORK/pg.ids" single \
            $([ "$proof" = forms ] && echo forms) 2>>"$OUT/postgres.log" | grep '^RESULT' || true)
        pg_settle
        g1=$(pg_ticks)
        n=$(field requests "$out")
        [ "${n:-0}" -gt 0 ] || { say "statements: Store::cast ($proof): no votes"; continue; }
        {
            echo "## Store::cast, $([ "$proof" = forms ] && echo "each ballot with a vote form's nonce" || echo "no form"): $n votes in 3 s ($CONNS threads)"
            echo
            echo "$(field rps "$out") votes/s, p99 $(field p99_ms "$out") ms; CPU per vote: anonbench $(field cpu_us_per_op "$out") µs" \
                "(its writer thread $(field writer_cpu_us_per_op "$out") µs), PostgreSQL $(per_op "$g0" "$g1" "$n") µs"
            echo
            statement_table "$n" vote
            echo
        } >>"$STMT"
        say "statements: Store::cast ($proof): $(field rps "$out") votes/s, anonbench $(field cpu_us_per_op "$out") µs (writer $(field writer_cpu_us_per_op "$out")), PostgreSQL $(per_op "$g0" "$g1" "$n") µs per vote; $(tail -2 "$STMT" | head -1)"
    done
    stop_pid "$PG_PID"
fi
echo "load average at end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/postgres.meta"

# ------------------------------------------------------------ summary
median_awk='function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}'
{
    echo "# The PostgreSQL store beside SQLite ($ROUNDS alternating rounds)"
    echo
    sed 's/^/    /' "$OUT/postgres.meta"
    echo
    echo "Medians over the rounds; CPU µs per request (per vote: GET + POST) of"
    echo "polld and of every PostgreSQL process of the cluster. PG / SQLite: the"
    echo "ratio of the medians, then the median of the per-round ratios (each round"
    echo "measures both engines back to back). Raw rows: postgres.tsv."
    echo
    echo "| scenario | SQLite req/s | PG req/s | SQLite p99 ms | PG p99 ms | SQLite polld µs | PG polld µs | PostgreSQL µs | PG total µs | PG / SQLite CPU (medians) | median of round ratios | round ratios | PG / SQLite req/s |"
    echo "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|"
    awk -F'\t' "$median_awk"'
        NR > 1 {
            k = $3
            if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
            rps[k, $2] = rps[k, $2] " " $5; p99[k, $2] = p99[k, $2] " " $6
            pd[k, $2] = pd[k, $2] " " $7; pg[k, $2] = pg[k, $2] " " $8; tot[k, $2] = tot[k, $2] " " $9
            r[k, $1, $2] = $9; rounds[$1] = 1
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = keys[i]; rr = ""; list = ""
                for (q = 1; q in rounds; q++) if (r[k, q, "sqlite"] > 0) {
                    x = r[k, q, "pg"] / r[k, q, "sqlite"]; rr = rr " " x
                    list = list sprintf("%s%.2f", (list == "" ? "" : ", "), x)
                }
                sq = median(tot[k, "sqlite"]); pt = median(tot[k, "pg"])
                printf "| %s | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | **%.2f** | %.2f | %s | %.2f |\n", k,
                    median(rps[k, "sqlite"]), median(rps[k, "pg"]), median(p99[k, "sqlite"]), median(p99[k, "pg"]),
                    sq, median(pd[k, "pg"]), median(pg[k, "pg"]), pt, pt / sq, median(rr), list,
                    median(rps[k, "pg"]) / median(rps[k, "sqlite"])
            }
        }' "$TSV"
    if [ -s "$TWO" ]; then
        echo
        echo "## Two nodes on one database against one node (votes: GET + POST)"
        echo
        echo "One node: $CONNS connections to node A; two nodes: $((CONNS / 2)) to each, two load"
        echo "generators at once. CPU µs per vote; the machine's busy share of all its"
        echo "$(nproc) cores over the run (/proc/stat). Raw rows: two-nodes.tsv."
        echo
        echo "\"2split\": two nodes, 4 of the 8 polls each (no poll row locked by both)."
        echo
        echo "| nodes | votes/s (median) | p99 POST ms | pollds µs | PostgreSQL µs | load generator µs | machine busy | every vote stored |"
        echo "|---|--:|--:|--:|--:|--:|--:|---|"
        awk -F'\t' "$median_awk"'
            NR > 1 {
                v[$2] = v[$2] " " $4; p[$2] = p[$2] " " $5; a[$2] = a[$2] " " $6; b[$2] = b[$2] " " $7; l[$2] = l[$2] " " $8
                m[$2] = m[$2] " " ($9 + 0); if ($3 != $10) bad[$2] = bad[$2] " round " $1
                r[$1, $2] = $4; rounds[$1] = 1
            }
            END {
                split("1 2 2split", modes, " ")
                for (i = 1; i <= 3; i++) if ((n = modes[i]) in v)
                    printf "| %s | %.0f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %s |\n", n, median(v[n]), median(p[n]), median(a[n]),
                        median(b[n]), median(l[n]), median(m[n]), (bad[n] == "" ? "yes" : "no:" bad[n])
                for (i = 2; i <= 3; i++) if ((n = modes[i]) in v) {
                    list = ""
                    for (q = 1; q in rounds; q++) if (r[q, 1] > 0) list = list sprintf("%s%.2f", (list == "" ? "" : ", "), r[q, n] / r[q, 1])
                    printf "\n%s / one node, votes/s: %.2f (ratio of medians); per round %s.\n", n, median(v[n]) / median(v[1]), list
                }
            }' "$TWO"
    fi
    if [ -s "$STMT" ]; then
        echo
        echo "## Statements PostgreSQL ran per request (pg_stat_statements, one node)"
        echo
        sed 's/^/    /' "$STMT"
    fi
} >"$OUT/summary.md"
say "written: $OUT/summary.md (raw: postgres.tsv, two-nodes.tsv, statements.txt, postgres.log)"
