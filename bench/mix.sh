#!/usr/bin/env bash
# What the mix costs (issue 36), on SQLite and on PostgreSQL, and the vote on
# both engines, in alternating rounds:
#
#   bench/mix.sh [--rounds 3] [--ballots 10000] [--engines "sqlite pg"]
#                [--trickle "1 10"] [--trickle-seconds 30]
#                [--vote-connections "1 4"] [--vote-seconds 5]
#                [--no-mix] [--no-votes] [--out DIR]
#
# Everything on disk in one scratch folder (BENCH_WORK, default a new
# /tmp/anonpoll-mix.*): the SQLite files and the throwaway PostgreSQL cluster
# (initdb as the `postgres` user when run as root; fsync and
# synchronous_commit on, as bench/postgres.sh) lie on the same filesystem.
#
# 1. The mix (unless --no-mix). Each round, for each engine (the order swaps
#    every round): a fresh polld (--trusted-proxy 127.0.0.1/8, bench limits)
#    on a fresh database (SQLite file; on PostgreSQL a new database of the
#    cluster), one poll of 3 single questions of 4 options with
#    `duplicateCheck: none` and receipts (`voteChanges`, the default),
#    2 votes whose receipts are kept, then `httpload fill` to --ballots
#    (4 connections), then polld left to mix them and fall quiet. Then, one
#    at a time, each in a window of `procwatch` (1 ms samples of polld's
#    writer thread and of every process of the cluster, from /proc):
#    - `mix after checkpoint` (PostgreSQL: `CHECKPOINT` first, so that the
#      mix's WAL holds a full-page image of each page it touches first; on
#      SQLite the same step without it): one vote, then polld's own mix of
#      the poll once its writer has been idle 250 ms;
#    - `mix`: the same again, no checkpoint (the pages are in the WAL since);
#    - `change`: `POST /p/{id}/ballot` with the first receipt, action=change
#      (the ballot changed and the poll mixed, in one transaction);
#    - `withdraw`: with the second receipt, action=withdraw.
#    Figures: the writer's busy span for it (`procwatch`'s largest burst:
#    from the first to the last sample in which the writer thread or the
#    cluster's busiest client backend ran, pauses of up to 100 ms included;
#    on SQLite this includes the WAL's truncation after a mix or a change),
#    the CPU of the writer thread and of that process in it, the CPU of
#    the whole polld and cluster over the window (the vote's GET and POST
#    too), the change's or withdrawal's own request time, and bytes: on
#    SQLite what the writer wrote (wchar: WAL frames, checkpoint, -shm) and
#    the WAL's peak less its size when the burst began; on PostgreSQL the
#    WAL's growth (pg_current_wal_insert_lsn) over the window.
#    Then the trickle: for each rate of --trickle (votes a second, one
#    connection, GET + POST) on the full poll for --trickle-seconds: the
#    mixes seen (bursts with at least a quarter of the round's `mix` CPU),
#    the time between them, the share of the time they kept the writer
#    busy, and the writer's (and its backend's) CPU share.
# 2. The vote on both engines (unless --no-votes): one polld per engine on
#    a fresh database, 8 polls (as bench/postgres.sh); each round, for each
#    engine in turn, for each count of --vote-connections: `httpload vote`
#    for --vote-seconds (after 1 s unmeasured), CPU per vote of polld and
#    of every process of the cluster, p50 and p99 of the POST and of the
#    whole vote; then the CPU of the 2 s after (the mix of those votes).
#
# Writes DIR/mix.tsv, trickle.tsv, votes.tsv, bursts.tsv (every burst of
# every window), mix.meta, mix.log and the summary DIR/summary.md (default
# DIR: bench/results/<date>-mix). Needs curl, sqlite3, PostgreSQL (Debian's
# postgresql: /usr/lib/postgresql/*/bin), and polld, httpload and procwatch
# built in $BENCH_TARGET_DIR (default /tmp/bench-target):
#   cargo build --release --bin polld
#   cargo build --release --manifest-path bench/tools/Cargo.toml
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${BENCH_TARGET_DIR:-/tmp/bench-target}
ROUNDS=3
BALLOTS=10000
ENGINES="sqlite pg"
TRICKLE="1 10"
TRICKLE_SECS=30
VOTE_CONNS="1 4"
VOTE_SECS=5
DO_MIX=1
DO_VOTES=1
OUT=
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift ;;
        --ballots) BALLOTS=$2; shift ;;
        --engines) ENGINES=$2; shift ;;
        --trickle) TRICKLE=$2; shift ;;
        --trickle-seconds) TRICKLE_SECS=$2; shift ;;
        --vote-connections) VOTE_CONNS=$2; shift ;;
        --vote-seconds) VOTE_SECS=$2; shift ;;
        --no-mix) DO_MIX=0 ;;
        --no-votes) DO_VOTES=0 ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,59p' "$0"; exit 0 ;;
        *) echo "mix.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
for tool in curl sqlite3; do
    command -v "$tool" >/dev/null || { echo "mix.sh: $tool is needed" >&2; exit 2; }
done
BIN=$TARGET/release
for b in polld httpload procwatch; do
    [ -x "$BIN/$b" ] || { echo "mix.sh: $BIN/$b is missing (cargo build --release; bench/tools with --manifest-path)" >&2; exit 2; }
done
PGBIN=
case " $ENGINES " in *" pg "*)
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    [ -x "$PGBIN/initdb" ] || { echo "mix.sh: PostgreSQL is needed (apt-get install postgresql)" >&2; exit 2; } ;;
esac

OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y-%m-%d)-mix}
mkdir -p "$OUT"
: >"$OUT/mix.log"
WORK=${BENCH_WORK:-$(mktemp -d /tmp/anonpoll-mix.XXXXXX)}
mkdir -p "$WORK"
chmod 755 "$WORK"
PG=$WORK/pg
PGDATA=$PG/data
PIDS=()
PG_UP=
PW_PID=
PW_FD=
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_ctl_() { (cd "$PG" && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" "$@"); }
cleanup() {
    local p
    [ -n "$PW_FD" ] && { eval "exec $PW_FD>&-" || true; }
    [ -n "$PW_PID" ] && { kill "$PW_PID" 2>/dev/null || true; wait "$PW_PID" 2>/dev/null || true; }
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    [ -n "$PG_UP" ] && pg_ctl_ -m fast -w stop >/dev/null 2>&1 || true
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$WORK"
    return 0
}
trap cleanup EXIT
say() { printf '[mix %s] %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/mix.log" >&2; }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
HZ=$(getconf CLK_TCK)

# ------------------------------------------------------------ CPU from /proc
ticks() { # utime + stime of the given pids, in clock ticks
    local t=0 p line
    for p in "$@"; do
        read -r line <"/proc/$p/stat"
        # shellcheck disable=SC2086
        set -- ${line##*) }
        t=$((t + ${12} + ${13}))
    done
    echo "$t"
}
pg_ticks() { # every process of the cluster, plus what the postmaster reaped
    local pm t=0 f line
    [ -n "$PG_UP" ] || { echo 0; return; }
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
quiet() { # quiet PID ENGINE: waits until polld (and the cluster) ran at most 2 ticks in a second; 60 s at most
    local a b i
    b=$(($(ticks "$1") + $([ "$2" = pg ] && pg_ticks || echo 0)))
    for i in $(seq 60); do
        sleep 1
        a=$b
        b=$(($(ticks "$1") + $([ "$2" = pg ] && pg_ticks || echo 0)))
        [ $((b - a)) -le 2 ] && return 0
    done
    say "polld ($2) did not fall quiet within 60 s"
}

# ------------------------------------------------------------ PostgreSQL
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
psql_() { "$PGBIN/psql" -X -q -A -t -h 127.0.0.1 -p "$PGPORT_" -U postgres "$@"; }
if [ -n "$PGBIN" ]; then
    mkdir -p "$PG/sock"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$PG"
    say "initdb ($PGBIN) in $PGDATA"
    (cd "$PG" && as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust --no-sync -U postgres -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1) ||
        { cat "$WORK/initdb.log" >&2; exit 1; }
    PGPORT_=$(free_port)
    {
        echo "# Written by bench/mix.sh: as in production but for the address."
        echo "listen_addresses = '127.0.0.1'"
        echo "port = $PGPORT_"
        echo "unix_socket_directories = '$PG/sock'"
        echo "fsync = on"
        echo "synchronous_commit = on"
        echo "max_connections = 200"
        echo "timezone = 'UTC'"
    } >"$PGDATA/bench.conf"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$PGDATA/bench.conf"
    echo "include 'bench.conf'" >>"$PGDATA/postgresql.conf"
    pg_ctl_ -l "$PG/server.log" -w -t 60 start >/dev/null || { cat "$PG/server.log" >&2; exit 1; }
    PG_UP=1
    say "PostgreSQL $(psql_ -d postgres -c 'SHOW server_version') on 127.0.0.1:$PGPORT_, fsync=$(psql_ -d postgres -c 'SHOW fsync'), synchronous_commit=$(psql_ -d postgres -c 'SHOW synchronous_commit'), full_page_writes=$(psql_ -d postgres -c 'SHOW full_page_writes'), checkpoint_timeout=$(psql_ -d postgres -c 'SHOW checkpoint_timeout')"
fi
lsn() { psql_ -d postgres -c "SELECT pg_current_wal_insert_lsn()"; }
pg_log() { # pg_log on|off: every statement in the server's log, with its time and backend, or none
    if [ "$1" = on ]; then
        psql_ -d postgres -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "ALTER SYSTEM SET log_parameter_max_length = 0" \
            -c "ALTER SYSTEM SET log_line_prefix = '%m [%p] '" -c "SELECT pg_reload_conf()" >/dev/null
    else
        psql_ -d postgres -c "ALTER SYSTEM RESET log_min_duration_statement" -c "ALTER SYSTEM RESET log_parameter_max_length" \
            -c "ALTER SYSTEM RESET log_line_prefix" -c "SELECT pg_reload_conf()" >/dev/null
    fi
    sleep 0.2
}
# The last transaction in the server's log from byte OFFSET on that replaced
# a poll's ballots (a mix, or on a whole-poll mix build a change or
# withdrawal, which then mixed in the same transaction; on a build that mixes
# groups, a change or withdrawal is its own small transaction and the mix
# that follows it is the one found): "ms statements", from the
# end of its BEGIN to the end of its COMMIT, by the log's timestamps (ms).
pg_big_tx() { # pg_big_tx OFFSET
    tail -c +"$(($1 + 1))" "$PG/server.log" | awk '
        function t(   a) { split($2, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
        / LOG:  duration: / {
            pid = $4
            if ($0 ~ /statement: (BEGIN|START TRANSACTION)$/) { begin[pid] = t(); n[pid] = 0; big[pid] = 0; next }
            if ((pid in begin) && $0 ~ / (execute [^:]*|statement): /) n[pid]++
            # A whole-poll mix deletes every row of the poll; a mix of groups
            # (90a2a3e) deletes its staged rows and each group by key range.
            if ($0 ~ /DELETE FROM sealed_ballots WHERE poll_id = \$1( AND id BETWEEN \$2 AND \$3)?$/) big[pid] = 1
            if ($0 ~ /statement: COMMIT$/ && (pid in begin)) {
                if (big[pid]) out = sprintf("%.1f %d", (t() - begin[pid]) * 1000, n[pid] - 1)
                delete begin[pid]
            }
        }
        END { print (out == "" ? "- -" : out) }'
}
lsn_diff() { psql_ -d postgres -c "SELECT pg_wal_lsn_diff('$2', '$1')"; }

# ------------------------------------------------------------ polld and procwatch
POLLD_FLAGS=(--create-limit 1000000000 --trusted-proxy 127.0.0.1/8 --vote-limit 4000000000 --network-votes-per-day 0)
ADDR=
LAST_PID=
start_polld() { # start_polld NAME ARGS...: sets ADDR and LAST_PID
    local name=$1 logf=$WORK/polld-$1.log i
    shift
    ADDR=
    : >"$logf"
    "$BIN/polld" "$@" --listen 127.0.0.1:0 "${POLLD_FLAGS[@]}" >"$logf" 2>&1 &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
    for i in $(seq 200); do
        # Only once the log ends with a newline: polld writes its line in pieces.
        [ "$(tail -c 1 "$logf" | od -An -tx1 | tr -d ' \n')" = 0a ] && ADDR=$(sed -n 's/.*listening on \(http:\/\/\)\{0,1\}\([0-9.:]*\).*/\2/p' "$logf" | head -1)
        [ -n "$ADDR" ] && return 0
        kill -0 "$LAST_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "mix.sh: polld ($name) did not start" >&2
    cat "$logf" >&2
    exit 1
}
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
PW_OUT=
watch_start() { # watch_start POLLD_PID ENGINE [WAL]: procwatch on polld (and the cluster)
    PW_OUT=$WORK/procwatch.$1.out
    rm -f "$WORK/pw.fifo"
    mkfifo "$WORK/pw.fifo"
    local args=("$1")
    [ "$2" = pg ] && args+=("$PGDATA")
    [ -n "${3:-}" ] && args+=(--wal "$3")
    "$BIN/procwatch" "${args[@]}" <"$WORK/pw.fifo" >"$PW_OUT" &
    PW_PID=$!
    exec {PW_FD}>"$WORK/pw.fifo"
}
watch_mark() { echo "mark $1 ${2:-}" >&"$PW_FD"; sleep 0.05; } # watch_mark NAME [GAP_MS]
watch_end() { # the window's WINDOW line
    echo end >&"$PW_FD"
    local i
    for i in $(seq 100); do
        grep -q "^WINDOW name=$1 " "$PW_OUT" && break
        sleep 0.05
    done
    grep "^BURST name=$1 " "$PW_OUT" | sed "s/^/$ROUND_TAG /" >>"$OUT/bursts.txt" || true
    grep "^WINDOW name=$1 " "$PW_OUT" | tail -1
}
watch_stop() {
    exec {PW_FD}>&-
    PW_FD=
    wait "$PW_PID" 2>/dev/null || true
    PW_PID=
}

POLL_JSON='{"title":"Mix benchmark poll","lang":"en","expiryDays":30,"resultsPublic":true,"duplicateCheck":"none","questions":['
BENCH_JSON='{"title":"Benchmark poll","lang":"en","expiryDays":30,"resultsPublic":true,"questions":['
for q in 1 2 3; do
    [ "$q" = 1 ] || { POLL_JSON+=','; BENCH_JSON+=','; }
    POLL_JSON+="{\"type\":\"single\",\"label\":\"Question $q of the benchmark poll?\",\"options\":[\"Option 1\",\"Option 2\",\"Option 3\",\"Option 4\"]}"
    BENCH_JSON+="{\"type\":\"single\",\"label\":\"Question $q of the benchmark poll?\",\"options\":[\"Option 1\",\"Option 2\",\"Option 3\",\"Option 4\"]}"
done
POLL_JSON+=']}'
BENCH_JSON+=']}'
create_poll() { # create_poll ADDR JSON [XFF]: prints the id
    curl -sf -H 'Content-Type: application/json' -H "X-Forwarded-For: ${3:-198.18.0.1}" \
        --data "$2" "http://$1/api/polls" | grep -o '"id" *: *"[^"]*"' | head -1 | sed 's/.*: *"\([^"]*\)"/\1/'
}
# The poll's stored ballots and how many are still staged (key 0xff…).
ballots() { # ballots ENGINE DB POLL_ID: "stored staged"
    if [ "$1" = pg ]; then
        psql_ -d "$2" -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE get_byte(id, 0) = 255) FROM sealed_ballots WHERE poll_id = '$3'"
    else
        sqlite3 -separator ' ' "file:$2?mode=ro" "SELECT count(*), count(*) FILTER (WHERE substr(id, 1, 1) = x'ff') FROM sealed_ballots WHERE poll_id = '$3'"
    fi
}
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }

{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown) (HEAD of this checkout when run; polld: $BIN/polld, built $(date -u -r "$BIN/polld" +%Y-%m-%dT%H:%M:%SZ), from whatever tree it was built from)"
    echo "machine=$(nproc) × $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
    echo "scratch=$WORK on $(df --output=source,fstype "$WORK" | tail -1 | tr -s ' ')"
    [ -n "$PG_UP" ] && echo "postgresql=$(psql_ -d postgres -c 'SHOW server_version') fsync=on synchronous_commit=on full_page_writes=$(psql_ -d postgres -c 'SHOW full_page_writes') shared_buffers=$(psql_ -d postgres -c 'SHOW shared_buffers') checkpoint_timeout=$(psql_ -d postgres -c 'SHOW checkpoint_timeout'), data directory in $PGDATA"
    echo "rounds=$ROUNDS ballots=$BALLOTS engines=$ENGINES trickle=$TRICKLE per second for ${TRICKLE_SECS}s vote connections=$VOTE_CONNS for ${VOTE_SECS}s"
    echo "load average at start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/mix.meta"

ROUND_TAG=
: >"$OUT/bursts.txt"
# ------------------------------------------------------------ 1. the mix
MIXTSV=$OUT/mix.tsv
TRTSV=$OUT/trickle.tsv
printf 'round\tengine\tevent\tballots\twall_ms\ttx_ms\twriter_ms\tbackend_ms\tpolld_ms\tpg_ms\trequest_ms\twriter_wchar\twal_bytes\tdb_growth\tbursts\tnote\n' >"$MIXTSV"
printf 'round\tengine\tper_second\tseconds\tvotes\terrors\tmixes\tmix_every_s\twriter_share\tmix_writer_share\tbackend_share\tmix_backend_share\tpolld_share\tpg_share\tpost_p50_ms\tpost_p99_ms\tpost_max_ms\tballots_after\tmix_wall_share\n' >"$TRTSV"

mix_round() { # mix_round ROUND ENGINE
    local round=$1 engine=$2 db dbarg keysarg=() id r1 r2 wal= out line w0 w1 l0 l1 s0 s1 big_cpu=1 prev_wall=0
    ROUND_TAG="$round $engine"
    if [ "$engine" = pg ]; then
        db=mix$round
        psql_ -d postgres -c "CREATE DATABASE $db"
        dbarg="postgresql://postgres@127.0.0.1:$PGPORT_/$db"
        keysarg=(--keys "$WORK/$db.keys")
    else
        rm -rf "$WORK/sqlite-$round" "$WORK/sqlite-$round-keys"
        mkdir -p "$WORK/sqlite-$round"
        db=$WORK/sqlite-$round/anonpoll.sqlite3
        dbarg=$db
        wal=$db-wal
    fi
    start_polld "$engine-$round" --db "$dbarg" "${keysarg[@]}"
    local pid=$LAST_PID addr=$ADDR
    id=$(create_poll "$addr" "$POLL_JSON")
    [ -n "$id" ] || { echo "mix.sh: creating the poll failed" >&2; exit 1; }
    echo "$id" >"$WORK/mix.ids"
    out=$("$BIN/httpload" receipts "$addr" "$id" 2)
    r1=$(sed -n 's/^RECEIPT //p' <<<"$out" | sed -n 1p)
    r2=$(sed -n 's/^RECEIPT //p' <<<"$out" | sed -n 2p)
    local t0=$SECONDS
    out=$("$BIN/httpload" fill "$addr" "$id" $((BALLOTS - 2)) 4 2>>"$OUT/mix.log" | grep '^RESULT')
    say "round $round $engine: filled $id in $((SECONDS - t0)) s: $out"
    quiet "$pid" "$engine"
    sleep 3
    quiet "$pid" "$engine"
    say "round $round $engine: poll $id holds $(ballots "$engine" "$db" "$id") (stored staged)"
    watch_start "$pid" "$engine" "$wal"
    [ "$engine" = pg ] && pg_log on
    local event logoff=0 tx
    for event in mix-after-checkpoint mix change withdraw; do
        # A mix waits 9 times as long as the last took, and a second at least.
        sleep "$(awk -v w="$prev_wall" 'BEGIN { s = w * 10 / 1000; printf "%.1f", (s < 2 ? 2 : s) }')"
        [ "$engine" = pg ] && [ "$event" = mix-after-checkpoint ] && psql_ -d postgres -c CHECKPOINT
        [ "$engine" = pg ] && l0=$(lsn) && logoff=$(size_of "$PG/server.log")
        s0=$(( $(size_of "$db") ))
        local req=-
        # Bursts joined across 100 ms without CPU: a backend or writer held
        # up by the disk or by another process for a while is still in it.
        watch_mark "$event" 100
        case "$event" in
            mix*) out=$("$BIN/httpload" receipts "$addr" "$id" 1 | grep '^RESULT') ;;
            change) out=$("$BIN/httpload" own "$addr" "$id" "$r1" change 2>>"$OUT/mix.log" | grep '^RESULT'); req=$(field p50_ms "$out") ;;
            withdraw) out=$("$BIN/httpload" own "$addr" "$id" "$r2" withdraw 2>>"$OUT/mix.log" | grep '^RESULT'); req=$(field p50_ms "$out") ;;
        esac
        [ "$(field errors "$out")" = 0 ] || say "round $round $engine $event: $out"
        sleep 0.3
        quiet "$pid" "$engine"
        line=$(watch_end "$event")
        local walb dbg note=""
        if [ "$engine" = pg ]; then
            l1=$(lsn)
            tx=$(pg_big_tx "$logoff")
            note="transaction ${tx% *} ms (${tx#* } statements, server log)"
            walb=$(lsn_diff "$l0" "$l1")
            dbg=$(psql_ -d "$db" -c "SELECT pg_total_relation_size('sealed_ballots')")
            note="$note; sealed_ballots $dbg bytes after"
            dbg=-
        else
            s1=$(size_of "$db")
            dbg=$((s1 - s0))
            tx="$(field wal_peak_ms "$line") -"
            # The -wal file's growth is the frames written only when it
            # began empty (SQLite writes it again from its start after a
            # checkpoint): its size when the window began is in the note.
            note="WAL at its peak $(field wal_peak_ms "$line") ms into the burst, truncated at $(field wal_zero_ms "$line") ms; -wal $(field wal_start "$line") B when the window began"
            case "$event" in
                mix*) walb=$(( $(field wal_max "$line") - $(field wal_at_big "$line") )) ;;
                *) walb=$(( $(field wal_max "$line") - $(field wal_start "$line") )) ;;
            esac
        fi
        local n
        n=$(ballots "$engine" "$db" "$id")
        [ "${n#* }" = 0 ] || note="$note; ${n#* } still staged"
        local writer_b backend_b
        # The big burst's writer and backend CPU.
        writer_b=$(grep "^$round $engine BURST name=$event " "$OUT/bursts.txt" |
            awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } c = v["writer_ms"] + v["pgtop_ms"]; if (c > best) { best = c; w = v["writer_ms"]; b = v["pgtop_ms"] } } END { printf "%s %s", w, b }')
        backend_b=${writer_b#* }
        writer_b=${writer_b% *}
        local IFS=$'\t'
        echo "$round	$engine	$event	${n% *}	$(field big_wall_ms "$line")	${tx% *}	$writer_b	$backend_b	$(field polld_ms "$line")	$(field pg_ms "$line")	$req	$(field writer_wchar "$line")	$walb	$dbg	$(field bursts "$line")	${note#; }" >>"$MIXTSV"
        unset IFS
        say "round $round $engine $event (${n% *} ballots): busy $(field big_wall_ms "$line") ms, writer $writer_b ms, backend $backend_b ms CPU; window: polld $(field polld_ms "$line") ms, cluster $(field pg_ms "$line") ms; request $req ms; writer wrote $(field writer_wchar "$line") B, WAL $walb B${note:+; $note}"
        prev_wall=$(field big_wall_ms "$line")
        say "round $round $engine $event: transaction ${tx% *} ms"
        case "$event" in mix) big_cpu=$(field big_cpu_ms "$line") ;; esac
    done
    [ "$engine" = pg ] && pg_log off
    # The trickle: votes at a steady rate on the full poll.
    local rate
    for rate in $TRICKLE; do
        sleep 2
        watch_mark "trickle-$rate"
        out=$("$BIN/httpload" trickle "$addr" "$rate" "$TRICKLE_SECS" "$WORK/mix.ids" 2>>"$OUT/mix.log" | grep '^RESULT')
        line=$(watch_end "trickle-$rate")
        local secs n mixes
        secs=$(field secs "$line")
        n=$(ballots "$engine" "$db" "$id")
        # Mixes: bursts with at least a quarter of the isolated mix's CPU.
        mixes=$(grep "^$round $engine BURST name=trickle-$rate " "$OUT/bursts.txt" |
            awk -v min="$big_cpu" -v secs="$secs" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                if (v["writer_ms"] + v["pgtop_ms"] >= min / 4) { n++; w += v["writer_ms"]; b += v["pgtop_ms"]; wall += v["wall_ms"]; if (n > 1) gaps += v["start_ms"] - last; last = v["start_ms"] } }
                END { printf "%d %s %.4f %.4f %.4f", n, (n > 1 ? sprintf("%.2f", gaps / (n - 1) / 1000) : "-"), w / 1000 / secs, b / 1000 / secs, wall / 1000 / secs }')
        local IFS=$'\t'
        read -r nm every mw mb mwall <<<"${mixes// /$'\t'}"
        echo "$round	$engine	$rate	$secs	$(field ops "$out")	$(field errors "$out")	$nm	$every	$(awk -v a="$(field writer_ms "$line")" -v s="$secs" 'BEGIN { printf "%.4f", a / 1000 / s }')	$mw	$(awk -v a="$(field pgtop_ms "$line")" -v s="$secs" 'BEGIN { printf "%.4f", a / 1000 / s }')	$mb	$(awk -v a="$(field polld_ms "$line")" -v s="$secs" 'BEGIN { printf "%.4f", a / 1000 / s }')	$(awk -v a="$(field pg_ms "$line")" -v s="$secs" 'BEGIN { printf "%.4f", a / 1000 / s }')	$(field p50_ms "$out")	$(field p99_ms "$out")	$(field max_ms "$out")	${n% *}	$mwall" >>"$TRTSV"
        unset IFS
        say "round $round $engine trickle $rate/s: $(field ops "$out") votes, $nm mixes (every $every s); writer $(field writer_ms "$line") ms CPU of $secs s (mixes: share $mw, their busy spans $mwall of the time), backend share $mb; POST p50 $(field p50_ms "$out") p99 $(field p99_ms "$out") max $(field max_ms "$out") ms"
    done
    watch_stop
    stop_pid "$pid"
    [ "$engine" = pg ] && psql_ -d postgres -c "DROP DATABASE $db"
    [ "$engine" = sqlite ] && rm -rf "$WORK/sqlite-$round" "$WORK/sqlite-$round-keys"
    return 0
}
if [ "$DO_MIX" = 1 ]; then
    for round in $(seq "$ROUNDS"); do
        order=$ENGINES
        [ $((round % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$ENGINES" | tac | tr '\n' ' ')
        for engine in $order; do mix_round "$round" "$engine"; done
    done
fi

# ------------------------------------------------------------ 2. the vote on both engines
VTSV=$OUT/votes.tsv
printf 'round\tengine\tconnections\tvotes\tvotes_per_s\tpost_p50_ms\tpost_p99_ms\tvote_p50_ms\tvote_p99_ms\tpolld_us\tpg_us\ttotal_us\tafter_polld_us\tafter_pg_us\terrors\tstored\n' >"$VTSV"
if [ "$DO_VOTES" = 1 ]; then
    declare -A V_PID V_ADDR V_DB
    for engine in $ENGINES; do
        if [ "$engine" = pg ]; then
            psql_ -d postgres -c "CREATE DATABASE votes"
            V_DB[pg]=votes
            start_polld votes-pg --db "postgresql://postgres@127.0.0.1:$PGPORT_/votes" --keys "$WORK/votes.keys"
        else
            mkdir -p "$WORK/votes-sqlite"
            V_DB[sqlite]=$WORK/votes-sqlite/anonpoll.sqlite3
            start_polld votes-sqlite --db "${V_DB[sqlite]}"
        fi
        V_PID[$engine]=$LAST_PID
        V_ADDR[$engine]=$ADDR
        : >"$WORK/votes-$engine.ids"
        for i in $(seq 8); do create_poll "$ADDR" "$BENCH_JSON" "198.18.0.$i" >>"$WORK/votes-$engine.ids"; done
        "$BIN/httpload" vote "$ADDR" 4 1 "$WORK/votes-$engine.ids" >/dev/null
    done
    stored() { # stored ENGINE: every ballot of the database
        if [ "$1" = pg ]; then psql_ -d "${V_DB[pg]}" -c "SELECT count(*) FROM sealed_ballots"
        else sqlite3 "file:${V_DB[sqlite]}?mode=ro" "SELECT count(*) FROM sealed_ballots"; fi
    }
    per() { awk -v a="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", a * 1000 / n; else print "-" }'; }
    for round in $(seq "$ROUNDS"); do
        order=$ENGINES
        [ $((round % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$ENGINES" | tac | tr '\n' ' ')
        for engine in $order; do
            ROUND_TAG="$round $engine"
            pid=${V_PID[$engine]} addr=${V_ADDR[$engine]}
            quiet "$pid" "$engine"
            watch_start "$pid" "$engine"
            for c in $VOTE_CONNS; do
                "$BIN/httpload" vote "$addr" "$c" 1 "$WORK/votes-$engine.ids" >/dev/null 2>&1 || true
                quiet "$pid" "$engine"
                b0=$(stored "$engine")
                watch_mark "votes-$c"
                out=$("$BIN/httpload" vote "$addr" "$c" "$VOTE_SECS" "$WORK/votes-$engine.ids" 2>>"$OUT/mix.log" | grep '^RESULT')
                watch_mark "after-$c"
                line=$(grep "^WINDOW name=votes-$c " "$PW_OUT" | tail -1 || true)
                sleep 2
                after=$(watch_end "after-$c")
                for _ in $(seq 40); do line=$(grep "^WINDOW name=votes-$c " "$PW_OUT" | tail -1 || true); [ -n "$line" ] && break; sleep 0.05; done
                b1=$(stored "$engine")
                n=$(field ops "$out")
                pu=$(per "$(field polld_ms "$line")" "$n")
                gu=$(per "$(field pg_ms "$line")" "$n")
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$engine" "$c" "$n" "$(field rps "$out")" \
                    "$(field p50_ms "$out")" "$(field p99_ms "$out")" "$(field vote_p50_ms "$out")" "$(field vote_p99_ms "$out")" \
                    "$pu" "$gu" "$(awk -v a="$pu" -v b="$gu" 'BEGIN { printf "%.1f", a + b }')" \
                    "$(per "$(field polld_ms "$after")" "$n")" "$(per "$(field pg_ms "$after")" "$n")" "$(field errors "$out")" "$((b1 - b0))" >>"$VTSV"
                say "round $round $engine votes, $c connection(s): $(field rps "$out")/s, POST p50 $(field p50_ms "$out") p99 $(field p99_ms "$out") ms; CPU per vote polld $pu + cluster $gu µs (2 s after: $(per "$(field polld_ms "$after")" "$n") + $(per "$(field pg_ms "$after")" "$n")); $((b1 - b0)) stored of $n"
            done
            watch_stop
        done
    done
    for engine in $ENGINES; do stop_pid "${V_PID[$engine]}"; done
fi
echo "load average at end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/mix.meta"
sed 's/^\([0-9]*\) \([a-z]*\) BURST /\1\t\2\t/; s/ /\t/g' "$OUT/bursts.txt" |
    awk -F'\t' 'BEGIN { print "round\tengine\twindow\tstart_ms\twall_ms\twriter_ms\tbackend_ms" }
        { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
          print $1 "\t" $2 "\t" v["name"] "\t" v["start_ms"] "\t" v["wall_ms"] "\t" v["writer_ms"] "\t" v["pgtop_ms"] }' >"$OUT/bursts.tsv"
rm -f "$OUT/bursts.txt"

# ------------------------------------------------------------ summary
median_awk='function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    if (n == 0) return "-"
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function range(s,   a, n, i, lo, hi) {
    n = split(s, a, " "); lo = a[1] + 0; hi = a[1] + 0
    for (i = 2; i <= n; i++) { if (a[i] + 0 < lo) lo = a[i] + 0; if (a[i] + 0 > hi) hi = a[i] + 0 }
    return sprintf("%.1f-%.1f", lo, hi)
}'
{
    echo "# The mix (issue 36) and the vote on SQLite and PostgreSQL"
    echo
    sed 's/^/    /' "$OUT/mix.meta"
    if [ "$DO_MIX" = 1 ]; then
        echo
        echo "## One mix, change and withdrawal on a poll of about $BALLOTS ballots"
        echo
        echo "Medians over the rounds (range in brackets). busy: the writer's busy span"
        echo "for it (ms); CPU ms of the writer thread and of PostgreSQL's busiest"
        echo "process (the writer's backend) in that span; polld and cluster: CPU ms of"
        echo "the whole process(es) over the window (the vote's GET and POST included)."
        echo "Transaction: PostgreSQL, from its BEGIN to its COMMIT in the server's log;"
        echo "SQLite, from the burst's start until the WAL reached its peak (its last"
        echo "frame written; the commit's sync and the WAL's truncation follow)."
        echo "Bytes: SQLite, what the writer wrote (WAL, checkpoint, -shm) and the WAL's"
        echo "peak growth; PostgreSQL, the WAL's growth. Raw rows: mix.tsv."
        echo
        echo "| engine | event | ballots | busy ms | transaction ms | writer CPU ms | backend CPU ms | polld CPU ms | cluster CPU ms | request ms | writer wrote KB | WAL KB |"
        echo "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        awk -F'\t' "$median_awk"'
            NR > 1 { k = $2 "|" $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                b[k] = b[k] " " $4; w[k] = w[k] " " $5; if ($6 != "-" && $6 >= 0) tx[k] = tx[k] " " $6
                x[k] = x[k] " " $7; y[k] = y[k] " " $8; p[k] = p[k] " " $9; g[k] = g[k] " " $10
                if ($11 != "-") r[k] = r[k] " " $11; c[k] = c[k] " " $12 / 1024; l[k] = l[k] " " $13 / 1024 }
            END { for (i = 1; i <= nk; i++) { k = keys[i]; split(k, e, "|")
                printf "| %s | %s | %s | %.1f (%s) | %s | %.1f (%s) | %.1f | %s | %.1f | %s | %s | %.0f (%s) |\n", e[1], e[2], median(b[k]),
                    median(w[k]), range(w[k]), (k in tx ? sprintf("%.1f (%s)", median(tx[k]), range(tx[k])) : "-"),
                    median(x[k]), range(x[k]), median(y[k]), median(p[k]), median(g[k]),
                    (k in r ? sprintf("%.1f (%s)", median(r[k]), range(r[k])) : "-"),
                    (e[1] == "pg" ? "-" : sprintf("%.0f", median(c[k]))), median(l[k]), range(l[k]) } }' "$MIXTSV" |
            sort -t'|' -k2,2 -s
        echo
        echo "## A poll receiving a steady trickle of votes"
        echo
        echo "One connection votes (GET + POST) at the rate given on the full poll."
        echo "Mixes: bursts of the writer (and its backend) with at least a quarter"
        echo "of the isolated mix's CPU. Shares: CPU seconds per second of wall time."
        echo "Raw rows: trickle.tsv; every burst: bursts.tsv."
        echo
        echo "| engine | votes/s | mixes (per run) | one mix every s | mixes' busy share of the time | writer CPU share | of it in mixes | backend share | of it in mixes | POST p50 ms | POST p99 ms | POST max ms |"
        echo "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        awk -F'\t' "$median_awk"'
            NR > 1 { k = $2 "|" $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                m[k] = m[k] (m[k] == "" ? "" : ", ") $7; if ($8 != "-") e[k] = e[k] " " $8
                ws[k] = ws[k] " " $9; mw[k] = mw[k] " " $10; bs[k] = bs[k] " " $11; mb[k] = mb[k] " " $12
                p50[k] = p50[k] " " $15; p99[k] = p99[k] " " $16; mx[k] = mx[k] " " $17; if ($19 != "") sh[k] = sh[k] " " $19 }
            END { for (i = 1; i <= nk; i++) { k = keys[i]; split(k, f, "|")
                printf "| %s | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f |\n", f[1], f[2], m[k], median(e[k]),
                    (k in sh ? sprintf("%.3f", median(sh[k])) : "-"), median(ws[k]), median(mw[k]), median(bs[k]), median(mb[k]),
                    median(p50[k]), median(p99[k]), median(mx[k]) } }' "$TRTSV" |
            sort -t'|' -k2,2 -k3,3n -s
    fi
    if [ "$DO_VOTES" = 1 ]; then
        echo
        echo "## The vote on both engines (GET + POST, 8 polls)"
        echo
        echo "Medians over the rounds; CPU µs per vote from /proc (polld, and every"
        echo "process of the cluster); PG / SQLite: the median of the per-round ratios"
        echo "of the totals (range). \"2 s after\": the CPU of the 2 s after the run (the"
        echo "mix of its ballots), per vote of the run. Raw rows: votes.tsv."
        echo
        echo "| connections | engine | votes/s | POST p50 ms | POST p99 ms | vote p50 ms | vote p99 ms | polld µs | cluster µs | total µs | PG / SQLite | 2 s after: polld + cluster µs |"
        echo "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        awk -F'\t' "$median_awk"'
            NR > 1 { k = $3 "|" $2; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
                r[k] = r[k] " " $5; a[k] = a[k] " " $6; b[k] = b[k] " " $7; c[k] = c[k] " " $8; d[k] = d[k] " " $9
                p[k] = p[k] " " $10; g[k] = g[k] " " $11; t[k] = t[k] " " $12; af[k] = af[k] " " ($13 + $14)
                tot[$1, $2, $3] = $12; rounds[$1] = 1 }
            END { for (i = 1; i <= nk; i++) { k = keys[i]; split(k, f, "|"); rr = ""
                if (f[2] == "pg") for (q = 1; q in rounds; q++) if (tot[q, "sqlite", f[1]] > 0) rr = rr " " tot[q, "pg", f[1]] / tot[q, "sqlite", f[1]]
                printf "| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %s | %.1f |\n", f[1], f[2], median(r[k]),
                    median(a[k]), median(b[k]), median(c[k]), median(d[k]), median(p[k]), median(g[k]), median(t[k]),
                    (rr == "" ? "-" : sprintf("%.2f (%s)", median(rr), range(rr))), median(af[k]) } }' "$VTSV" |
            sort -t'|' -k2,2n -k3,3r -s
    fi
} >"$OUT/summary.md"
say "written: $OUT/summary.md (raw: mix.tsv, trickle.tsv, votes.tsv, bursts.tsv, mix.log, mix.meta)"
