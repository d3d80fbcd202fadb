#!/usr/bin/env bash
# Session 23 call 4 (~150 s; carry .bundle .bundle-s23 .gl). Call 3 ran land (kLazy 3's repair after the P·V in
# flight, no spills) at 1.025/1.032x main and sum64 (the repair inside step; d64 spilling) at 1.030/1.040x, d128 up
# to 3-4% apart in single cells. Three more interleaved runs of each head dim's grid decide between the two forms.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
cp "$FT_BUNDLE"/sm90_check .bundle-s23/sm90_check_land
step "grid A/B by head dim"
for rep in 1 2 3; do for d in 64 128 256; do for v in land sum64; do
  g .bundle-s23/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
step done
