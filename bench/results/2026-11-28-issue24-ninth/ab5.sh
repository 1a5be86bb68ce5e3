#!/bin/bash
# rounds of label:binary:RENICE ("kind:n ..." or -), attackers idle; ab4's line
out=$1; shift
for r in ${ROUNDS:-1 2 3}; do for c in "$@"; do
  l=${c%%:*}; rest=${c#*:}; b=${rest%%:*}; rn=${rest#*:}
  [ "$rn" = "-" ] && rn=""
  RENICE="$rn" ATK=${ATK:-idle} ./split.sh $b 2>/dev/null | sed 's/<!DOCTYPE.*html>//' | grep -v "^$" | tr '\n' ' ' | awk -v l=$l '{for(i=1;i<=NF;i++){split($i,kv,"="); if(kv[1]=="alone_p99_ms")a=kv[2]; if(kv[1]=="loaded_p99_ms")b=kv[2]; if(kv[1]=="heavy_refused")rf=kv[2]; if($i ~ /^(writer|io|busy|worker):/){split($i,t,":"); k=t[1]; r=$(i+1); sub("run=","",r); sub("ms","",r); cpu[k]=r}} printf "%s alone_p99=%s loaded_p99=%s ratio=%.2f refused=%s writer_ms=%s io_ms=%s worker_ms=%s busy_ms=%s\n", l, a, b, b/a, rf, cpu["writer"], cpu["io"], cpu["worker"], cpu["busy"]}' >> $out
done; done; echo done >> $out
