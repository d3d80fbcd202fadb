#!/usr/bin/env bash
# Ran as session 5's call 1 (through next_call_all.sh; bench/results/2026-11-30_h200_session5). Build first (~2 min):
#   cmake --build build -j2 && bash bench/make_bundle.sh build .bundle &&
#   tests/cuda/build_variants.sh build-var8 'direct=-DFT_SM90_OTMA=0' 'otma=' && rm -rf build-var8/obj
# then run(carry=[".bundle", ".gl", "build-var8"], timeout_s=420, command='bash bench/tune/next_call_cuda.sh').
# 1. The committed defaults (O's TMA store for d128 causal and d256, spill-free again) checked: sm90_check on every
#    launch mode, racecheck, memcheck.
# 2. TMA store against direct stores over the whole grid, twice interleaved (call 4's method), and cuDNN/FA2 in the
#    same call: does d256 causal keep call 1's +4..14% (512-4k) and hold at 8k-16k now that the spill is gone?
# Sequential, ~250 s; files: main.log, checks.log, grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "correctness"
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas 5
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas -1
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  g build-var8/sm90_check_direct --bench-only --grid
  g build-var8/sm90_check_otma --bench-only --grid
done
FT_PEERS_TIMEOUT=120 peers_grid
step done
