#!/bin/bash
# rounds of label:binary, attackers idle; one line per run with the threads' CPU (schedstat run ms)
out=$1; shift
for r in ${ROUNDS:-1 2 3}; do for c in "$@"; do
  l=${c%%:*}; b=${c#*:}
  ATK=${ATK:-idle} ./split.sh $b 2>/dev/null | sed 's/<!DOCTYPE.*html>//' | grep -v "^$" | tr '\n' ' ' | awk -v l=$l '{for(i=1;i<=NF;i++){split($i,kv,"="); if(kv[1]=="alone_p99_ms")a=kv[2]; if(kv[1]=="loaded_p99_ms")b=kv[2]; if(kv[1]=="alone_p50_ms")a5=kv[2]; if(kv[1]=="loaded_p50_ms")b5=kv[2]; if(kv[1]=="heavy_taken")h=kv[2]; if(kv[1]=="heavy_refused")rf=kv[2]; if($i ~ /^(writer|io|busy|worker):/){split($i,t,":"); k=t[1]; getline_dummy=0; r=$(i+1); sub("run=","",r); sub("ms","",r); cpu[k]=r}} printf "%s alone_p50=%s alone_p99=%s loaded_p50=%s loaded_p99=%s ratio=%.2f heavy_taken=%s refused=%s writer_ms=%s io_ms=%s worker_ms=%s busy_ms=%s\n", l, a5, a, b5, b, b/a, h, rf, cpu["writer"], cpu["io"], cpu["worker"], cpu["busy"]}' >> $out
done; done; echo done >> $out
