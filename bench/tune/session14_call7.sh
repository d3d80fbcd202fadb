#!/usr/bin/env bash
# Session 14 call 7 (~150 s; carry .bundle-v14 and .gl): where a short causal tile's time goes. ncu (clocks not locked)
# on the landed sm90 kernel and on cuDNN's, at the two worst cells of issue 4 (d64 and d128 causal 512: 0.72x and
# 0.79x cuDNN), one launch each after four: speed of light, launch stats, occupancy, warp states (stall reasons),
# scheduler, compute and memory workload.
# run(carry=[".bundle-v14", ".gl"], timeout_s=300, command='bash bench/tune/session14_call7.sh')
# Files: main.log ncu.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
N="ncu --clock-control none --launch-skip 4 --launch-count 1 --section SpeedOfLight --section LaunchStats"
N="$N --section Occupancy --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
N="$N --section MemoryWorkloadAnalysis"
step "ncu"
for cell in 64,512,1 128,512,1; do
  echo "######## sm90 $cell" >> "$OUT/ncu.log"
  timeout 80 $N --kernel-name regex:sm90_fwd .bundle-v14/sm90_check_land --bench-only --cell $cell >> "$OUT/ncu.log" 2>&1
  echo "sm90 $cell exit $?"
  echo "######## cudnn $cell" >> "$OUT/ncu.log"
  timeout 100 $N --kernel-name regex:'cudnn|sdpa|fmha|flash' python3 tests/cuda/sm90_peer.py --cudnn-only --cell $cell \
    >> "$OUT/ncu.log" 2>&1
  echo "cudnn $cell exit $?"
done
grep -E "^######## |Duration|Registers Per|Grid Size|Block Size|Dynamic Shared|Compute \(SM\) Th|DRAM Through|L2 Cache Th|Executed Ipc A|Achieved Occ" "$OUT/ncu.log" | head -80
step done
