#!/bin/sh
# one fair run with polld $1. PIN=1: polld on core 0, the load on core 1. RENICE="kind:n ..." renices its threads named *-kind*; IDLEK=kind puts them under SCHED_IDLE; SLICE="us kind ..." gives them an EEVDF custom slice (slice.py); CNICE=n the client; WNICE=n the writer; ATK=idle or nice=N the attackers (default nice=19); LOADW=posts or pages the heavy load; HTTPLOAD the load generator. Waits for polld to exit before it returns.
D=$(mktemp -d /dev/shm/d.XXXX); PORT=$((20000 + $$ % 20000))
if [ "$PIN" = 1 ]; then A="taskset -c 0"; B="taskset -c 1"; else A=""; B=""; fi
$A $1 --db $D/a.sqlite3 --listen 127.0.0.1:$PORT --trusted-proxy 127.0.0.1 > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
if [ -n "$IONICE" ]; then for t in /proc/$P/task/*; do case "$(cat $t/comm)" in *-io*) renice -n $IONICE -p $(basename $t) >/dev/null;; esac; done; fi
if [ -n "$SLICE" ]; then python3 /tmp/fair/slice.py $P $SLICE 2>/dev/null; fi
if [ -n "$IDLEK" ]; then for t in /proc/$P/task/*; do case "$(cat $t/comm)" in *-$IDLEK*) chrt -i -p 0 $(basename $t) >/dev/null;; esac; done; fi
for kv in $RENICE; do k=${kv%%:*}; n=${kv#*:}; for t in /proc/$P/task/*; do case "$(cat $t/comm)" in *-$k*) renice -n $n -p $(basename $t) >/dev/null;; esac; done; done
if [ -n "$WNICE" ]; then for t in /proc/$P/task/*; do case "$(cat $t/comm)" in *writer*) renice -n $WNICE -p $(basename $t) >/dev/null;; esac; done; fi
nice -n ${CNICE:-0} $B ${HTTPLOAD:-/tmp/bench-target/release/httpload} fair 127.0.0.1:$PORT 48 10 ${ATK:-nice=${HNICE:-19}} ${LOADW} | sed 's/RESULT//; s/loaded_max.*small_votes_alone/small_votes_alone/'
# an instrumented build (instrument.patch) prints its timings here
curl -s 127.0.0.1:$PORT/__trace
for t in /proc/$P/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15, $19}' $t/stat) $(cat $t/schedstat)"; done | awk '{split($1,a,"-"); k=a[2]; cpu[k]+=$2; n[k]++; nice[k]=$3; run[k]+=$4/1e6; wait[k]+=$5/1e6} END {for (k in cpu) printf "%s:%d:%d:n%d run=%dms wait=%dms  ", k, n[k], cpu[k], nice[k], run[k], wait[k]; print ""}'
kill $P; wait $P 2>/dev/null; rm -rf $D
