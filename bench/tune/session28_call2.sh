#!/usr/bin/env bash
# Session 28's second call (~200 s; carry .bundle .gl): why d64 non-causal 16k runs 3-5% faster than 2k-8k in every
# call (sessions 24-28: 552-566 against 528-543 TFLOP/s) while cuDNN and FA2 are flat there.
# 1. Sustained runs of main's sm90_check, SM clock and power sampled (clocks.log, marks per cell), three reps
#    interleaved: 8k as the grid has it (H 32, B 2) and as B 1 H 64 (the 16k cell's batch), 16k as the grid (B 1) and
#    as B 2 H 16 (8k's batch), 4k (B 4) and as B 1 H 128. Same tiles per head for a length, other head/batch mix:
#    if B 1 runs faster at 8k, the order or layout decides; if the length decides, the per-tile cost does.
# 2. ncu at the base clock (--clock-control base) of 8k and 16k: cycles and memory per FLOP without the power cap.
# Files: main.log pers.log clocks.log ncu.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
clocks_start
step "cells"
cells="64,8192,0 64,8192,0,64,1 64,16384,0 64,16384,0,16,2 64,4096,0 64,4096,0,128,1 64,2048,0"
for rep in 1 2 3; do for cell in $cells; do
  mark "start $cell"
  echo "== land $cell" >> "$OUT/pers.log"
  timeout 30 .bundle/sm90_check --bench-only --cell "$cell" >> "$OUT/pers.log" 2>&1
  mark "end $cell"
done; done
kill "$clk" 2>/dev/null
grep bench "$OUT/pers.log" | sed 's/  (min.*//' | sort | uniq -c | head -40
step "ncu base clock"
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats"
for cell in 64,8192,0 64,16384,0 64,8192,0,64,1; do
  echo "######## $cell" >> "$OUT/ncu.log"
  timeout 90 ncu --clock-control base --launch-skip 4 --launch-count 1 $S --kernel-name regex:sm90_fwd \
    .bundle/sm90_check --bench-only --cell "$cell" >> "$OUT/ncu.log" 2>&1
  echo "ncu $cell exit $?"
done
grep -E "^######## |Duration|SM Frequency|Elapsed Cycles|L2 Hit|Mem Busy|Memory Throughput|DRAM Throughput|Compute \(SM\)" "$OUT/ncu.log" | head -60
step done
