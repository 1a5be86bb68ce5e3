#!/bin/bash
# matrix of named configs (see case); rounds
out=$1; shift
# the attackers idle (httpload fair ... idle)
export ATK=idle
run() { echo "$1 $(env "${@:2}" ./split.sh ${BIN:-/tmp/fair/polld-head} 2>/dev/null | head -1 | sed 's/small_votes_alone.*heavy_taken/heavy_taken/; s/heavy_failed.*//')" >> $out; }
for r in ${ROUNDS:-1 2}; do for c in "$@"; do
  case $c in
    A) run A X=1;;
    S) run S "SLICE=100 io worker writer";;
    S2) run S2 "SLICE=100 io worker";;
    R) run R "RENICE=io:-5 worker:-5";;
    D) run D IDLEK=busy;;
    SD) run SD "SLICE=100 io worker writer" IDLEK=busy;;
    N19) run N19 HNICE=19;;
    P) run P LOADW=pages;;
    MM) run MM GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072;;
    MI) run MI BIN=/tmp/fair/polld-m2;;
    PO) run PO LOADW=posts;;
    *) run "$c" BIN=/tmp/fair/polld-$c;;
  esac
done; done; echo done >> $out
