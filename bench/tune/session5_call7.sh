#!/usr/bin/env bash
# Session 5, device call 7 (carry: build-var12; ~45 s, the last of the session's device time): branch
# wip/sm90-dynamic's non-causal kernels (dynamic scheduling; causal kernels byte-identical to main's) checked on every
# launch mode, then d128/d256 timed next to main's kernel (sm90_check_head) once. Files: c.log g.log.
set -u
B=build-var12
for m in 0 7 -1; do
  q=$([ "$m" = 0 ] || echo --quick)
  timeout 25 $B/sm90_check_br --no-bench --ctas $m $q 2>&1 | grep -v "^ok " | tail -3 >> "$OUT/c.log"
  echo "exit ${PIPESTATUS[0]} ctas $m" >> "$OUT/c.log"
done
cat "$OUT/c.log"
for d in 128 256; do for v in br head; do
  echo "== $v d$d" >> "$OUT/g.log"
  timeout 20 $B/sm90_check_$v --bench-only --grid --grid-d $d 2>&1 | grep non-causal >> "$OUT/g.log"
done; done
grep -c TFLOP "$OUT/g.log"
