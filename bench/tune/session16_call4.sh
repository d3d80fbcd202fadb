#!/usr/bin/env bash
# Session 16, call 4 (carry .bundle .bundle-main .bundle-v4 .gl): the landing.
#  - Checks of the library as landed (.bundle): tile_tests; sm90_check; racecheck and memcheck --tiny; the conformance
#    suite on cuda_sm90 and cuda_sm80.
#  - land (.bundle: shifted rows at d64 causal; Q prefetch and N = 128 in d128's non-causal short kernel; a d256
#    causal short kernel with N = 64 to 512) against main (HEAD's kernels), the whole grid twice interleaved, then the
#    peers: issue 4's same-call table.
#  - Persistent causal launches in head groups: pers (FT_SM90_PERSISTENT=1: every launch persistent; d128 causal
#    runs its Q-prefetch short kernel at every length) with the default m-major order and with --head-group 8,
#    against land's dispatched launch, causal 1k/2k/4k, twice interleaved (pers.log).
# Files: main.log checks.log conformance.log grid.log pers.log
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
sm90_checks
conformance cuda
land_ab .bundle-main/sm90_check_main
step "persistent head groups"
FT_BIN_land=/tmp/land/sm90_check_land FT_BIN_pers=.bundle-v4/sm90_check_pers
cell_runs 2 "$(for d in 64 128 256; do for s in 1024 2048 4096; do printf '%s ' $d,$s,1; done; done)" \
  "land" "pers" "pers --head-group 8"
grep -c "^bench" "$OUT/pers.log"
step done
