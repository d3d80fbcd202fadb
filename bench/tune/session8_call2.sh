#!/usr/bin/env bash
# Session 8, second device call (~260 s): per-consumer block ranges (kOwnBlocks, sm90_traits.hpp), with staged O on
# by default since call 1. Each consumer skips the K/V blocks its own 64 rows do not need: the causal diagonal's
# masked part where kBlockM > kBlockN (d64: 192 x 128), and all but one block where its rows are past Sq (d64 at
# 512 and 1k: 512 = 2 x 192 + 128). d128 (pingpong) and d256 (spills) are built without it, byte-identical to head.
# Build here first (repo root): rm -rf build-var20 && tests/cuda/build_variants.sh build-var20 \
#   'head=-DFT_SM90_OWN_BLOCKS=0' 'own=' 'own256=-DFT_SM90_OWN_BLOCKS=1' 'n64=-DFT_SM90_CFG128="2:64:4:2"'
# run(carry=[".bundle", ".gl", "build-var20"], timeout_s=400, command='bash bench/tune/session8_call2.sh')
# 1. sm90_check of own on every launch mode, own256 (d256 with the skip: its kernels spill 32-52 bytes) and n64
#    (d128 with 64-key blocks, 4 stages, pingpong: less of the causal diagonal masked) quick.
# 2. Grid A/B, twice interleaved: own vs head at d64; own256 vs head at d256; n64 vs head at d128 (read its causal
#    rows: its non-causal kernel changed as well).
# 3. racecheck / memcheck on --tiny (its 257-row cases skip 7 of 8 blocks in a consumer past Sq, more than the ring).
# Files: main.log checks.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=60
B=build-var20
. "$(dirname "$0")/device_env.sh"
step "checks"
for ctas in 0 7 -1; do ck $B/sm90_check_own --no-bench --ctas $ctas; done
ck $B/sm90_check_own256 --no-bench --quick --ctas 0
ck $B/sm90_check_n64 --no-bench --quick --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  for v in head own; do g $B/sm90_check_$v --bench-only --grid --grid-d 64; done
  for v in head own256; do g $B/sm90_check_$v --bench-only --grid --grid-d 256; done
  for v in head n64; do g $B/sm90_check_$v --bench-only --grid --grid-d 128; done
done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step "sanitizers"
san 60 racecheck $B/sm90_check_own --tiny --no-bench --ctas 5
san 60 racecheck $B/sm90_check_own --tiny --no-bench --ctas -1
san 60 memcheck $B/sm90_check_own --quick --no-bench --ctas 0
san 60 racecheck $B/sm90_check_own256 --tiny --no-bench --ctas 5
grep -E "^==|^exit|passed|FAIL|ERROR|hazard|SUMMARY" "$OUT/checks.log"
step done
