#!/usr/bin/env bash
# The varlen kernel's tile order (one group of every (sequence, head) pair: the longest tiles of all sequences first)
# against groups of pairs, on the H200; the same call checks the library (conformance.log, checks.log) and times the
# sm80 forward once more (peers.log: d64 causal back on 64-key tiles). Bundle .bundle_x: the new library and checks,
# the previous one (run_ncu.sh's, groups) in A/. Output: varlen_order.log.
set -u
export FT_BUNDLE=.bundle_x
. bench/tools/device_lib.sh
B=$FT_BUNDLE NEW=$PWD/$FT_BUNDLE/libflashtile.so.0.5.0 OLD=$PWD/$FT_BUNDLE/A/libflashtile.so.0.5.0
kEnd=${kEnd:-420}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
step "checks (checks.log, conformance.log)"
{ echo "== cuda_sm80_check"; timeout 40 $B/cuda_sm80_check --no-time; echo "exit $?"; } >> $OUT/checks.log 2>&1
timeout 200 $B/flashtile_tests --ft-backend=cuda -tc='conformance*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"
grep -E "^==|passed|FAIL|exit" $OUT/checks.log; grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
step "varlen: one group against groups, interleaved (varlen_order.log)"
for r in 1 2; do for v in NEW OLD; do
  l=$(left); [ $l -gt 45 ] && l=45; [ $l -lt 20 ] && break
  echo "######## $v round $r d128" >> $OUT/varlen_order.log
  FLASHTILE_LIBRARY=${!v} timeout $l python3 bench/varlen_prefill.py --dim 128 --paths auto --dense-seq 4096 --rep 100 \
    >> $OUT/varlen_order.log 2>&1; echo "$v $r exit $?"
done; done
for v in NEW OLD; do
  l=$(left); [ $l -gt 45 ] && l=45; [ $l -lt 20 ] && break
  echo "######## $v d64" >> $OUT/varlen_order.log
  FLASHTILE_LIBRARY=${!v} timeout $l python3 bench/varlen_prefill.py --dim 64 --paths auto --dense-seq 4096 --rep 100 \
    >> $OUT/varlen_order.log 2>&1; echo "$v d64 exit $?"
done
grep -E "^########|^varlen|^dense" $OUT/varlen_order.log
step "sm80 forward against FA2 (peers.log)"
l=$(left); [ $l -gt 45 ] && l=45
[ $l -gt 20 ] && { FLASHTILE_LIBRARY=$NEW timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
  --dim 64,128 --seq 1024,4096,16384 --rep 60 --out /tmp/p >> $OUT/peers.log 2>&1; echo "peers exit $?"; }
grep -E "geomean" $OUT/peers.log
step done
