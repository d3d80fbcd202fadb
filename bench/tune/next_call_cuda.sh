#!/usr/bin/env bash
# NOT RUN YET: the CUDA tuning call planned for session 4 (DEVELOPERS.md, status). Build first, here (~3 min):
#   tests/cuda/build_variants.sh build-var5 'base=' 'otma=-DFT_SM90_OTMA=1' 'chain=-DFT_SM90_CFG128="2:128:2:1:2"' \
#     && rm -rf build-var5/obj && cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
# then run(carry=[".bundle", ".gl", "build-var5"], timeout_s=450, command='bash bench/tune/next_call_cuda.sh').
# Sequential, ~300 s, 4 files under $OUT (main.log, grid.log, checks.log, tile.log).
# 1. Correctness first: the TMA store of O (FT_SM90_OTMA, O staged in the Q buffer) and the chained tiles at N=128
#    with many tiles per CTA (--ctas 7) and one CTA per tile (--ctas -1), racecheck on both (shared-memory reuse),
#    and the tile test of the register -> shared -> 64-row TMA store path.
# 2. Timing: base, otma and chain on the grid, cuDNN/FA2 in the same call. Adopt otma if it does not lose; the
#    chain only for d128 non-causal S <= 2048 (second instantiation, DEVELOPERS.md), if it still wins there.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=80
. "$(dirname "$0")/device_env.sh"
V=build-var5
step "correctness"
timeout 60 .bundle/tile_tests > "$OUT/tile.log" 2>&1; echo "tile_tests exit $?"; tail -4 "$OUT/tile.log"
for v in otma chain; do
  for ctas in 0 7 -1; do
    echo "== $v --ctas $ctas" >> "$OUT/checks.log"
    timeout 90 $V/sm90_check_$v --no-bench --ctas $ctas 2>&1 | grep -v "^ok " | tail -4 >> "$OUT/checks.log"
  done
  echo "== $v racecheck" >> "$OUT/checks.log"
  timeout 120 compute-sanitizer --tool racecheck $V/sm90_check_$v --quick --no-bench --ctas 5 2>&1 | grep -v "^ok " \
    | tail -4 >> "$OUT/checks.log"
done
grep -E "^==|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
step "grid"
for v in base otma chain; do g $V/sm90_check_$v --bench-only --grid; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
