#!/bin/sh
# perf of polld's writer during the loaded half (attacker idle)
D=$(mktemp -d /dev/shm/d.XXXX); PORT=$((20000 + $$ % 20000))
$1 --db $D/a.sqlite3 --listen 127.0.0.1:$PORT --trusted-proxy 127.0.0.1 > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
W=$(for t in /proc/$P/task/*; do grep -q writer $t/comm && basename $t; done)
/tmp/bench-target/release/httpload fair 127.0.0.1:$PORT 48 10 idle > $D/out &
H=$!
sleep 12
perf record -F 4000 --call-graph dwarf,16384 -t $W -o /tmp/fair/${PERFOUT:-perfw.data} -- sleep 4 2>/dev/null >/dev/null
wait $H; cat $D/out
kill $P; rm -rf $D
