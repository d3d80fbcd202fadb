#!/usr/bin/env bash
# Session 23 call 5 (~200 s; carry .bundle .bundle-s23 .gl). Call 4 (three interleaved runs a head dim) put sum64
# (kLazy 3's repair inside step) 0.6-0.7% ahead of land (repair after the P·V, no spills), up to 3.4% at d128 causal
# 4k/8k and non-causal 2k/4k: with the repair's branch between the P·V's wait and P's conversion, ptxas converts P
# only after the wait. land2 converts P first and again in the rare repair. Checks of land2 (the bundle), then each
# head dim's grid three times interleaved: land2, sum64, land.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke "$FT_BUNDLE"/sm90_check
sm90_checks
step "grid A/B by head dim"
for rep in 1 2 3; do for d in 64 128 256; do for v in land2 sum64 land; do
  g .bundle-s23/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
step done
