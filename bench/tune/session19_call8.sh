#!/usr/bin/env bash
# Session 19 call 8 (~150 s; carry .bundle-s19e .gl): d64's exponentials partly on the FMA pipe (FT_SM90_POLY=16/8/4:
# every N-th pair through tile::poly_exp2), retried on today's kernels (session 3: -3..9% at 4 and 8). d64 is the
# head dim under FA2's 1.8x bar, and the one whose softmax is bound by MUFU as much as its GEMMs by the tensor cores.
# sm90_check --quick of p8, then d64's grid three times interleaved (base: the landed kernels, the same build script).
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60 FT_BUNDLE=.bundle-s19e
. "$(dirname "$0")/device_env.sh"
ck .bundle-s19e/sm90_check_p8 --quick --no-bench
step "d64 A/B"
for rep in 1 2 3; do for v in base p16 p8 p4; do g .bundle-s19e/sm90_check_$v --bench-only --grid --grid-d 64; done; done
step done
