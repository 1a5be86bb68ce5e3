#!/usr/bin/env bash
# Instructions per request of two polld builds, counted by callgrind: a figure
# that the machine's load does not move (CPU time here swings by ±25 %).
#
#   bench/count.sh --before DIR --after DIR [--dataset 100k] [--requests 200]
#                  [--out DIR]
#
# DIR as for bench/compare.sh (DIR/release/polld and DIR/release/anonbench of
# one commit; httpload of --after). For each build: populate the data set,
# start polld (2 workers) under `valgrind --tool=callgrind` on a fresh copy,
# send 50 requests of each kind to warm up, and for each request kind (poll
# JSON, results JSON, share page GET, vote POST): prepare N (for the POST: fetch and fill in N vote
# forms), zero polld's counters (callgrind_control -z), send the N one after
# another on one connection, wait until polld has used no CPU for a second
# (the writer mixes the staged ballots once it is idle 250 ms: the mix is
# part of a vote's cost), and dump. The
# figure is (instructions in the window − polld's idle instructions for as
# long) / N. Writes DIR/count.tsv and DIR/count.md; with BENCH_WORK=FOLDER,
# FOLDER keeps each window's dump (callgrind.BUILD.SCENARIO.out) for
# callgrind_annotate.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BEFORE=
AFTER=
DS=100k
N=200
OUT=
while [ $# -gt 0 ]; do
    case "$1" in
        --before) BEFORE=$2; shift ;;
        --after) AFTER=$2; shift ;;
        --dataset) DS=$2; shift ;;
        --requests) N=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "count.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$BEFORE" ] && [ -n "$AFTER" ] || { echo "count.sh: --before DIR and --after DIR are needed" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "count.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
HTTPLOAD=$AFTER/release/httpload
OUT=${OUT:-$ROOT/bench/results/compare}
mkdir -p "$OUT"
WORK=${BENCH_WORK:-$(mktemp -d /tmp/anonpoll-count.XXXXXX)}
mkdir -p "$WORK"
POLLD_PID=
cleanup() {
    [ -n "$POLLD_PID" ] && kill "$POLLD_PID" 2>/dev/null && wait "$POLLD_PID" 2>/dev/null || true
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$WORK"
    return 0
}
trap cleanup EXIT
say() { printf '[count %s] %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/count.log" >&2; }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
case "$DS" in
    1k) SIZE="1000 100" ;;
    100k) SIZE="100000 10000" ;;
    1m) SIZE="1000000 100000" ;;
    *) echo "count.sh: unknown dataset $DS" >&2; exit 2 ;;
esac

# The instructions of the newest dump of polld (its "totals:" line).
dumped() {
    local f
    f=$(ls "$WORK"/cg.out."$POLLD_PID".* | sort -V | tail -1)
    awk '/^(totals|summary):/ { print $2; exit }' "$f"
}
zero() { callgrind_control -z "$POLLD_PID" >/dev/null 2>&1; }
# Waits until polld has used no CPU for a second: under valgrind the mix
# after a few votes takes seconds.
settle() {
    local a b
    b=$(ticks)
    while :; do
        sleep 1
        a=$b
        b=$(ticks)
        [ "$((b - a))" -le 1 ] && return
    done
}
ticks() { sed 's/.*) //' "/proc/$POLLD_PID/stat" | awk '{print $12 + $13}'; }
dump() { callgrind_control -d "$POLLD_PID" >/dev/null 2>&1; sleep 0.5; dumped; }

printf 'build\tdataset\tscenario\trequests\tinstructions\tidle_per_s\tinstructions_per_request\n' >"$OUT/count.tsv"
for build in before after; do
    dir=$BEFORE
    [ "$build" = after ] && dir=$AFTER
    read -r nresp npolls <<<"$SIZE"
    say "$build: $("$dir/release/anonbench" populate "$WORK/$build.sqlite3" "$nresp" "$npolls" 8 "$WORK/$build.ids")"
    rm -f "$WORK"/run.* "$WORK"/cg.out.*
    cp "$WORK/$build.sqlite3" "$WORK/run.sqlite3"
    [ -f "$WORK/$build.keys" ] && cp -p "$WORK/$build.keys" "$WORK/run.keys"
    # Two workers, so that the warm-up opens every read connection.
    flags=(--workers 2 --create-limit 1000000000 --trusted-proxy 127.0.0.1/8)
    "$dir/release/polld" --help 2>/dev/null | grep -- --vote-limit >/dev/null && flags+=(--vote-limit 4000000000)
    "$dir/release/polld" --help 2>/dev/null | grep -- --network-votes-per-day >/dev/null && flags+=(--network-votes-per-day 0)
    : >"$WORK/polld.log" # before polld's shell opens it: sed reads it at once
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out.%p" \
        "$dir/release/polld" --db "$WORK/run.sqlite3" --listen 127.0.0.1:0 "${flags[@]}" >"$WORK/polld.log" 2>&1 &
    POLLD_PID=$!
    ADDR=
    for _ in $(seq 600); do
        # Only once the log ends with a newline: polld writes its line in
        # pieces, and under valgrind a read may fall between them (a port
        # cut short: "invalid socket address").
        [ "$(tail -c 1 "$WORK/polld.log" | od -An -tx1 | tr -d ' \n')" = 0a ] &&
            ADDR=$(sed -n 's/.*listening on http:\/\/\([0-9.:]*\).*/\1/p' "$WORK/polld.log" | head -1)
        [ -n "$ADDR" ] && break
        sleep 0.1
    done
    [ -n "$ADDR" ] || { cat "$WORK/polld.log" >&2; exit 1; }
    # Warm up every kind first: both workers open their read connection,
    # and the writer mixes what the data set left staged.
    for target in /api/polls/{id} /api/polls/{id}/results /p/{id} post; do
        "$HTTPLOAD" seq "$ADDR" 50 "$WORK/$build.ids" "$target" <<<go >/dev/null
    done
    settle
    zero
    sleep 5
    idle=$(dump)
    idle_rate=$(awk -v i="$idle" 'BEGIN { printf "%.0f", i / 5.5 }')
    say "$build: polld idle: $idle_rate instructions/s"
    for spec in "poll JSON|/api/polls/{id}" "results JSON|/api/polls/{id}/results" "share page|/p/{id}" "vote POST|post"; do
        scen=${spec%%|*}
        target=${spec#*|}
        coproc LOAD { "$HTTPLOAD" seq "$ADDR" "$N" "$WORK/$build.ids" "$target"; }
        read -r ready <&"${LOAD[0]}"
        [ "$ready" = READY ] || { echo "count.sh: httpload said $ready" >&2; exit 1; }
        zero
        t0=$(date +%s.%N)
        echo go >&"${LOAD[1]}"
        read -r result <&"${LOAD[0]}"
        wait "$LOAD_PID" 2>/dev/null || true
        sleep 1
        settle
        total=$(dump)
        t1=$(date +%s.%N)
        [ "$(field errors "$result")" = 0 ] || say "$build $scen: $result"
        per=$(awk -v t="$total" -v r="$idle_rate" -v a="$t0" -v b="$t1" -v n="$N" 'BEGIN { printf "%.0f", (t - r * (b - a)) / n }')
        say "$build $scen ($DS): $per instructions/request ($total in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $result)"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$build" "$DS" "$scen" "$N" "$total" "$idle_rate" "$per" >>"$OUT/count.tsv"
        if [ "$target" = post ]; then
            # How many mixes fall in the window depends on the timing (the
            # writer mixes after each idle moment), so the vote is also
            # counted without the mix: the writer's mix function, inclusive.
            dumpf=$(ls "$WORK"/cg.out."$POLLD_PID".* | sort -V | tail -1)
            # awk reads to the end: an early exit would end callgrind_annotate
            # with SIGPIPE, which pipefail makes the script's end. The mix
            # is one call (before issue 24) or its steps (Mixing::step).
            mix=$(callgrind_annotate --inclusive=yes "$dumpf" 2>/dev/null |
                awk '!found && /anonpoll::store::writer::(Fresh::mix|mix::mix|mix::Mixing::step|mix) \[/ { gsub(",", "", $1); print $1; found = 1 }')
            per=$(awk -v t="$total" -v m="${mix:-0}" -v r="$idle_rate" -v a="$t0" -v b="$t1" -v n="$N" \
                'BEGIN { printf "%.0f", (t - m - r * (b - a)) / n }')
            say "$build vote POST without the mix: $per instructions/request (the mix: ${mix:-0} in all)"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$build" "$DS" "vote POST without the mix" "$N" "$((total - ${mix:-0}))" "$idle_rate" "$per" >>"$OUT/count.tsv"
        fi
        # Kept for callgrind_annotate when BENCH_WORK names a folder to keep.
        cp "$(ls "$WORK"/cg.out."$POLLD_PID".* | sort -V | tail -1)" "$WORK/callgrind.$build.${scen// /-}.out"
    done
    kill -TERM "$POLLD_PID" 2>/dev/null || true
    wait "$POLLD_PID" 2>/dev/null || true
    POLLD_PID=
done

{
    echo "# Instructions per request, before / after (callgrind, $DS data set, $N requests each)"
    echo
    echo "| request | before | after | after / before |"
    echo "|---|--:|--:|--:|"
    awk -F'\t' 'NR > 1 { v[$3, $1] = $7; if (!($3 in s)) { s[$3] = 1; k[++n] = $3 } }
        END { for (i = 1; i <= n; i++) printf "| %s | %d | %d | %.3f |\n", k[i], v[k[i], "before"], v[k[i], "after"], v[k[i], "after"] / v[k[i], "before"] }' "$OUT/count.tsv"
} >"$OUT/count.md"
say "written: $OUT/count.md, count.tsv"
