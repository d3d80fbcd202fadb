#!/usr/bin/env bash
# Session 30's fourth call (~330 s; carry .bundle .bundle-main .gl), the landing of lazy mode 4 at d64 after call 3's
# conformance failure: calls with an LSE now run d64's kernels in mode 3 (Sm90Kind::small_lse / short_lse), since
# mode 4's l sums P after its rounding to bf16 and put the LSE up to 1.07e-3 off (conformance allows 1e-3).
# .bundle: the tree (cmake --build build -j2 && bash bench/make_bundle.sh build .bundle); .bundle-main/sm90_check_main:
# c5a6071's sm90_check (main's kernels; its timed launches write the LSE, land's do not, as in a model's forward).
# 1. library_checks of .bundle: smoke, tile_tests, sm90_check (every d64 case both with the LSE and without, the LSE
#    now within 1e-3 as in conformance), racecheck and memcheck --tiny, the sm80 check, conformance on both CUDA paths
#    (a case whose call without the LSE plans another kernel runs that one too).
# 2. The whole grid twice, main and land interleaved, then the peers (issue 4's table: bench/tune/issue4_table.py
#    grid.log land); then d64's grid twice more, interleaved.
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=120
. "$(dirname "$0")/device_env.sh"
library_checks
land_ab .bundle-main/sm90_check_main
step "d64 twice more"
for rep in 1 2; do for v in main land; do g /tmp/land/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
