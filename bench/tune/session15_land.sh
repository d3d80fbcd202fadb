#!/usr/bin/env bash
# Session 15, call 5 (~250 s; carry .bundle, .bundle-s15b and .gl; nothing to build): the Q-prefetch short kernels
# (d64 causal to 1k: Q double-buffered, O by TMA through the Q buffer; d128 causal 512: the same, persistent).
#  - Checks: tile_tests; sm90_check from the library build (new: short causal tiles past the SM count, d128 causal at
#    512/513 keys); racecheck and memcheck --tiny; the conformance suite on cuda_sm90 and cuda_sm80.
#  - The grid: land (this branch, tests/cuda/build_variants.sh) against base (main's kernels), twice interleaved,
#    then cuDNN and FA2 (issue 4's table: bench/tune/parse_grid.py grid.log).
# run(carry=[".bundle", ".bundle-s15b", ".gl"], timeout_s=420, command='bash bench/tune/session15_land.sh')
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
ab "$PWD"/.bundle-s15b base land
FT_PEERS_TIMEOUT=100 peers_grid
step done
