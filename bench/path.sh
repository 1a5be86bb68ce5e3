#!/usr/bin/env bash
# The request path's cost (issue 38): CPU time of the server's process per
# request, from /proc, against hello-hyper (the same hyper and tokio,
# answering inline) in the same run, in alternating rounds:
#
#   bench/path.sh [--rounds 5] [--seconds 5] [--front LABEL] [--out DIR]
#                 LABEL=POLLD ...
#
# Each round runs, for hello-hyper and each polld given (the order turns
# every round), a fresh server (polld on a new SQLite database in /dev/shm,
# one poll of 3 single questions of 4 options, `duplicateCheck: none`,
# `--vote-limit 1000000`) and these scenarios, each for --seconds after a
# second unmeasured:
#   page-1    the share page, one connection (keep-alive), one request at a time (wrk -c1)
#   json-1    the poll's JSON, the same
#   page-32   the share page, 32 connections (wrk -t2 -c32)
#   json-32   the poll's JSON, the same
#   vote-1    a voter: GET the share page, POST its form (httpload vote, one
#             connection); per request, so a vote costs two
# (hello-hyper answers every path alike, so it runs the first four.) The
# figure is the server process's CPU (utime + stime of every thread, from
# /proc/PID/stat) over the requests answered; beside it requests/s.
# With --front LABEL, Caddy's static `respond` runs too (`static`: page-1
# and page-32 against it, the baseline whose requests/s the share page
# should match), and that polld also runs behind Caddy with the shipped
# Caddyfile, once over loopback TCP (polld --trusted-proxy 127.0.0.1) and
# once over its Unix socket (polld --listen unix:PATH): `front-tcp` and
# `front-unix`, the share page at 32 connections, CPU of Caddy and polld
# together per request.
#
# Writes DIR/path.tsv (one row per server, scenario and round) and
# DIR/path.md (medians; each polld's over hello-hyper's, and over the first
# polld's). Needs wrk, curl, and bench/tools built into BENCH_TARGET_DIR
# (default /tmp/bench-target: hello-hyper, httpload); caddy for --front.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${BENCH_TARGET_DIR:-/tmp/bench-target}
ROUNDS=5
SECS=5
FRONT=
OUT=
BUILDS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS=$2; shift ;;
        --seconds) SECS=$2; shift ;;
        --front) FRONT=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
        *=*) BUILDS+=("$1") ;;
        *) echo "path.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
[ ${#BUILDS[@]} -gt 0 ] || { echo "path.sh: name at least one LABEL=POLLD" >&2; exit 2; }
for b in "${BUILDS[@]}"; do
    [ -x "${b#*=}" ] || { echo "path.sh: ${b#*=} is missing" >&2; exit 2; }
done
HYPER=$TARGET/release/hello-hyper
HTTPLOAD=$TARGET/release/httpload
for t in "$HYPER" "$HTTPLOAD"; do
    [ -x "$t" ] || { echo "path.sh: $t is missing (CARGO_TARGET_DIR=$TARGET cargo build --release --manifest-path bench/tools/Cargo.toml)" >&2; exit 2; }
done
for tool in wrk curl ${FRONT:+caddy}; do
    command -v "$tool" >/dev/null || { echo "path.sh: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
OUT=${OUT:-$ROOT/bench/results/path}
mkdir -p "$OUT"
HZ=$(getconf CLK_TCK)

PIDS=()
WORK=$(mktemp -d /dev/shm/anonpoll-path.XXXXXX)
cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    rm -rf "$WORK"
    return 0
}
trap cleanup EXIT
say() { printf '[path %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# utime + stime of a process (every thread), in ticks.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

POLL_JSON='{"title":"Path benchmark poll","lang":"en","expiryDays":30,"resultsPublic":true,"duplicateCheck":"none","questions":['
for q in 1 2 3; do
    [ "$q" = 1 ] || POLL_JSON+=','
    POLL_JSON+="{\"type\":\"single\",\"label\":\"Question $q of the benchmark poll?\",\"options\":[\"Option 1\",\"Option 2\",\"Option 3\",\"Option 4\"]}"
done
POLL_JSON+=']}'

# Waits for "listening on http://ADDR" in log $1; prints ADDR.
listening() {
    local addr=
    for _ in $(seq 100); do
        addr=$(sed -n 's#.*listening on http://\([^ ]*\).*#\1#p' "$1" | head -1)
        [ -n "$addr" ] && curl -s -o /dev/null "http://$addr/" && { echo "$addr"; return 0; }
        sleep 0.1
    done
    echo "path.sh: no address in $1: $(tail -c 300 "$1")" >&2
    return 1
}

# Starts polld $1 with extra arguments; sets PID; its folder is $WORK/polld.
start_polld() {
    local polld=$1
    shift
    rm -rf "$WORK/polld"
    mkdir -p "$WORK/polld"
    # One voter votes again and again: the day's limit of a network poll
    # is lifted where the build has it.
    local day=()
    "$polld" --help 2>/dev/null | grep -q -- --network-votes-per-day && day=(--network-votes-per-day 0)
    "$polld" --db "$WORK/polld/a.sqlite3" --vote-limit 1000000 "${day[@]}" "$@" >"$WORK/polld/log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
}

stop() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

create_poll() {
    curl -s -H 'Content-Type: application/json' --data "$POLL_JSON" "http://$1/api/polls" |
        grep -o '"id" *: *"[^"]*"' | head -1 | sed 's/.*: *"\([^"]*\)"/\1/'
}

# Runs scenario $3 against $2 (URL base) for server $1 (label) whose
# processes are $PIDS_MEASURED; appends a row.
measure() {
    local label=$1 base=$2 scenario=$3 path=$4 conns=$5 threads out requests cpu0 cpu1 t0 t1 p
    threads=$((conns > 1 ? 2 : 1))
    if [ "$scenario" = vote-1 ]; then
        "$HTTPLOAD" vote "${base#http://}" 1 1 "$WORK/ids" >/dev/null 2>&1 || true
    else
        wrk -t"$threads" -c"$conns" -d1s "$base$path" >/dev/null 2>&1 || true
    fi
    cpu0=0
    for p in $PIDS_MEASURED; do cpu0=$((cpu0 + $(ticks "$p"))); done
    t0=$(date +%s.%N)
    if [ "$scenario" = vote-1 ]; then
        out=$("$HTTPLOAD" vote "${base#http://}" 1 "$SECS" "$WORK/ids" | grep '^RESULT' || true)
        # Its HTTP requests: two a vote.
        requests=$(sed -n 's/.*\brequests=\([0-9]*\).*/\1/p' <<<"$out")
    else
        out=$(wrk -t"$threads" -c"$conns" -d"${SECS}s" "$base$path" 2>&1 || true)
        requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' <<<"$out")
        if grep -q 'Non-2xx' <<<"$out"; then say "$label $scenario: $(grep 'Non-2xx' <<<"$out")"; fi
    fi
    t1=$(date +%s.%N)
    cpu1=0
    for p in $PIDS_MEASURED; do cpu1=$((cpu1 + $(ticks "$p"))); done
    if [ -z "$requests" ] || [ "$requests" = 0 ]; then
        say "$label $scenario: no requests ($out)"
        return 0
    fi
    local row
    row=$(awk -v l="$label" -v s="$scenario" -v r="$ROUND" -v n="$requests" -v c=$((cpu1 - cpu0)) -v hz="$HZ" -v t0="$t0" -v t1="$t1" \
        'BEGIN { printf "%s\t%s\t%s\t%d\t%.0f\t%.1f\n", r, l, s, n, n / (t1 - t0), c * 1e6 / hz / n }')
    printf '%s\n' "$row" >>"$OUT/path.tsv"
    say "$(tr '\t' ' ' <<<"$row")"
}

run_hyper() {
    "$HYPER" 127.0.0.1:0 >"$WORK/hyper.log" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    local addr=
    for _ in $(seq 100); do
        addr=$(grep -o '127.0.0.1:[0-9]*' "$WORK/hyper.log" | head -1 || true)
        [ -n "$addr" ] && break
        sleep 0.1
    done
    PIDS_MEASURED=$pid
    measure hyper "http://$addr" page-1 / 1
    measure hyper "http://$addr" json-1 / 1
    measure hyper "http://$addr" page-32 / 32
    measure hyper "http://$addr" json-32 / 32
    stop "$pid"
}

# Caddy answering a constant (`respond "hello"`): the static baseline.
run_static() {
    local port pid
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    printf '{\n\tadmin off\n}\nhttp://127.0.0.1:%s {\n\trespond "hello" 200\n}\n' "$port" >"$WORK/Caddyfile.respond"
    mkdir -p "$WORK/caddy-home"
    HOME="$WORK/caddy-home" XDG_DATA_HOME="$WORK/caddy-home" XDG_CONFIG_HOME="$WORK/caddy-home" \
        caddy run --config "$WORK/Caddyfile.respond" --adapter caddyfile >"$WORK/static.log" 2>&1 &
    pid=$!
    PIDS+=("$pid")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
    PIDS_MEASURED=$pid
    measure static "http://127.0.0.1:$port" page-1 / 1
    measure static "http://127.0.0.1:$port" page-32 / 32
    stop "$pid"
}

run_polld() {
    local label=${1%%=*} polld=${1#*=} addr id
    start_polld "$polld" --listen 127.0.0.1:0
    addr=$(listening "$WORK/polld/log")
    id=$(create_poll "$addr")
    echo "$id" >"$WORK/ids"
    PIDS_MEASURED=$PID
    measure "$label" "http://$addr" page-1 "/p/$id" 1
    measure "$label" "http://$addr" json-1 "/api/polls/$id" 1
    measure "$label" "http://$addr" page-32 "/p/$id" 32
    measure "$label" "http://$addr" json-32 "/api/polls/$id" 32
    measure "$label" "http://$addr" vote-1 "" 1
    stop "$PID"
}

# polld behind Caddy (the shipped Caddyfile), over TCP ($2 = tcp) or its socket.
run_front() {
    local label=${1%%=*} polld=${1#*=} how=$2 upstream addr id port caddy_pid
    if [ "$how" = tcp ]; then
        start_polld "$polld" --listen 127.0.0.1:0 --trusted-proxy 127.0.0.1
        addr=$(listening "$WORK/polld/log")
        upstream=$addr
    else
        start_polld "$polld" --listen "unix:$WORK/polld/polld.sock" --base-url http://127.0.0.1
        for _ in $(seq 100); do [ -S "$WORK/polld/polld.sock" ] && break; sleep 0.1; done
        upstream="unix/$WORK/polld/polld.sock"
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$WORK/caddy-home"
    HOME="$WORK/caddy-home" XDG_DATA_HOME="$WORK/caddy-home" XDG_CONFIG_HOME="$WORK/caddy-home" \
        ANONPOLL_DOMAIN="http://127.0.0.1:$port" ANONPOLL_UPSTREAM="$upstream" ANONPOLL_CADDY_ADMIN=off \
        caddy run --adapter caddyfile --config "$ROOT/Caddyfile" >"$WORK/caddy.log" 2>&1 &
    caddy_pid=$!
    PIDS+=("$caddy_pid")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/api" && break; sleep 0.1; done
    id=$(create_poll "127.0.0.1:$port")
    PIDS_MEASURED="$PID $caddy_pid"
    measure "$label" "http://127.0.0.1:$port" "front-$how" "/p/$id" 32
    stop "$caddy_pid"
    stop "$PID"
}

printf 'round\tserver\tscenario\trequests\trps\tcpu_us_per_req\n' >"$OUT/path.tsv"
{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) commit=$(git -C "$ROOT" rev-parse --short HEAD) rounds=$ROUNDS seconds=$SECS"
    echo "cpus=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg) builds=${BUILDS[*]} front=${FRONT:-none}"
} >"$OUT/meta.txt"
say "hello-hyper and ${#BUILDS[@]} polld, $ROUNDS rounds of ${SECS}s; rows in $OUT/path.tsv"
SERVERS=(hyper "${BUILDS[@]}")
[ -z "$FRONT" ] || SERVERS+=(static)
for ROUND in $(seq "$ROUNDS"); do
    n=${#SERVERS[@]}
    for ((i = 0; i < n; i++)); do
        s=${SERVERS[$(((i + ROUND) % n))]}
        case "$s" in
            hyper) run_hyper ;;
            static) run_static ;;
            *) run_polld "$s" ;;
        esac
    done
    if [ -n "$FRONT" ]; then
        for b in "${BUILDS[@]}"; do
            [ "${b%%=*}" = "$FRONT" ] || continue
            if [ $((ROUND % 2)) -eq 1 ]; then run_front "$b" tcp; run_front "$b" unix; else run_front "$b" unix; run_front "$b" tcp; fi
        done
    fi
done
echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/meta.txt"

# Medians per server and scenario; ratios over hello-hyper and the first polld.
first=${BUILDS[0]%%=*}
awk -F'\t' -v first="$first" '
    NR == 1 { next }
    { k = $2 SUBSEP $3; n[k]++; cpu[k, n[k]] = $6; rps[k, n[k]] = $5; servers[$2] = 1; scen[$3] = 1 }
    function median(arr, k, m,    i, j, t, v) {
        for (i = 1; i <= m; i++) v[i] = arr[k, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
    }
    END {
        print "| server | scenario | runs | CPU µs/request (median) | requests/s (median) | CPU over hello-hyper | CPU over " first " | requests/s over Caddy static |"
        print "|---|---|--:|--:|--:|--:|--:|--:|"
        split("page-1 json-1 page-32 json-32 vote-1 front-tcp front-unix", order, " ")
        for (o = 1; o <= 7; o++) {
            s = order[o]
            if (!(s in scen)) continue
            hk = "hyper" SUBSEP s
            h = (hk in n) ? median(cpu, hk, n[hk]) : 0
            fk = first SUBSEP s
            f = (fk in n) ? median(cpu, fk, n[fk]) : 0
            ss = s
            sub(/^json/, "page", ss)
            sk = "static" SUBSEP ss
            st = (sk in n) ? median(rps, sk, n[sk]) : 0
            for (srv in servers) {
                k = srv SUBSEP s
                if (!(k in n)) continue
                c = median(cpu, k, n[k])
                r = median(rps, k, n[k])
                printf "| %s | %s | %d | %.1f | %.0f | %s | %s | %s |\n", srv, s, n[k], c, r,
                    (h > 0 && srv != "hyper") ? sprintf("%.2fx", c / h) : "-",
                    (f > 0 && srv != "hyper" && srv != "static") ? sprintf("%.2fx", c / f) : "-",
                    (st > 0 && srv != "static") ? sprintf("%.2fx", r / st) : "-"
            }
        }
    }' "$OUT/path.tsv" >"$OUT/path.md"
{ echo; sed 's/^/    /' "$OUT/meta.txt"; } >>"$OUT/path.md"
cat "$OUT/path.md"
