#!/usr/bin/env bash
# Second A/B of issue 45's 32 rows a warp, with ldmatrix addresses as one base XOR constants (tile/ops.cuh):
# library C (README's table C in sm80_traits.hpp) with every check the change touches, D/ (README's table D in the
# forward's two dense files), M/ (main). checks.log, conformance.log: C's; peers.log (here peers_ab2.log): the three
# libraries interleaved over two rounds, the whole grid.
set -u
export FT_BUNDLE=.bundle_s
. bench/tools/device_lib.sh
B=$FT_BUNDLE
kEnd=${kEnd:-560}
left() { echo $(( kEnd - ($(date +%s) - t0) )); }
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "C: checks"
ck 60 $B/cuda_sm80_check --no-time
ck 60 $B/cuda_sm80_bwd_check --no-time
ck 40 $B/cuda_sm80_serving_check
ck 60 $B/sm90_serving_check
ck 90 compute-sanitizer --error-exitcode 3 --tool memcheck $B/cuda_sm80_check --small
ck 90 compute-sanitizer --error-exitcode 3 --tool memcheck $B/sm90_serving_check --small
grep -E "^==|passed|FAIL|ERROR SUMMARY|exit" $OUT/checks.log
step "peers, three libraries interleaved (peers.log)"
for r in 1 2; do for v in C D M; do
  l=$(left); [ $l -gt 60 ] && l=60; [ $l -lt 20 ] && break
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != C ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers.log
  FLASHTILE_LIBRARY=$lib timeout $l python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128 --seq 512,1024,2048,4096,8192,16384 --rep 60 --out /tmp/p_$v$r >> $OUT/peers.log 2>&1; echo "$v $r exit $?"
done; done
step "C: conformance on both CUDA paths; D: conformance on cuda_sm80"
l=$(left); [ $l -gt 200 ] && l=200
[ $l -gt 30 ] && { timeout $l $B/flashtile_tests --ft-backend=cuda -tc='conformance*' > $OUT/conformance.log 2>&1; echo "C conformance exit $?"; }
grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
l=$(left); [ $l -gt 120 ] && l=120
[ $l -gt 30 ] && { LD_LIBRARY_PATH=$PWD/$B/D timeout $l $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' > /tmp/confD.log 2>&1; echo "D conformance exit $?"; }
grep -E "test cases|assertions:" /tmp/confD.log | tail -2 | tee -a $OUT/checks.log
step done
