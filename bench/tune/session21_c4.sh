#!/usr/bin/env bash
# Session 21's third call (~260 s; build below; carry .bundle-c4 .gl). Clusters of four for the non-causal main
# kernels (d128 past 4k keys, d256 past 4k): each CTA multicasts a quarter of every K/V block (176 keys: 16-row boxes,
# 2-3 a CTA) into all four, halving L2-to-SM traffic again. Calls 1-2 showed the sustained grid is power-capped
# (nvidia-smi: SW power cap, 1710 MHz against 1980 in one launch) and the tail split lost: at the cap, only work per
# joule counts, and the clusters of two (+2-3%) cut data movement.
#   build: bash tests/cuda/build_variants.sh .bundle-c4 'main=' (main's tree) 'base=' 'c4=-DFT_SM90_CLUSTER_SIZE=4'
# A smoke test (sm90_check --tiny of c4) stops the call on a hang; then sm90_check of base and c4, racecheck --tiny of
# c4, the whole grid three times interleaved (main, base, c4), the peers.
# Files: main.log checks.log grid.log.
# Ran as session 21 call 3 (rejected: 8k/16k -5..10%); c4 needs `git apply bench/tune/session21_cluster4.patch`.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
smoke .bundle-c4/sm90_check_c4
variant_checks .bundle-c4 c4 base c4
ab3 .bundle-c4 main base c4
step done
