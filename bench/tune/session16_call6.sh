#!/usr/bin/env bash
# Session 16, call 6 (carry .bundle .bundle-main .bundle-v4 .gl): the landing, as call 4 with d128 causal persistent to
# 1k in head groups of 4 (call 5).
#  - Checks of the library as landed (.bundle): tile_tests; sm90_check; racecheck and memcheck --tiny; the conformance
#    suite on cuda_sm90 and cuda_sm80.
#  - land (.bundle: shifted rows at d64 causal; Q prefetch and N = 128 in d128's non-causal short kernel; a d256
#    causal short kernel with N = 64 to 512) against main (HEAD's kernels), the whole grid twice interleaved, then the
#    peers: issue 4's same-call table.
#  - d64 causal 512 (persistent, m-major) in head groups of 4 and 8 (pers: FT_SM90_PERSISTENT=1, --head-group N),
#    twice interleaved (pers.log).
# Files: main.log checks.log conformance.log grid.log pers.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
land_ab .bundle-main/sm90_check_main
step "d64 causal 512 in head groups"
FT_BIN_land=/tmp/land/sm90_check_land FT_BIN_pers=.bundle-v4/sm90_check_pers
cell_runs 2 "64,512,1" "land" "pers --head-group 4" "pers --head-group 8"
grep "^bench\|^==" "$OUT/pers.log"
step done
