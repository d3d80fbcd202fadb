#!/usr/bin/env bash
# Session 22's fifth call (carry .bundle .bundle-main .gl): call 4 again on main as landed, which adds the cached
# cluster occupancy (sm90_run asks once per device and instantiation) to lazy rescaling mode 2 in every head dim
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
smoke "$FT_BUNDLE"/sm90_check
sm90_checks
ck "$FT_BUNDLE"/cuda_sm80_check
grep -A3 "cuda_sm80_check" "$OUT/checks.log" | grep -E "passed|FAIL|exit"
conformance cuda
land_ab .bundle-main/sm90_check_main
step "sustained probe"
FLASHTILE_LIBRARY=$PWD/.bundle/libflashtile.so timeout 60 python3 bench/tune/sustained_probe.py --n 100 \
  2>&1 | grep -v -i warn > "$OUT/probe.log"
echo "probe exit ${PIPESTATUS[0]}"; cat "$OUT/probe.log"
step done
