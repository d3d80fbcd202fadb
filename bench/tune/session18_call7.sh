#!/usr/bin/env bash
# Session 18 call 7 (~130 s; carry .bundle .bundle-k .gl). Call 4's ncu: each consumer warp of d64's causal short
# kernel ran five rounds of tile-index divisions a tile (the keyless-tile scan up front, next()'s scan, the loop's
# tile, the epilogue's again). new: the scans run only where keyless tiles can exist (causal, Sq > Sk), and the
# epilogue takes the loop's tile. head: the committed library (0ab8816). Both built with tests/cuda/build_variants.sh
# (head from a worktree). Analyse: bench/tune/ab_grid.py grid.log head. Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
variant_checks .bundle-k new new
ab .bundle-k head new
step "third run"
for v in head new; do g .bundle-k/sm90_check_$v --bench-only --grid --grid-smax 2048; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
