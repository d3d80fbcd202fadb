#!/usr/bin/env bash
# Session 21's fifth call (~150 s; carry .bundle .gl): which cells run at the power cap, and flashtile's and cuDNN's
# energy per launch there (bench/tune/sustained_probe.py --n 100: durations, SM clock, power, clock-event reasons,
# NVML energy), on five cells of issue 4's grid. Call 2 found d128 non-causal 16k at the SW power cap (1710 MHz
# against 1980 in one launch) for both.
# Files: main.log probe.log.
set -u
FT_LOG=main.log
. "$(dirname "$0")/device_env.sh"
# CELL:N, N launches back to back: about 0.35 s at every length (the grid times 70 launches after 100 ms of warm-up)
for cn in 128,16384,0:100 64,16384,0:100 64,4096,1:400 128,16384,1:120 256,16384,0:100 128,2048,0:600; do
  cell=${cn%%:*} n=${cn#*:}
  step "probe $cell"
  echo "== cell $cell" >> "$OUT/probe.log"
  FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so timeout 60 python3 bench/tune/sustained_probe.py --cell "$cell" \
    --n "$n" 2>&1 | grep -v -i warn >> "$OUT/probe.log"
  echo "probe exit ${PIPESTATUS[0]}"
done
cat "$OUT/probe.log"
step done
