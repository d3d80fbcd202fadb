#!/usr/bin/env bash
# Session 22's fourth call (carry .bundle .bundle-main .gl): the landing of lazy rescaling mode 2 in every head dim
# (row maxima checked lane by lane before any shuffle; the lanes' reductions as balanced trees).
#  - Checks of the library as landed (.bundle): tile_tests (a partial row max/sum case over 176 columns); sm90_check;
#    racecheck and memcheck --tiny; cuda_sm80_check (its row reductions are the same trees); the conformance suite on
#    the CUDA paths.
#  - land (.bundle) against main (.bundle-main: the kernels before), the whole grid twice interleaved, then the peers:
#    issue 4's same-call table; then the sustained probe of the landed library (energy per launch).
# Files: main.log checks.log conformance.log grid.log probe.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
library_checks
land_ab .bundle-main/sm90_check_main
step "sustained probe"
FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so timeout 60 python3 bench/tune/sustained_probe.py --n 100 \
  2>&1 | grep -v -i warn > "$OUT/probe.log"
echo "probe exit ${PIPESTATUS[0]}"; cat "$OUT/probe.log"
step done
