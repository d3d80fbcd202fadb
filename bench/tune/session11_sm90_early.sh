#!/usr/bin/env bash
# A session-11 experiment (~330 s): sm90 with O's rescale issued early (FT_SM90_EARLY_RESCALE=1, Sm90Config::
# early_rescale), as FlashAttention-3 orders it. O is scaled by the previous block's factor just before that block's
# P·V is issued, while this block's Q·Kᵀ runs, instead of after the P·V completes (between its end and the next issue).
# The d128 non-causal 16k bar is 650 against 640 (session 8 call 4).
# Build here first (~5 min): rm -rf build-var23 && tests/cuda/build_variants.sh build-var23 'base=' \
#   'early=-DFT_SM90_EARLY_RESCALE=1'   (session 10 built it, objects removed: no spills, no ptxas wgmma warnings)
# run(carry=[".bundle", ".gl", "build-var23"], timeout_s=560, command='bash bench/tune/session11_sm90_early.sh')
# 1. sm90_check of early on three launch modes; racecheck on --tiny last.
# 2. The whole grid twice interleaved, base against early (bench/tune/ab_grid.py grid.log base), then peers.
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
B=build-var23
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck $B/sm90_check_early --no-bench --ctas $ctas; done
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
ab $B base early
FT_PEERS_TIMEOUT=120 peers_grid
step "sanitizers"
san 90 racecheck $B/sm90_check_early --tiny --no-bench --ctas 5
san 45 memcheck $B/sm90_check_early --tiny --no-bench --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY" "$OUT/checks.log"
step done
