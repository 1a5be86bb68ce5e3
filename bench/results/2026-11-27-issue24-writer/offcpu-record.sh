#!/bin/sh
# perf's scheduler switches of polld $1 (on core 0, its writer at nice -10) for 2 s of the loaded phase, into /tmp/fair/perf.data
D=$(mktemp -d /dev/shm/d.XXXX); PORT=$((20000 + $$ % 20000))
taskset -c 0 $1 --db $D/a.sqlite3 --listen 127.0.0.1:$PORT --trusted-proxy 127.0.0.1 > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
for t in /proc/$P/task/*; do case "$(cat $t/comm)" in *writer*) renice -n -10 -p $(basename $t) >/dev/null;; esac; done
taskset -c 1 /tmp/bench-target/release/httpload fair 127.0.0.1:$PORT 48 10 nice=19 > $D/out &
H=$!
sleep 14
perf record -q -o /tmp/fair/perf.data -e sched:sched_switch --call-graph dwarf,32768 -p $P -- sleep 2 2>&1 | tail -2
wait $H; cut -c1-120 $D/out
kill $P; rm -rf $D
