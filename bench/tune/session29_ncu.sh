#!/usr/bin/env bash
# Session 29 call 3 (~150 s; carry .bundle-s29 .gl): ncu of one launch (the fifth, clocks not locked) of d64
# non-causal 512 and causal 1k, main's small kernel (land: four consumers, 256-row tiles) against call 1's g2 (two groups
# of two, 128-row tiles): pipe utilization, warp states, scheduler, L2 and DRAM, to say why the groups ran level.
# Files: main.log ncu.log
set -u
FT_LOG=main.log FT_BUNDLE=.bundle-s29
. "$(dirname "$0")/device_env.sh"
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy"
for cell in 64,512,0 64,1024,1; do for v in land g2; do
  echo "######## $v ($cell)" >> "$OUT/ncu.log"
  timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 1 $s --kernel-name regex:sm90_fwd \
    .bundle-s29/sm90_check_$v --bench-only --cell "$cell" >> "$OUT/ncu.log" 2>&1
  echo "$v $cell exit $?"
done; done
step done
