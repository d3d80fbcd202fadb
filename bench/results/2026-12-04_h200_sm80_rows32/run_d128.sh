#!/usr/bin/env bash
# d128 at 32 rows a warp, two more shapes: non-causal 48 keys a tile, causal 64 keys with Q re-read (library X: the
# forward's d128 file built with them) against the merged table (M/): the forward conformance suite on cuda_sm80 for
# X (conformance_x.log), then both interleaved over two rounds (peers_d128.log). Bundle .bundle_e.
set -u
export FT_BUNDLE=.bundle_e
. bench/tools/device_lib.sh
B=$FT_BUNDLE
step "X: conformance on cuda_sm80"
timeout 150 $B/flashtile_tests --ft-backend=cuda --ft-path=cuda_sm80 -tc='conformance*' -tce='conformance backward*' > $OUT/conformance_x.log 2>&1; echo "conformance exit $?"
grep -E "test cases|assertions:" $OUT/conformance_x.log | tail -2
step "peers, X and the merged table interleaved"
for r in 1 2; do for v in X M; do
  lib=$PWD/$B/libflashtile.so.0.5.0; [ $v != X ] && lib=$PWD/$B/$v/libflashtile.so.0.5.0
  echo "######## $v round $r" >> $OUT/peers_d128.log
  FLASHTILE_LIBRARY=$lib timeout 60 python3 bench/peers.py --dtype bf16 --peers fa2 --flashtile-paths cuda_sm80 \
    --dim 128 --seq 512,1024,2048,4096,8192,16384 --rep 60 --out /tmp/p_$v$r >> $OUT/peers_d128.log 2>&1; echo "$v $r exit $?"
done; done
step done
