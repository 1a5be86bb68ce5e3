#!/usr/bin/env bash
# Two builds of polld side by side, alternating, on this noisy machine:
#
#   bench/compare.sh --before DIR --after DIR [--rounds 6] [--seconds 5]
#                    [--datasets "1k 1m"] [--out DIR]
#
# DIR is a CARGO_TARGET_DIR in which `bench/run.sh` (or cargo build --release
# of polld and bench/tools) built one commit: DIR/release/polld and
# DIR/release/anonbench must be of the same commit, since each build can only
# open data sets of its own format. The load generators (wrk, and httpload of
# --after) do not depend on the build.
#
# Each build populates each data set once (the time is reported); every round
# then copies it fresh and measures, for each build in turn (the order swaps
# every round: A B, B A, ...), polld's CPU per request for poll JSON, results
# JSON and the share page (wrk, 64 connections, after a 1 s warm-up), the vote
# POST alone (httpload post: forms fetched first, not measured) and
# `Store::cast` (anonbench cast, 64 threads; whole process and writer thread).
# Why alternate: CPU per request of one build swings by ±25 % between runs
# here, more than the differences looked for (docs/PERFORMANCE.md, Method);
# a pair measured back to back meets nearly the same load.
#
# Writes DIR/compare.tsv (one row per measurement) and DIR/compare.md (per
# scenario and data set: the median of each build, the ratio of the medians
# and the median of the per-round ratios). Needs wrk and cargo-built tools.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BEFORE=
AFTER=
ROUNDS=6
SECS=5
DATASETS="1k 1m"
CONNS=64
OUT=
while [ $# -gt 0 ]; do
    case "$1" in
        --before) BEFORE=$2; shift ;;
        --after) AFTER=$2; shift ;;
        --rounds) ROUNDS=$2; shift ;;
        --seconds) SECS=$2; shift ;;
        --datasets) DATASETS=$2; shift ;;
        --out) OUT=$2; shift ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$BEFORE" ] && [ -n "$AFTER" ] || { echo "compare.sh: --before DIR and --after DIR are needed" >&2; exit 2; }
for d in "$BEFORE" "$AFTER"; do
    for b in polld anonbench; do
        [ -x "$d/release/$b" ] || { echo "compare.sh: $d/release/$b is missing" >&2; exit 2; }
    done
done
HTTPLOAD=$AFTER/release/httpload
[ -x "$HTTPLOAD" ] || { echo "compare.sh: $HTTPLOAD is missing" >&2; exit 2; }
command -v wrk >/dev/null || { echo "compare.sh: wrk is needed (apt-get install wrk)" >&2; exit 2; }
OUT=${OUT:-$ROOT/bench/results/compare}
mkdir -p "$OUT"

WORK=${BENCH_WORK:-$(mktemp -d /tmp/anonpoll-compare.XXXXXX)}
mkdir -p "$WORK"
POLLD_PID=
cleanup() {
    [ -n "$POLLD_PID" ] && kill "$POLLD_PID" 2>/dev/null && wait "$POLLD_PID" 2>/dev/null || true
    [ -z "${BENCH_WORK:-}" ] && rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '[compare %s] %s\n' "$(date +%H:%M:%S)" "$*" | tee -a "$OUT/compare.log" >&2; }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
HZ=$(getconf CLK_TCK)
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }

dataset_size() {
    case "$1" in
        1k) echo "1000 100" ;;
        100k) echo "100000 10000" ;;
        1m) echo "1000000 100000" ;;
        *) echo "compare.sh: unknown dataset $1" >&2; exit 2 ;;
    esac
}

TSV=$OUT/compare.tsv
printf 'round\tbuild\tdataset\tscenario\trequests\tcpu_us\twriter_us\trps\n' >"$TSV"
{
    echo "date=$(date -u +%Y-%m-%dT%H:%MZ)"
    echo "before=$BEFORE ($("$BEFORE/release/polld" --version 2>/dev/null || true))"
    echo "after=$AFTER ($("$AFTER/release/polld" --version 2>/dev/null || true))"
    echo "rounds=$ROUNDS seconds=$SECS connections=$CONNS datasets=$DATASETS"
    echo "load average at start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/compare.meta"

# ------------------------------------------------------------ data sets
for build in before after; do
    dir=$BEFORE
    [ "$build" = after ] && dir=$AFTER
    for ds in $DATASETS; do
        read -r nresp npolls < <(dataset_size "$ds")
        # A kept BENCH_WORK folder keeps the data sets of the last run (the
        # 1M set takes 3 minutes through the store).
        if [ -n "${BENCH_WORK:-}" ] && [ -s "$WORK/$build-$ds.done" ]; then
            say "$build: $ds kept from the last run: $(cat "$WORK/$build-$ds.done")"
            echo "populate $build $ds (kept): $(cat "$WORK/$build-$ds.done")" >>"$OUT/compare.meta"
            continue
        fi
        say "$build: populating $ds ($nresp responses, $npolls + 8 polls)"
        out=$("$dir/release/anonbench" populate "$WORK/$build-$ds.sqlite3" "$nresp" "$npolls" 8 "$WORK/$build-$ds.ids")
        say "$build: $out"
        echo "populate $build $ds: $out" >>"$OUT/compare.meta"
        echo "$out" >"$WORK/$build-$ds.done"
    done
done

# ------------------------------------------------------------ one build, one round
fresh_copy() { # fresh_copy BUILD DS: the data set (and its key file) as populated
    rm -f "$WORK"/run.*
    cp "$WORK/$1-$2.sqlite3" "$WORK/run.sqlite3"
    [ -f "$WORK/$1-$2.keys" ] && cp -p "$WORK/$1-$2.keys" "$WORK/run.keys"
    cp "$WORK/$1-$2.ids" "$WORK/run.ids"
}
start_polld() { # start_polld POLLD
    local flags=(--create-limit 1000000000 --trusted-proxy 127.0.0.1/8)
    "$1" --help 2>/dev/null | grep -- --vote-limit >/dev/null && flags+=(--vote-limit 4000000000)
    "$1" --help 2>/dev/null | grep -- --network-votes-per-day >/dev/null && flags+=(--network-votes-per-day 0)
    : >"$WORK/polld.log" # before polld's shell opens it: sed reads it at once
    "$1" --db "$WORK/run.sqlite3" --listen 127.0.0.1:0 "${flags[@]}" >"$WORK/polld.log" 2>&1 &
    POLLD_PID=$!
    local i
    for i in $(seq 100); do
        ADDR=$(sed -n 's/.*listening on http:\/\/\([0-9.:]*\).*/\1/p' "$WORK/polld.log" | head -1)
        [ -n "$ADDR" ] && return 0
        sleep 0.1
    done
    cat "$WORK/polld.log" >&2
    return 1
}
stop_polld() {
    kill -TERM "$POLLD_PID" 2>/dev/null || true
    wait "$POLLD_PID" 2>/dev/null || true
    POLLD_PID=
}
record() { # record ROUND BUILD DS SCENARIO REQUESTS CPU_US WRITER_US RPS
    local IFS=$'\t'
    echo "$*" >>"$TSV"
    say "round $1 $2 $3 $4: $6 µs/request (writer $7) over $5 requests, $8/s"
}

measure() { # measure ROUND BUILD DS
    local round=$1 build=$2 ds=$3 dir=$BEFORE spec path out c0 c1 n cpu
    [ "$build" = after ] && dir=$AFTER
    fresh_copy "$build" "$ds"
    start_polld "$dir/release/polld"
    export BENCH_IDS=$WORK/run.ids BENCH_METHOD=GET
    for spec in "poll JSON|/api/polls/{id}" "results JSON|/api/polls/{id}/results" "share page|/p/{id}"; do
        export BENCH_PATH=${spec#*|}
        wrk -t2 -c"$CONNS" -d1s --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "http://$ADDR" >/dev/null 2>&1 || true
        c0=$(ticks "$POLLD_PID")
        out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 5s -s "$ROOT/bench/lua/scenario.lua" "http://$ADDR" 2>&1 | grep '^RESULT' || true)
        c1=$(ticks "$POLLD_PID")
        n=$(field requests "$out")
        [ "$(field errors "$out")" = 0 ] || say "round $round $build $ds ${spec%%|*}: $(field errors "$out") errors"
        cpu=$(awk -v a="$c0" -v b="$c1" -v n="$n" -v hz="$HZ" 'BEGIN { printf "%.1f", (b - a) * 1e6 / hz / n }')
        record "$round" "$build" "$ds" "${spec%%|*}" "$n" "$cpu" - "$(field rps "$out")"
    done
    out=$("$HTTPLOAD" post "$ADDR" "$CONNS" "$SECS" "$WORK/run.ids" "$POLLD_PID" "$HZ" 2>>"$OUT/compare.log" | grep '^RESULT' || true)
    [ "$(field errors "$out")" = 0 ] || say "round $round $build $ds vote POST: $(field errors "$out") errors"
    record "$round" "$build" "$ds" "vote POST" "$(field ops "$out")" "$(field polld_cpu_us_per_op "$out")" - "$(field rps "$out")"
    stop_polld
    out=$("$dir/release/anonbench" cast "$WORK/run.sqlite3" "$SECS" "$CONNS" "$WORK/run.ids" | grep '^RESULT' || true)
    [ "$(field errors "$out")" = 0 ] || say "round $round $build $ds Store::cast: $(field errors "$out") errors"
    record "$round" "$build" "$ds" "Store::cast" "$(field requests "$out")" "$(field cpu_us_per_op "$out")" \
        "$(field writer_cpu_us_per_op "$out")" "$(field rps "$out")"
}

for round in $(seq "$ROUNDS"); do
    order="before after"
    [ $((round % 2)) = 0 ] && order="after before"
    for build in $order; do
        for ds in $DATASETS; do
            measure "$round" "$build" "$ds"
        done
    done
done
echo "load average at end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/compare.meta"

# ------------------------------------------------------------ summary
{
    echo "# polld before / after, alternating ($ROUNDS rounds)"
    echo
    sed 's/^/    /' "$OUT/compare.meta"
    echo
    echo "CPU µs per request (Store::cast: per vote, whole process; writer thread in brackets):"
    echo "medians over the rounds, the ratio of the medians, and the median of the"
    echo "per-round ratios (each round measures both builds back to back)."
    echo
    echo "| scenario | data set | before | after | after / before (medians) | median of round ratios | round ratios |"
    echo "|---|---|--:|--:|--:|--:|---|"
    awk -F'\t' '
        function median(s,   a, n, i, j, t) {
            n = split(s, a, " ")
            for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        NR > 1 {
            k = $4 "|" $3
            if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
            v[k, $2] = v[k, $2] " " $6
            if ($7 != "-") w[k, $2] = w[k, $2] " " $7
            r[k, $1, $2] = $6
            rounds[$1] = 1
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = keys[i]; split(k, p, "|")
                b = median(v[k, "before"]); a = median(v[k, "after"])
                bs = sprintf("%.1f", b); as = sprintf("%.1f", a)
                if (w[k, "before"] != "") { bs = bs sprintf(" (%.1f)", median(w[k, "before"])); as = as sprintf(" (%.1f)", median(w[k, "after"])) }
                rr = ""; list = ""
                for (q in rounds) if (r[k, q, "before"] > 0) { x = r[k, q, "after"] / r[k, q, "before"]; rr = rr " " x }
                for (q = 1; q in rounds; q++) if (r[k, q, "before"] > 0) list = list sprintf("%s%.2f", (list == "" ? "" : ", "), r[k, q, "after"] / r[k, q, "before"])
                printf "| %s | %s | %s | %s | %.2f | %.2f | %s |\n", p[1], p[2], bs, as, a / b, median(rr), list
            }
        }' "$TSV"
} >"$OUT/compare.md"
say "written: $OUT/compare.md, compare.tsv"
