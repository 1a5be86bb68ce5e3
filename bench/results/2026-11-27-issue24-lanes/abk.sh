#!/bin/sh
# rounds of: label:binary:env
out=$1; shift
for r in ${ROUNDS:-1 2 3}; do for c in "$@"; do
  l=${c%%:*}; rest=${c#*:}; b=${rest%%:*}; e=${rest#*:}
  echo "$l $(env $(echo $e | tr , ' ') ./split.sh $b | tr '\n' ' ' | sed 's/alone_p50_ms=[^ ]* //; s/loaded_max.*heavy_taken/heavy_taken/')" >> $out
done; done; echo done >> $out
