#!/usr/bin/env bash
# The sm80 backward after the forward's shared changes (ldmatrix addresses as one base XOR constants): the library
# and main's, interleaved over two rounds, against FA2 and cuDNN in each process (peers_backward.log). Bundle
# .bundle_s as run.sh's.
set -u
export FT_BUNDLE=.bundle_s
. bench/tools/device_lib.sh
B=$FT_BUNDLE
for r in 1 2; do for v in F M; do
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != F ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers_backward.log
  FLASHTILE_LIBRARY=$lib timeout 100 python3 bench/peers_backward.py --path cuda_sm80 --modes bwd --dim 64,128 \
    --seq 1024,4096,16384 --rep 60 --out /tmp/pb_$v$r >> $OUT/peers_backward.log 2>&1; echo "$v $r exit $?"
done; done
grep -E "^######## |^flashtile|^fa2|^cudnn" $OUT/peers_backward.log | head -80
step done
