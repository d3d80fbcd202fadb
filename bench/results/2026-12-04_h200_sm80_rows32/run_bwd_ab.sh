#!/usr/bin/env bash
# The sm80 backward at d64 with 128 keys and 8 warps a CTA (FA2's d64 partition; BwdTraits<64>) against 64 keys and 4
# warps: library E (the d64 backward and its launch file built with the change) with the backward conformance suite on
# cuda_sm80 (conformance_bwd.log), then E and main's library interleaved over two rounds against FA2 and cuDNN
# (peers_backward_ab.log). Bundle .bundle_e: E's library and flashtile_tests, main's library in M/.
set -u
export FT_BUNDLE=.bundle_e
. bench/tools/device_lib.sh
B=$FT_BUNDLE
step "E: backward conformance on cuda_sm80"
timeout 200 $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance backward*,conformance variants: the backward*' > $OUT/conformance_bwd.log 2>&1; echo "conformance exit $?"
grep -E "test cases|assertions:" $OUT/conformance_bwd.log | tail -2
step "peers_backward, E and main interleaved"
for r in 1 2; do for v in E M; do
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != E ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers_backward_ab.log
  FLASHTILE_LIBRARY=$lib timeout 100 python3 bench/peers_backward.py --path cuda_sm80 --modes bwd --dim 64 \
    --seq 1024,4096,16384 --rep 60 --out /tmp/pb_$v$r >> $OUT/peers_backward_ab.log 2>&1; echo "$v $r exit $?"
done; done
grep -E "^######## |^flashtile|^fa2" $OUT/peers_backward_ab.log
step done
