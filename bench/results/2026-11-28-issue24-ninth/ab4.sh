#!/bin/bash
# rounds of label:binary:SLICESPEC ("us kind kind", or - for none), attackers idle; ab3's line
out=$1; shift
for r in ${ROUNDS:-1 2 3}; do for c in "$@"; do
  l=${c%%:*}; rest=${c#*:}; b=${rest%%:*}; sl=${rest#*:}
  [ "$sl" = "-" ] && sl=""
  s0=$(awk '/^cpu /{print $9; exit}' /proc/stat); t0=$(date +%s)
  SLICE="$sl" ATK=${ATK:-idle} ./split.sh $b 2>/dev/null | sed 's/<!DOCTYPE.*html>//' | grep -v "^$" | tr '\n' ' ' | awk -v l=$l '{for(i=1;i<=NF;i++){split($i,kv,"="); if(kv[1]=="alone_p99_ms")a=kv[2]; if(kv[1]=="loaded_p99_ms")b=kv[2]; if(kv[1]=="alone_p50_ms")a5=kv[2]; if(kv[1]=="loaded_p50_ms")b5=kv[2]; if(kv[1]=="heavy_taken")h=kv[2]; if(kv[1]=="heavy_refused")rf=kv[2]; if($i ~ /^(writer|io|busy|worker):/){split($i,t,":"); k=t[1]; r=$(i+1); sub("run=","",r); sub("ms","",r); cpu[k]=r; w=$(i+2); sub("wait=","",w); sub("ms","",w); wt[k]=w}} printf "%s alone_p50=%s alone_p99=%s loaded_p50=%s loaded_p99=%s ratio=%.2f heavy_taken=%s refused=%s writer_ms=%s io_ms=%s worker_ms=%s busy_ms=%s wait_io=%s wait_worker=%s wait_writer=%s", l, a5, a, b5, b, b/a, h, rf, cpu["writer"], cpu["io"], cpu["worker"], cpu["busy"], wt["io"], wt["worker"], wt["writer"]}' >> $out
  s1=$(awk '/^cpu /{print $9; exit}' /proc/stat); t1=$(date +%s); echo " steal_pct=$(( (s1-s0) * 100 / ((t1-t0) * 200) ))" >> $out
done; done; echo done >> $out
