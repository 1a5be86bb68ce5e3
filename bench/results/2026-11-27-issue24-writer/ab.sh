#!/bin/sh
# rounds of label:binary:renice-spec (PIN from env); one line per run
out=$1; shift
for r in ${ROUNDS:-1 2 3}; do for c in "$@"; do
  l=${c%%:*}; rest=${c#*:}; b=${rest%%:*}; rn=${rest#*:}
  echo "$l $(env RENICE="$rn" ./split.sh $b 2>/dev/null | head -1 | sed 's/loaded_max.*//')" >> $out
done; done; echo done >> $out
