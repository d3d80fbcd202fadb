#!/usr/bin/env bash
# Session 8, third device call (~120 s): where per-consumer block ranges pay at d64. Call 2 had them +4.6/+6.9% causal
# at 512/1k and +1.3/+3.2% non-causal, but -5% causal at 8k/16k, where a consumer skips one block in ~64. own2k skips
# only while seqlen_k <= 2048 (the same code, a runtime limit): if it keeps 8k/16k at head's speed, the loss came from
# the skip itself (the consumers out of step on the shared ring), else from the code (ptxas).
# Build here first: rm -rf build-var21 && tests/cuda/build_variants.sh build-var21 'head=-DFT_SM90_OWN_MAX_SK=0' \
#   'own=' 'own2k=-DFT_SM90_OWN_MAX_SK=2048'
# run(carry=[".bundle", ".gl", "build-var21"], timeout_s=300, command='bash bench/tune/session8_call3.sh')
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
B=build-var21
. "$(dirname "$0")/device_env.sh"
step "checks"
ck $B/sm90_check_own2k --no-bench --quick --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2 3; do for v in head own own2k; do g $B/sm90_check_$v --bench-only --grid --grid-d 64; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step done
