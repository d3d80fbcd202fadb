#!/usr/bin/env bash
# Session 30's first call (~330 s; carry .bundle-s30 .gl; bench/tune/session30_build.sh builds it).
# l4: d64 in lazy mode 4 (-DFT_SM90_LAZY=4): l from the P·V on the tensor cores (tile::mma_AB_rowsum, m64n72k16
# against V and an all-ones tile) instead of one FADD a score, and the fast check on P's exponent bits (one OR a pair)
# against a reference 7 above the row max. base: the same tree without the flag (its d64 kernels byte-identical to
# main's, tests/cuda/cubin_text_diff.py).
# 1. tile_tests (mma_AB_rowsum's test among them), smoke of l4, racecheck --tiny, its full sm90_check.
# 2. d64's grid three times, base and l4 interleaved; the peers' d64 grid after.
# What to read: bench/tune/ab_grid.py grid.log land.
# Files: main.log checks.log grid.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_BUNDLE=.bundle-s30
. "$(dirname "$0")/device_env.sh"
ck .bundle-s30/tile_tests
grep -E "^==|^exit|test cases|FAIL|ERROR" "$OUT/checks.log"
smoke_some .bundle-s30 l4
for v in $vs; do san 150 racecheck .bundle-s30/sm90_check_$v --tiny --no-bench; done
vary .bundle-s30 3 --grid-d 64
step "peers"
FT_PEERS_TIMEOUT=120 peers_grid --grid-d 64
step done
