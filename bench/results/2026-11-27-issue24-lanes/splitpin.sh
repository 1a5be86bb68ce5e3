#!/bin/sh
# one fair run with polld $1, then CPU ticks per thread kind
D=$(mktemp -d /dev/shm/d.XXXX); PORT=$((20000 + $$ % 20000))
taskset -c 0 $1 --db $D/a.sqlite3 --listen 127.0.0.1:$PORT --trusted-proxy 127.0.0.1 > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
taskset -c 1 /tmp/bench-target/release/httpload fair 127.0.0.1:$PORT 48 10 nice=19 | sed 's/RESULT//; s/small_votes_alone.*heavy_taken/heavy_taken/'
for t in /proc/$P/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15, $19}' $t/stat)"; done | awk '{split($1,a,"-"); k=a[2]; cpu[k]+=$2; n[k]++; nice[k]=$3} END {for (k in cpu) printf "%s:%d:%d:n%d ", k, n[k], cpu[k], nice[k]; print ""}'
kill $P; rm -rf $D
