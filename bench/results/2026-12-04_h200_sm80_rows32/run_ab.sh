#!/usr/bin/env bash
# 32 query rows a warp (issue 45), on the H200: two tables against main's 16 rows, the sm80 path forced, FA2 in the
# same process. Bundle .bundle_s: library A (README's table A in sm80_traits.hpp) with the checks, B/ (README's
# table B in the forward's two dense files), M/ (main). checks.log: A's checks; peers.log (here peers_ab1.log): the three
# libraries interleaved over two rounds.
set -u
export FT_BUNDLE=.bundle_s
. bench/tools/device_lib.sh
B=$FT_BUNDLE
kEnd=${kEnd:-560}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "A: cuda_sm80_check"
ck 60 $B/cuda_sm80_check --no-time
grep -E "^==|passed|FAIL|exit" $OUT/checks.log | tail -4
step "peers, three libraries interleaved (peers.log)"
for r in 1 2; do for v in A B M; do
  l=$(left); [ $l -gt 50 ] && l=50; [ $l -lt 20 ] && break
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != A ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers.log
  FLASHTILE_LIBRARY=$lib timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128 --seq 1024,4096,16384 --rep 60 --out /tmp/p_$v$r >> $OUT/peers.log 2>&1; echo "$v $r exit $?"
done; done
grep -E "^######## |flashtile:cuda_sm80|^fa2" $OUT/peers.log | awk '{print $1,$3,$4,$6,$10}' | paste -sd' ' | sed 's/######## /\n/g'
step "A: conformance on cuda_sm80, serving checks"
l=$(left); [ $l -gt 150 ] && l=150
[ $l -gt 30 ] && { timeout $l $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"; }
grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
l=$(left); [ $l -gt 40 ] && ck 40 $B/cuda_sm80_serving_check
grep -E "^==|passed|FAIL|exit" $OUT/checks.log | tail -4
step done
