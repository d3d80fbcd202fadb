#!/usr/bin/env bash
# Session 30 call 5 (~150 s; carry .bundle .bundle-main .gl): ncu of one launch (the fifth, clocks not locked) of d64
# non-causal 1k (the small kernel) and 4k (the short kernel), two of the cells still under FA2's 1.8x: land (lazy
# mode 4, its timed launches without the LSE) against main (c5a6071: mode 3). Pipe utilization, warp states, issue
# slots and the instruction mix (InstructionStats), to say what mode 4 moved and what bounds these cells now.
# Files: main.log ncu.log
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section InstructionStats --section LaunchStats"
for cell in 64,1024,0 64,4096,0; do for v in land main; do
  bin=.bundle/sm90_check; [ "$v" = main ] && bin=.bundle-main/sm90_check_main
  echo "######## $v ($cell)" >> "$OUT/ncu.log"
  timeout 90 ncu --clock-control none --launch-skip 4 --launch-count 1 $s --kernel-name regex:sm90_fwd \
    "$bin" --bench-only --cell "$cell" >> "$OUT/ncu.log" 2>&1
  echo "$v $cell exit $?"
done; done
step done
