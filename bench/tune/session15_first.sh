#!/usr/bin/env bash
# Session 15's first call, ready (~250 s; carry .bundle, .bundle-s15 and .gl; nothing to build): the sm90 NaN fix of
# session 14 (b850149: a row whose first max was below -128 in the exp2 domain got NaN), which landed after that
# session's device time was spent.
#  - Checks: tile_tests; sm90_check from the library build (its 12 anti cases: q = 4, k = -4); racecheck --tiny; the
#    conformance suite on cuda_sm90 and cuda_sm80 (the "logits far below zero" case among them).
#  - The grid: fix (main at b850149 and later, whose kernels are the same) against s14 (3010a00, session 14's last
#    measured kernels), both tests/cuda/build_variants.sh builds in .bundle-s15, twice interleaved, with cuDNN and FA2
#    (issue 4's table: bench/tune/parse_grid.py grid.log).
# run(carry=[".bundle", ".bundle-s15", ".gl"], timeout_s=420, command='bash bench/tune/session15_first.sh')
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
ck "$FT_BUNDLE"/tile_tests
ck "$FT_BUNDLE"/sm90_check --no-bench
san 120 racecheck "$FT_BUNDLE"/sm90_check --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|test cases|hazard" "$OUT/checks.log"
conformance cuda
ab "$PWD"/.bundle-s15 s14 fix
FT_PEERS_TIMEOUT=100 peers_grid
step done
