#!/usr/bin/env bash
# Session 30's third call (~330 s; carry .bundle .bundle-main .bundle-s30c .gl), the landing of lazy mode 4 at d64.
# .bundle: the tree with Sm90Config::lazy_rescale 4 at d64 (cmake --build build -j2 && bash bench/make_bundle.sh
# build .bundle); .bundle-main/sm90_check_main: c5a6071's sm90_check (main's kernels). .bundle-s30c/sm90_check_c4:
# the same tree with d64 causal's small kernel to 4096 keys (DIMS=64 tests/cuda/build_variants.sh .bundle-s30c
# 'c4=-DFT_SM90_SMALL="64:1:4:64:8:4096"'; call 2 read causal 4k +1.2..2.9% in that kernel, within the noise).
# 1. library_checks of .bundle: smoke, tile_tests, sm90_check, racecheck and memcheck --tiny, the sm80 check,
#    conformance on both CUDA paths.
# 2. The whole grid twice, main and land interleaved, then the peers (issue 4's table: bench/tune/issue4_table.py
#    grid.log land); then d64's grid twice more, main, land and c4 interleaved.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=120
. "$(dirname "$0")/device_env.sh"
library_checks
land_ab .bundle-main/sm90_check_main
step "d64 twice more"
cp .bundle-s30c/sm90_check_c4 /tmp/land/sm90_check_c4
for rep in 1 2; do for v in main land c4; do g /tmp/land/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
