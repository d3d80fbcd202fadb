#!/usr/bin/env bash
# Session 29's second call (~220 s; carry .bundle .bundle-s29 .gl), a landing that did not land. .bundle: 37a726f
# with bench/tune/session29_groups.patch applied (d64 causal's grouped small kernel from 513 keys), built by
# cmake --build build -j2 && bash bench/make_bundle.sh build .bundle. .bundle-s29/sm90_check_land: call 1's land
# (main's kernels: d64's cubins byte-identical to 37a726f's, d128's too, d256's non-causal main kernel with 15
# instructions reordered).
# 1. library_checks of .bundle: smoke, tile_tests, sm90_check, racecheck and memcheck --tiny, the sm80 check,
#    conformance on both CUDA paths.
# 2. The whole grid twice, main (call 1's land) and land interleaved, then the peers (issue 4's table:
#    bench/tune/issue4_table.py grid.log land); then d64's grid twice more, interleaved (the grouped cells: causal 1k/2k).
# Files: main.log checks.log conformance.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=120
. "$(dirname "$0")/device_env.sh"
library_checks
land_ab .bundle-s29/sm90_check_land
step "d64 twice more"
for rep in 1 2; do for v in main land; do g /tmp/land/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
