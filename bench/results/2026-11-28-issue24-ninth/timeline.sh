#!/bin/bash
# timeline.sh POLLD OUT: one fair run (attackers idle), the small POSTs' latencies with their times (HTTPLOAD_DUMP) and polld's thread CPU by kind every 100 ms
B=$1; OUT=$2; rm -f $OUT.lat $OUT.cpu
D=$(mktemp -d /dev/shm/t.XXXX); PORT=$((20000 + $$ % 20000))
$B --db $D/a.sqlite3 --listen 127.0.0.1:$PORT --trusted-proxy 127.0.0.1 $POLLD_ARGS > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
python3 /tmp/fair/sampler.py $P $OUT.cpu &
S=$!
HTTPLOAD_DUMP=$OUT.lat /tmp/fair/httpload-dump fair 127.0.0.1:$PORT 48 10 idle | grep RESULT
kill $P; wait $P 2>/dev/null; kill $S 2>/dev/null; rm -rf $D
