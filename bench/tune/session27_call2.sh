#!/usr/bin/env bash
# Session 27's second call (~330 s; carry .bundle .bundle-cand .gl). .bundle: main (729ba37's kernels, "old").
# .bundle-cand: d64 non-causal past 4096 keys on its main kernel in clusters of two (Sm90Config::cluster at d64,
# short_max_sk 4096), and sm90_check's new d64 cluster cases.
# 1. library_checks of .bundle-cand (smoke, tile_tests, sm90_check, racecheck and memcheck --tiny, sm80, conformance).
# 2. The whole grid twice and d64's grid twice more, old and cand interleaved; then the peers' whole grid.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-cand
. "$(dirname "$0")/device_env.sh"
library_checks
mkdir -p /tmp/ab && cp .bundle/sm90_check /tmp/ab/sm90_check_old && cp .bundle-cand/sm90_check /tmp/ab/sm90_check_cand
step "grid A/B"
for rep in 1 2; do for v in old cand; do g /tmp/ab/sm90_check_$v --bench-only --grid; done; done
for rep in 1 2; do for v in old cand; do g /tmp/ab/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid
step done
