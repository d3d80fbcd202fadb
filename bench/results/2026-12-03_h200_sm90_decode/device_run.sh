#!/usr/bin/env bash
# sm90 decode kernel: correctness (sm90_check incl. the decode cases), then decode speed against cuDNN / FA2 in one
# process (bench/peers.py) and paged vs contiguous (bench/decode_paged.py). Carry .bundle_dec and .gl.
set -u
FT_BUNDLE=.bundle_dec . bench/tools/device_lib.sh
B=.bundle_dec
export FLASHTILE_LIBRARY=$PWD/$B/libflashtile.so
step "sm90_check --no-bench"
timeout 170 $B/sm90_check --no-bench > "$OUT/sm90_check.log" 2>&1; echo "exit $?"
grep -E "^FAIL|passed|failed" "$OUT/sm90_check.log" | head -30
grep -c "^ok" "$OUT/sm90_check.log"
step "decode peers"
timeout 170 python3 bench/peers.py --seq 3 --dtype bf16 --peers fa2,cudnn --flashtile-paths cuda_sm90,cuda_sm80 \
  --shape 1,1,65536,32,8,128 --shape 16,1,8192,32,8,128 --shape 64,1,4096,32,8,128 --shape 128,1,2048,32,8,128 \
  --shape 8,16,32768,32,8,128,1 --out "$OUT/peers" > "$OUT/peers.log" 2>&1; echo "exit $?"
grep -E "flashtile|cudnn|fa2" "$OUT/peers.log" | tail -30
step "paged vs contiguous"
timeout 170 python3 bench/decode_paged.py --out "$OUT" > "$OUT/paged.log" 2>&1; echo "exit $?"
cat "$OUT/paged.log" | tail -40
step "chunked prefill peers"
timeout 120 python3 bench/peers.py --seq 3 --dtype bf16 --peers fa2,cudnn --flashtile-paths cuda_sm90 \
  --shape 1,1000,3001,32,8,128,1 --shape 4,512,4096,32,8,128,1 --shape 1,1024,8192,32,8,128,1 \
  --shape 1,2048,32768,32,8,128,1 --shape 1,4096,65536,32,8,128,1 --out "$OUT/chunk" > "$OUT/chunk.log" 2>&1; echo "exit $?"
grep -E "flashtile|cudnn|fa2" "$OUT/chunk.log" | tail -20
