#!/usr/bin/env bash
# Session 24's call 4 (~330 s; carry .bundle .bundle-s24 .gl: main's build with d64's small kernel, and
# .bundle-s24/sm90_check_old, main before it, as in call 3). Call 3's grid had identical kernels 3-4% apart, so issue
# 4's table again: the whole grid three times interleaved, old against land, then the peers; then ncu's sections
# for d64 non-causal 512 (the farthest cell from FA2's 1.8x) on the small kernel.
# Files: main.log grid.log ncu.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
mkdir -p /tmp/land && cp .bundle-s24/sm90_check_old /tmp/land/sm90_check_main && cp "$FT_BUNDLE"/sm90_check /tmp/land/sm90_check_land
ab3 /tmp/land main land
step "ncu"
S="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
S="$S --section InstructionStats --section LaunchStats --section Occupancy"
echo "######## d64nc512 (64,512,0)" >> "$OUT/ncu.log"
timeout 60 ncu --clock-control none --launch-skip 4 --launch-count 1 $S --kernel-name regex:sm90_fwd \
  "$FT_BUNDLE"/sm90_check --bench-only --cell 64,512,0 >> "$OUT/ncu.log" 2>&1
echo "ncu exit $?"
grep -E "Duration|SM Frequency|Executed Ipc A|Issue Slots Busy|No Eligible|Waves Per SM|Grid Size" "$OUT/ncu.log" | head
step done
