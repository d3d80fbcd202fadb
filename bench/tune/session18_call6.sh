#!/usr/bin/env bash
# Session 18 call 6 (~170 s; carry .bundle .gl): the library as committed (call 3's candidate less the rejected
# experiments' macros): tile_tests, sm90_check, racecheck and memcheck --tiny, conformance on both CUDA paths, and
# d256's dispatched cells to 1k. Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
g "$FT_BUNDLE"/sm90_check --bench-only --grid --grid-d 256 --grid-smax 1024
grep "dispatched" "$OUT/grid.log"
step done
