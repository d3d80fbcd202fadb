#!/usr/bin/env bash
# Session 4, device call 4 (carry: build-var7 .gl): O's TMA store against direct stores in the same call, over the
# whole grid, twice interleaved (call 3's long causal cells looked slower than call 1's direct-store figures, and
# d256 spills 28-52 bytes with the TMA store). build-var7: sm90_check_otma (the defaults) and sm90_check_direct
# (-DFT_SM90_OTMA=0). Files: main.log, grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "grid A/B"
for rep in 1 2; do
  g build-var7/sm90_check_direct --bench-only --grid
  g build-var7/sm90_check_otma --bench-only --grid
done
step done
