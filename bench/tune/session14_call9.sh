#!/usr/bin/env bash
# Session 14 call 9 (~60 s; carry .bundle-v14 and .gl): call 8's instruction mix with the opcode names (call 8's text
# output printed the per-opcode values without them): sass__inst_executed_per_opcode and the opcode categories,
# instances printed with their names, for ours and cuDNN's kernel at d64 and d128 causal 512.
# run(carry=[".bundle-v14", ".gl"], timeout_s=200, command='bash bench/tune/session14_call9.sh')
# Files: main.log ncu.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
N="ncu --clock-control none --launch-skip 4 --launch-count 1 --print-metric-instances details"
N="$N --metrics sass__inst_executed_per_opcode,smsp__inst_executed.sum"
step "ncu instruction mix, named"
for cell in 64,512,1 128,512,1; do
  echo "######## sm90 $cell" >> "$OUT/ncu.log"
  timeout 60 $N --kernel-name regex:sm90_fwd .bundle-v14/sm90_check_land --bench-only --cell $cell >> "$OUT/ncu.log" 2>&1
  echo "sm90 $cell exit $?"
  echo "######## cudnn $cell" >> "$OUT/ncu.log"
  timeout 80 $N --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py --cudnn-only --cell $cell \
    >> "$OUT/ncu.log" 2>&1
  echo "cudnn $cell exit $?"
done
grep -c . "$OUT/ncu.log"; grep -m3 -i "error\|unrecognized" "$OUT/ncu.log"
step done
