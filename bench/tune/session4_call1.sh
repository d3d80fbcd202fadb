#!/usr/bin/env bash
# Session 4, device call 1 (results: bench/results/2026-11-29_h200_session4/call1). Built from commit 85952e1 (~4 min):
#   tests/cuda/build_variants.sh build-var5 'base=' 'otma=-DFT_SM90_OTMA=1' 'chain=-DFT_SM90_CFG128="2:128:2:1:2"' \
#     'two=-DFT_SM90_CFG64="1:128:2:1:1" -DFT_SM90_CFG128="1:64:2:1:1"' 'two80=-DFT_SM90_CFG128="1:80:2:1:1"' \
#     && rm -rf build-var5/obj && cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
# then run(carry=[".bundle", ".gl", "build-var5"], timeout_s=480, command='bash bench/tune/next_call_cuda.sh').
# Sequential, ~400 s, 4 files under $OUT (main.log, grid.log, checks.log, tile.log).
# 1. Correctness first, none of these has run on the H200:
#    - otma: the TMA store of O staged in the Q buffer (FT_SM90_OTMA), with racecheck (shared-memory reuse);
#    - chain: chained tiles at N=128 with many tiles per CTA (--ctas 7) and one CTA per tile (--ctas -1);
#    - two, two80: one consumer, two CTAs per SM (Sm90Shape::kCtasPerSm), N=64/128 and N=80;
#    - tile_tests, with the register -> shared -> 64-row TMA store test.
# 2. Timing up to S=4096 (where the misses are) for the variants, the whole grid for base; cuDNN/FA2 in the same
#    call. Adopt otma if it does not lose; the chain only for d128 non-causal S <= 2048 (DEVELOPERS.md); two-CTA
#    configs where they win.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=80
. "$(dirname "$0")/device_env.sh"
V=build-var5
step "correctness"
timeout 60 .bundle/tile_tests > "$OUT/tile.log" 2>&1; echo "tile_tests exit $?"; tail -4 "$OUT/tile.log"
ck() { echo "== $*" >> "$OUT/checks.log"; timeout 120 "$@" 2>&1 | grep -v "^ok " | tail -4 >> "$OUT/checks.log"; }
for v in otma chain two two80; do
  for ctas in 0 7 -1; do ck $V/sm90_check_$v --no-bench --ctas $ctas; done
done
ck compute-sanitizer --tool racecheck $V/sm90_check_otma --quick --no-bench --ctas 5
ck compute-sanitizer --tool memcheck $V/sm90_check_two --quick --no-bench
grep -E "^==|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
step "grid"
g $V/sm90_check_base --bench-only --grid
for v in otma chain two two80; do g $V/sm90_check_$v --bench-only --grid --grid-smax 4096; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
