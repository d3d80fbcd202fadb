#!/usr/bin/env bash
# Session 23 call 7 (~170 s; build: tests/cuda/build_variants.sh .bundle-s23 'poly8=-DFT_SM90_POLY=8'
# 'poly16=-DFT_SM90_POLY=16'; carry .bundle .bundle-s23 .gl). With kLazy 3 the FMNMX per element is gone, so the FMA
# and ALU pipes have room again: every 8th or 16th pair of exponentials on the FMA pipe (tile::poly_exp2, which now
# saturates past 2^128 instead of wrapping), against land (all ex2). Lost 3-9% at 4 and 8 in session 3, and in
# session 21 call 4. Their --tiny checks first (the jump cases send scores past 2^128 through poly_exp2), then each
# head dim's grid twice interleaved.
# Files: main.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-s23/sm90_check_poly8 .bundle-s23/sm90_check_poly16
cp "$FT_BUNDLE"/sm90_check .bundle-s23/sm90_check_land
step "grid A/B by head dim"
for rep in 1 2; do for d in 64 128 256; do for v in land poly8 poly16; do
  g .bundle-s23/sm90_check_$v --bench-only --grid --grid-d $d
done; done; done
step done
