#!/usr/bin/env bash
# Measured in session 18 call 1 (bench/results/2026-11-30_h200_session18): rejected, d64 causal 512 -1.8%, 2k -2.2%.
# Ready for session 18 (~230 s; carry .bundle .bundle-pv .gl): apply bench/tune/session18_narrow_pv.patch (branch
# wip/s18-narrow-pv in the session-17 repo) on a branch. Narrow first blocks'
# P·V: a consumer whose first block is narrow (session 17: d64 causal short kernel, 64 of 128 keys) also issues that
# block's P·V over its first 64 keys. The P·V goes out from the narrow path itself: block 1's step, or the tile's last
# P·V where the tile has one block. A run-time k-step count inside the main loop serialized every wgmma (session 17).
# With desc_add this compiles without spills or serialization (the first form spilled 72 bytes at d64).
# Variants (build on that branch, here):
#   bash tests/cuda/build_variants.sh .bundle-pv 'off=' 'pv=-DFT_SM90_NARROW_PV=1' \
#     'pv128=-DFT_SM90_NARROW_PV=1 -DFT_SM90_NARROW=64' && rm -rf .bundle-pv/obj
#   off: the branch with the experiment off. Its block/last lambdas change the staged-O kernels' code (d64/d128
#   non-causal short), so it checks that they stay neutral. pv: d64. pv128: d64 and d128 causal short kernels.
#   .bundle: main's library (its sm90_check is the baseline, "main").
# run(carry=[".bundle", ".bundle-pv", ".gl"], timeout_s=400, command='bash bench/tune/session18_narrow_pv.sh')
# Analyse: bench/tune/ab_grid.py grid.log main. Files: main.log checks.log grid.log. Before landing: a tile_tests case
# for mma_AB_rows (the kernel body is at its 200-line limit on the branch).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
for v in off pv pv128; do ck .bundle-pv/sm90_check_$v --no-bench; done
san 150 racecheck .bundle-pv/sm90_check_pv128 --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|hazard" "$OUT/checks.log"
mkdir -p /tmp/s18 && cp "$FT_BUNDLE"/sm90_check /tmp/s18/sm90_check_main && cp .bundle-pv/sm90_check_* /tmp/s18/
ab /tmp/s18 main off pv pv128
step "d64/d128 third run"
for d in 64 128; do for v in main off pv pv128; do g /tmp/s18/sm90_check_$v --bench-only --grid --grid-d $d; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
