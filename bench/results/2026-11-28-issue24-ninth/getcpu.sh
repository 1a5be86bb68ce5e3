#!/bin/sh
# CPU per GET of the heavy page (and its bytes) for polld $1
# (heavy.json: python3 heavy.py > heavy.json, the 20 x 12 ranking of httpload fair)
D=$(mktemp -d /dev/shm/g.XXXX); PORT=$((20000 + $$ % 20000))
$1 --db $D/a.sqlite3 --listen 127.0.0.1:$PORT > $D/log 2>&1 & P=$!
for i in $(seq 50); do curl -s -o /dev/null 127.0.0.1:$PORT/api && break; sleep 0.1; done
ID=$(curl -s -XPOST -H 'content-type: application/json' --data @${HEAVY:-heavy.json} http://127.0.0.1:$PORT/api/polls | python3 -c 'import json,sys;print(json.load(sys.stdin)["id"])')
urls=$(for i in $(seq 1000); do printf "http://127.0.0.1:$PORT/p/$ID "; done)
curl -s $urls > /dev/null
a=$(awk '{print $14+$15}' /proc/$P/stat); curl -s $urls > /dev/null; b=$(awk '{print $14+$15}' /proc/$P/stat)
echo "$(basename $1) bytes=$(curl -s http://127.0.0.1:$PORT/p/$ID | wc -c) cpu_us_per_get=$(( (b-a)*10000/1000 ))"
kill $P; wait $P 2>/dev/null; rm -rf $D
