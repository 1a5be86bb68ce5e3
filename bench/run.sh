#!/usr/bin/env bash
# anonpoll benchmark suite. One command:
#
#   bench/run.sh            # full run, ~10-15 min: 6 s per scenario, 1k/100k/1M responses
#   bench/run.sh --quick    # ~3-4 min: 3 s per scenario, 1k and 100k responses only
#
# Options: --seconds N (per scenario), --datasets "1k 100k 1m", --connections N,
#          --no-build (reuse the binaries built last time),
#          --polld PATH (measure another polld build, e.g. an older commit's,
#          against the same baselines), --out DIR (write the report there
#          instead of bench/results).
# Environment: BENCH_TARGET_DIR (default /tmp/bench-target), BENCH_WORK (scratch
#          folder, default a new /tmp/anonpoll-bench.*; removed at the end).
#
# Loopback only; every load run is bounded in time. Writes bench/results/<date>.md,
# bench/results/latest.md, bench/results/latest.svg and the raw TSV beside them.
# Needs: wrk, caddy (Debian packages), cargo. Method: docs/PERFORMANCE.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${BENCH_TARGET_DIR:-/tmp/bench-target}
SECS=6
WARM=1
CONNS=64
WRK_THREADS=2
DATASETS="1k 100k 1m"
BUILD=1
QUICK=0
OUT=
POLLD_BIN=
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1; SECS=3; DATASETS="1k 100k" ;;
        --seconds) SECS=$2; shift ;;
        --datasets) DATASETS=$2; shift ;;
        --connections) CONNS=$2; shift ;;
        --no-build) BUILD=0 ;;
        --polld) POLLD_BIN=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

for tool in wrk caddy cargo; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed (apt-get install wrk caddy)" >&2; exit 2; }
done

WORK=${BENCH_WORK:-$(mktemp -d /tmp/anonpoll-bench.XXXXXX)}
mkdir -p "$WORK"
RESULTS="$WORK/results.tsv"
META="$WORK/meta.txt"
LOG="$WORK/run.log"
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$WORK"
}
trap cleanup EXIT

say() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }

# ---------------------------------------------------------------- build
if [ "$BUILD" = 1 ]; then
    say "building polld (release) and the bench tools into $TARGET"
    (cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --bin polld)
    CARGO_TARGET_DIR="$TARGET" cargo build --release --quiet --manifest-path "$ROOT/bench/tools/Cargo.toml"
fi
BIN="$TARGET/release"
POLLD_BIN=${POLLD_BIN:-$BIN/polld}
[ -x "$POLLD_BIN" ] || { echo "run.sh: $POLLD_BIN is not an executable" >&2; exit 2; }
for b in hello-hyper hello-tiny sqlite-raw anonbench httpload report; do
    [ -x "$BIN/$b" ] || { echo "run.sh: $BIN/$b is missing (run without --no-build)" >&2; exit 2; }
done

"$POLLD_BIN" --help 2>/dev/null | grep -- --vote-limit >/dev/null && VOTE_LIMIT_FLAG=1 || VOTE_LIMIT_FLAG=

# ---------------------------------------------------------------- helpers
HZ=$(getconf CLK_TCK)
cpu_ticks() { # utime+stime of the given pids, in clock ticks
    local t=0 p
    for p in "$@"; do t=$((t + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}'))); done
    echo "$t"
}
hwm_kb() { # peak RSS (VmHWM) summed over the given pids
    local t=0 p
    for p in "$@"; do t=$((t + $(awk '/^VmHWM/{print $2}' "/proc/$p/status"))); done
    echo "$t"
}
field() { # field NAME LINE: the value of NAME=value in LINE
    sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"
}
row() { # section scenario dataset rps p50 p99 cpu rss dbb baseline note
    local IFS=$'\t'
    echo "$*" >>"$RESULTS"
}
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}
wait_port() { # wait until ADDR accepts connections (10 s at most)
    local host=${1%:*} port=${1##*:} i
    for i in $(seq 100); do
        (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "run.sh: nothing listens on $1" >&2
    return 1
}
SERVER_PID=
SERVER_ADDR=
start_listening() { # start_listening LOGFILE CMD...: runs CMD, reads "listening on ADDR" from its output
    local logf=$1 i
    shift
    # Emptied first: the shell that starts the server truncates the log only
    # once it runs, and until then sed would read the address the previous
    # server of the same log printed (seen: polld's second start in a run
    # read the first one's port, and nothing listened there).
    : >"$logf"
    "$@" >"$logf" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    for i in $(seq 100); do
        SERVER_ADDR=$(sed -n 's/.*listening on \(http:\/\/\)\{0,1\}\([0-9.:]*\).*/\2/p' "$logf" | head -1)
        [ -n "$SERVER_ADDR" ] && { wait_port "$SERVER_ADDR"; return 0; }
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "run.sh: server did not start: $*" >&2
    cat "$logf" >&2
    return 1
}
stop() { # stop PID: SIGTERM, then wait
    kill -TERM "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
# Bench-only limits: lift the creation limit and, where polld has one, the
# per-client vote throttle (every bench request comes from 127.0.0.1).
# Loopback is trusted as the shipped unit does, so the bench's many connections
# from 127.0.0.1 are a proxy's, and its rotating X-Forwarded-For is believed.
POLLD_FLAGS=(--create-limit 1000000000 --trusted-proxy 127.0.0.1/8)
[ -n "$VOTE_LIMIT_FLAG" ] && POLLD_FLAGS+=(--vote-limit 4000000000)
"$POLLD_BIN" --help 2>/dev/null | grep -- --network-votes-per-day >/dev/null && POLLD_FLAGS+=(--network-votes-per-day 0)
start_polld() { # start_polld DB
    start_listening "$WORK/polld.log" "$POLLD_BIN" --db "$1" --listen 127.0.0.1:0 "${POLLD_FLAGS[@]}"
    POLLD_PID=$SERVER_PID
    POLLD_ADDR=$SERVER_ADDR
}
db_bytes() { field bytes "$("$BIN/anonbench" dbsize "$1")"; }

# measure_wrk SECTION SCENARIO DATASET BASELINE URL PIDS [DB [BYTES_MODE]]
#   Environment for the Lua script (BENCH_PATH, BENCH_IDS, ...) must be exported.
#   BYTES_MODE: "growth" = DB bytes added per request; "stored:N" = DB bytes / N stored responses.
measure_wrk() {
    local section=$1 scen=$2 ds=$3 baseline=$4 url=$5 pids=$6 db=${7:-} bmode=${8:-}
    wrk -t"$WRK_THREADS" -c"$CONNS" -d"${WARM}s" --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "$url" >/dev/null 2>&1 || true
    local b0=0 c0 c1 out
    [ "$bmode" = growth ] && b0=$(db_bytes "$db")
    local first=${pids%% *} f0
    f0=$(cpu_ticks "$first")
    # shellcheck disable=SC2086
    c0=$(cpu_ticks $pids)
    out=$(wrk -t"$WRK_THREADS" -c"$CONNS" -d"${SECS}s" --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "$url" 2>&1 | grep '^RESULT' || true)
    # shellcheck disable=SC2086
    c1=$(cpu_ticks $pids)
    MW_FIRST_TICKS=$(($(cpu_ticks "$first") - f0))
    MW_N=$(field requests "$out")
    report_line "$section" "$scen" "$ds" "$baseline" "$out" "$c0" "$c1" "$pids" "$db" "$bmode" "$b0"
}

# report_line SECTION SCENARIO DATASET BASELINE RESULT_LINE CPU0 CPU1 PIDS DB BYTES_MODE BYTES0 [OPS_FIELD]
report_line() {
    local section=$1 scen=$2 ds=$3 baseline=$4 out=$5 c0=$6 c1=$7 pids=$8 db=$9 bmode=${10} b0=${11} opsf=${12:-requests}
    if [ -z "$out" ]; then
        say "$scen ($ds): no result"
        row skipped "$scen" "$ds" - - - - - - - "the load generator gave no result (see run.log)"
        return
    fi
    local rps p50 p99 n errs cpu rss dbb note=-
    rps=$(field rps "$out"); p50=$(field p50_ms "$out"); p99=$(field p99_ms "$out")
    n=$(field "$opsf" "$out"); errs=$(field errors "$out")
    cpu=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$HZ" 'BEGIN { if (n > 0) printf "%.1f", (b - a) * 1e6 / hz / n; else print "-" }')
    # shellcheck disable=SC2086
    rss=$(hwm_kb $pids)
    dbb=-
    case "$bmode" in
        growth) dbb=$(awk -v a="$b0" -v b="$(db_bytes "$db")" -v n="$n" 'BEGIN { if (n > 0) printf "%.0f", (b - a) / n; else print "-" }') ;;
        stored:*) dbb=$(awk -v a="$(db_bytes "$db")" -v n="${bmode#stored:}" 'BEGIN { if (n > 0) printf "%.0f", a / n; else print "-" }') ;;
    esac
    [ "${errs:-0}" != 0 ] && note="$errs errors of $n"
    say "$scen ($ds): $rps/s p50 $p50 ms p99 $p99 ms, $cpu µs CPU/req, $((rss / 1024)) MiB peak, note: $note"
    row "$section" "$scen" "$ds" "$rps" "$p50" "$p99" "$cpu" "$rss" "$dbb" "$baseline" "$note"
}

# ---------------------------------------------------------------- meta
printf 'section\tscenario\tdataset\trps\tp50_ms\tp99_ms\tcpu_us\trss_kb\tdb_bytes\tbaseline\tnote\n' >"$RESULTS"
{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (work tree modified)')"
    echo "cpu=$(nproc) × $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
    echo "memory=$(free -m | awk '/^Mem:/{print $2}') MiB"
    echo "kernel=$(uname -r)"
    echo "load generator=wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}') -t$WRK_THREADS -c$CONNS, ${SECS} s per scenario after ${WARM} s warm-up; httpload (bench/tools) -c$CONNS for votes"
    echo "caddy=$(caddy version | awk '{print $1}')"
    echo "load average at start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$META"

# ---------------------------------------------------------------- baselines
export BENCH_PATH=/ BENCH_IDS= BENCH_METHOD=GET
unset BENCH_BODY_FILE
say "baseline: hello hyper"
start_listening "$WORK/hyper.log" "$BIN/hello-hyper" 127.0.0.1:0
measure_wrk baseline "hello hyper" - - "http://$SERVER_ADDR/" "$SERVER_PID"
stop "$SERVER_PID"

say "baseline: hello tiny_http"
start_listening "$WORK/tiny.log" "$BIN/hello-tiny" 127.0.0.1:0
measure_wrk baseline "hello tiny_http" - - "http://$SERVER_ADDR/" "$SERVER_PID"
stop "$SERVER_PID"

say "baseline: caddy respond"
export XDG_DATA_HOME="$WORK/caddy-data" XDG_CONFIG_HOME="$WORK/caddy-config"
CPORT=$(free_port)
printf '{\n\tadmin off\n}\nhttp://127.0.0.1:%s {\n\trespond "hello" 200\n}\n' "$CPORT" >"$WORK/Caddyfile.respond"
caddy run --config "$WORK/Caddyfile.respond" --adapter caddyfile >"$WORK/caddy-respond.log" 2>&1 &
CADDY_PID=$!
PIDS+=("$CADDY_PID")
wait_port "127.0.0.1:$CPORT"
measure_wrk baseline "caddy respond" - - "http://127.0.0.1:$CPORT/" "$CADDY_PID"
stop "$CADDY_PID"

for per_tx in 1 100; do
    say "baseline: raw SQLite, $per_tx insert(s) per transaction"
    out=$("$BIN/sqlite-raw" "$WORK/raw.sqlite3" "$SECS" "$per_tx")
    row baseline "sqlite $per_tx/tx" - "$(field inserts_per_s "$out")" - - "$(field cpu_us_per_insert "$out")" - - - "WAL, synchronous=FULL, one writer; $(field tx_per_s "$out") commits/s"
    say "sqlite $per_tx/tx: $out"
done

# ---------------------------------------------------------------- datasets
HAVE_WEB=
dataset_label() {
    case "$1" in
        1k) echo "1k resp" ;;
        100k) echo "100k resp" ;;
        1m) echo "1M resp" ;;
    esac
}
dataset_size() { # responses filler-polls
    case "$1" in
        1k) echo "1000 100" ;;
        100k) echo "100000 10000" ;;
        1m) echo "1000000 100000" ;;
        *) echo "run.sh: unknown dataset $1" >&2; exit 2 ;;
    esac
}

FIRST_DS=$(awk '{print $1}' <<<"$DATASETS")
for ds in $DATASETS; do
    read -r NRESP NPOLLS < <(dataset_size "$ds")
    DB="$WORK/$ds.sqlite3"
    IDS="$WORK/$ds.ids"
    label=$(dataset_label "$ds")
    say "populating $label ($NRESP responses, $NPOLLS + 8 polls)"
    pop=$("$BIN/anonbench" populate "$DB" "$NRESP" "$NPOLLS" 8 "$IDS")
    say "$pop"
    label="$label, $((NPOLLS + 8)) polls"
    stored=$((NRESP + 1))

    # Is the web interface there (share page with a vote form)?
    start_polld "$DB"
    if det=$("$BIN/httpload" detect "$POLLD_ADDR" "$IDS"); then
        HAVE_WEB=1
        say "$det"
    else
        HAVE_WEB=
        say "no web share page yet ($det): page and vote scenarios are skipped"
    fi
    stop "$POLLD_PID"

    export BENCH_IDS="$IDS" BENCH_METHOD=GET
    for spec in "poll JSON|/api/polls/{id}" "results JSON|/api/polls/{id}/results" \
                "share page|/p/{id}" "results page|/p/{id}/results"; do
        scen=${spec%%|*}
        export BENCH_PATH=${spec#*|}
        if [ -z "$HAVE_WEB" ] && [ "${BENCH_PATH#/p/}" != "$BENCH_PATH" ]; then
            [ "$ds" = "$FIRST_DS" ] && row skipped "$scen" all - - - - - - - "the web pages (src/web) are not in this build: GET /p/{id} is 404"
            continue
        fi
        say "$scen ($label)"
        start_polld "$DB"
        measure_wrk scenario "$scen" "$label" "hello hyper,hello tiny_http" "http://$POLLD_ADDR" "$POLLD_PID" "$DB" "stored:$stored"
        stop "$POLLD_PID"
    done

    if [ "$ds" = "$FIRST_DS" ]; then
        say "poll JSON through Caddy (the repository's Caddyfile) ($label)"
        start_polld "$DB"
        CPORT=$(free_port)
        ANONPOLL_DOMAIN="http://127.0.0.1:$CPORT" ANONPOLL_UPSTREAM="$POLLD_ADDR" ANONPOLL_CADDY_ADMIN=off \
            caddy run --config "$ROOT/Caddyfile" --adapter caddyfile >"$WORK/caddy-proxy.log" 2>&1 &
        CADDY_PID=$!
        PIDS+=("$CADDY_PID")
        wait_port "127.0.0.1:$CPORT"
        measure_wrk scenario "poll JSON via Caddy" "$label" "caddy respond,hello hyper" "http://127.0.0.1:$CPORT" "$CADDY_PID $POLLD_PID" "$DB" "stored:$stored"
        caddy_us=$(awk -v t="$MW_FIRST_TICKS" -v hz="$HZ" -v n="$MW_N" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n }')
        sed -i '$ s/\t[^\t]*$/\tCPU and RSS are Caddy + polld; Caddy alone: '"$caddy_us"' µs\/req/' "$RESULTS"
        stop "$CADDY_PID"
        stop "$POLLD_PID"
    fi

    # Writes come after the reads of this dataset.
    if [ -n "$HAVE_WEB" ]; then
        say "vote (HTTP: GET share page + POST form) ($label)"
        start_polld "$DB"
        b0=$(db_bytes "$DB")
        "$BIN/httpload" vote "$POLLD_ADDR" "$CONNS" "$WARM" "$IDS" >/dev/null 2>&1 || true
        b0=$(db_bytes "$DB")
        r0=$(field responses "$("$BIN/anonbench" dbsize "$DB")")
        c0=$(cpu_ticks "$POLLD_PID")
        out=$("$BIN/httpload" vote "$POLLD_ADDR" "$CONNS" "$SECS" "$IDS" 2>>"$LOG" | grep '^RESULT' || true)
        c1=$(cpu_ticks "$POLLD_PID")
        report_line scenario "vote (HTTP)" "$label" "sqlite 100/tx" "$out" "$c0" "$c1" "$POLLD_PID" "$DB" growth "$b0" ops
        stop "$POLLD_PID"
        # Cross-check: every acknowledged vote is a stored response.
        r1=$(field responses "$("$BIN/anonbench" dbsize "$DB")")
        say "vote check: $((r1 - r0)) responses stored for $(field ops "$out") votes acknowledged"
        [ "$((r1 - r0))" = "$(field ops "$out")" ] || sed -i '$ s/\t[^\t]*$/\tonly '"$((r1 - r0))"' of the acknowledged votes were stored/' "$RESULTS"

        # The POST alone: forms are fetched first (not measured), then posted;
        # httpload reads polld's CPU around the POSTs only.
        say "vote POST only (forms fetched first, not measured) ($label)"
        start_polld "$DB"
        b0=$(db_bytes "$DB")
        r0=$(field responses "$("$BIN/anonbench" dbsize "$DB")")
        out=$("$BIN/httpload" post "$POLLD_ADDR" "$CONNS" "$SECS" "$IDS" "$POLLD_PID" "$HZ" 2>>"$LOG" | grep '^RESULT' || true)
        rss=$(hwm_kb "$POLLD_PID")
        stop "$POLLD_PID"
        r1=$(field responses "$("$BIN/anonbench" dbsize "$DB")")
        n=$(field ops "$out")
        dbb=$(awk -v a="$b0" -v b="$(db_bytes "$DB")" -v n="$n" 'BEGIN { if (n > 0) printf "%.0f", (b - a) / n; else print "-" }')
        note="polld CPU around the POSTs only; $(field errors "$out") errors; $((r1 - r0)) responses stored for $n acknowledged"
        say "vote POST only ($label): $out"
        row scenario "vote POST only (HTTP)" "$label" "$(field rps "$out")" "$(field p50_ms "$out")" "$(field p99_ms "$out")" \
            "$(field polld_cpu_us_per_op "$out")" "$rss" "$dbb" "sqlite 100/tx" "$note"
    elif [ "$ds" = "$FIRST_DS" ]; then
        row skipped "vote (HTTP)" all - - - - - - - "needs the share page's vote form (src/web); bench/tools httpload is ready for it"
    fi

    say "vote through the library, no HTTP (Store::cast, $CONNS threads) ($label)"
    b0=$(db_bytes "$DB")
    out=$("$BIN/anonbench" cast "$DB" "$SECS" "$CONNS" "$IDS" | grep '^RESULT' || true)
    n=$(field requests "$out")
    dbb=$(awk -v a="$b0" -v b="$(db_bytes "$DB")" -v n="$n" 'BEGIN { if (n > 0) printf "%.0f", (b - a) / n; else print "-" }')
    row scenario "vote (Store::cast)" "$label" "$(field rps "$out")" "$(field p50_ms "$out")" "$(field p99_ms "$out")" \
        "$(field cpu_us_per_op "$out")" "$(field rss_kb "$out")" "$dbb" "sqlite 100/tx" "library only, no HTTP; CPU of the whole process (64 caller threads); the writer thread alone: $(field writer_cpu_us_per_op "$out") µs/vote"
    say "Store::cast: $out"

    # The other question types, on fresh polls of 3 such questions in the
    # same database: what their counters cost beside a single choice's.
    for kind in multiple ranked scale; do
        say "vote through the library, $kind questions (Store::cast) ($label)"
        out=$("$BIN/anonbench" cast "$DB" "$SECS" "$CONNS" "$IDS" "$kind" | grep '^RESULT' || true)
        row scenario "vote (Store::cast, $kind)" "$label" "$(field rps "$out")" "$(field p50_ms "$out")" "$(field p99_ms "$out")" \
            "$(field cpu_us_per_op "$out")" "$(field rss_kb "$out")" "-" "sqlite 100/tx" "3 $kind questions (6 options; scale 0–10); the writer thread alone: $(field writer_cpu_us_per_op "$out") µs/vote"
        say "Store::cast $kind: $out"
    done

    if [ "$ds" = "$FIRST_DS" ]; then
        say "create poll ($label)"
        export BENCH_PATH=/api/polls BENCH_METHOD=POST BENCH_BODY_FILE="$ROOT/bench/lua/create.json" BENCH_XFF=1
        start_polld "$DB"
        measure_wrk scenario "create poll" "$label" "sqlite 100/tx" "http://$POLLD_ADDR" "$POLLD_PID" "$DB" growth
        stop "$POLLD_PID"
        unset BENCH_BODY_FILE BENCH_XFF
        export BENCH_METHOD=GET

        if [ -n "$HAVE_WEB" ]; then
            say "mixed: 90 % reads, 9 % votes, 1 % creates ($label)"
            start_polld "$DB"
            c0=$(cpu_ticks "$POLLD_PID")
            out=$("$BIN/httpload" mixed "$POLLD_ADDR" "$CONNS" "$SECS" "$IDS" 2>>"$LOG" | grep '^RESULT' || true)
            c1=$(cpu_ticks "$POLLD_PID")
            report_line scenario "mixed 90/9/1" "$label" "hello hyper" "$out" "$c0" "$c1" "$POLLD_PID" "$DB" - 0 ops
            stop "$POLLD_PID"
        else
            row skipped "mixed 90/9/1" all - - - - - - - "needs votes, which only the share page's form accepts (src/web); not faked through the library"
        fi
    fi
    rm -f "$DB" "$DB-wal" "$DB-shm"
done

# Drift check: the first baseline again, at the end of the run.
export BENCH_PATH=/ BENCH_IDS=
say "baseline again (drift check): hello hyper"
start_listening "$WORK/hyper.log" "$BIN/hello-hyper" 127.0.0.1:0
measure_wrk baseline "hello hyper (end of run)" - - "http://$SERVER_ADDR/" "$SERVER_PID"
stop "$SERVER_PID"

echo "load average at end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$META"
[ "$QUICK" = 1 ] && echo "mode=--quick" >>"$META"

# ---------------------------------------------------------------- report
OUT=${OUT:-$ROOT/bench/results}
mkdir -p "$OUT"
STAMP=$(date -u +%Y-%m-%d)
"$BIN/report" "$RESULTS" "$META" "$OUT/$STAMP.md" "$OUT/latest.svg"
cp "$OUT/$STAMP.md" "$OUT/latest.md"
cp "$RESULTS" "$OUT/latest.tsv"
say "written: $OUT/$STAMP.md, latest.md, latest.svg, latest.tsv"
