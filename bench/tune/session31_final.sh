#!/usr/bin/env bash
# Session 31's third call (~400 s; carry .bundle .gl): issue 4's checks and its table on main's build (cmake --build
# build -j2 && bash bench/make_bundle.sh build .bundle), with each peer measured three times in the same call.
# 1. library_checks: smoke, tile_tests, sm90_check, racecheck and memcheck --tiny, the sm80 check, conformance on
#    both CUDA paths.
# 2. Three rounds of the whole grid, ours (sm90_check --grid) then the peers (cuDNN, FA2): issue 4's table from the
#    means of each (bench/tune/issue4_table.py grid.log land).
# 3. ncu (sections only, one launch each, clocks not locked) of the cells that missed FA2's 1.8x in session 30.
# Files: main.log checks.log conformance.log grid.log ncu.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=120
. "$(dirname "$0")/device_env.sh"
library_checks
mkdir -p /tmp/land && cp .bundle/sm90_check /tmp/land/sm90_check_land
for rep in 1 2 3; do
  step "grid round $rep"
  g /tmp/land/sm90_check_land --bench-only --grid
  FT_PEERS_TIMEOUT=150 peers_grid
done
step "ncu"
s="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
s="$s --section InstructionStats --section LaunchStats --section MemoryWorkloadAnalysis"
for cell in 64,512,0 64,1024,0 64,4096,0 128,512,0 256,512,1; do
  echo "######## $cell" >> "$OUT/ncu.log"
  timeout 60 ncu --clock-control none --launch-skip 4 --launch-count 1 $s --kernel-name regex:sm90_fwd \
    .bundle/sm90_check --bench-only --cell "$cell" >> "$OUT/ncu.log" 2>&1
  echo "ncu $cell exit $?"
done
step done
