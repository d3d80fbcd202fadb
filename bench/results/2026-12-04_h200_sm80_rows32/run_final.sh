#!/usr/bin/env bash
# The table as merged (d128 causal at 32 rows and 64 keys after run_d128.sh): its checks, the forward conformance
# suite on cuda_sm80, and the grid against FA2 (peers_final.log: the library twice, the previous table's library,
# 7626a1d, once between). Bundle .bundle_g: the library and checks, 7626a1d's library in M/.
set -u
export FT_BUNDLE=.bundle_g
. bench/tools/device_lib.sh
B=$FT_BUNDLE
ck() { local t=$1; shift; { echo "== $*"; timeout "$t" "$@"; echo "exit $?"; } >> $OUT/checks.log 2>&1; }
step "checks"
ck 60 $B/cuda_sm80_check --no-time
ck 40 $B/cuda_sm80_serving_check
ck 90 compute-sanitizer --error-exitcode 3 --tool memcheck $B/cuda_sm80_check --small
grep -E "^==|passed|FAIL|ERROR SUMMARY|exit" $OUT/checks.log
step "peers (peers_final.log)"
for v in G M G; do
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != G ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v" >> $OUT/peers_final.log
  FLASHTILE_LIBRARY=$lib timeout 60 python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 64,128 --seq 512,1024,2048,4096,8192,16384 --rep 60 --out /tmp/p_$v >> $OUT/peers_final.log 2>&1; echo "$v exit $?"
done
step "conformance on cuda_sm80 (forward)"
timeout 120 $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' -tce='conformance backward*' > $OUT/conformance.log 2>&1; echo "conformance exit $?"
grep -E "test cases|assertions:" $OUT/conformance.log | tail -2
step done
