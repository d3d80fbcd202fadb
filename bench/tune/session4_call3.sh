#!/usr/bin/env bash
# Session 4, device call 3 (carry: .bundle .gl build-var6): the sm90 defaults with O's TMA store (d128 causal, d256)
# and the per-consumer barrier fix. Build first (here):
#   cmake --build build -j2 && bash bench/make_bundle.sh build .bundle &&
#   tests/cuda/build_variants.sh build-var6 'otma=-DFT_SM90_OTMA=1' && rm -rf build-var6/obj
# 1. Correctness: tile_tests; sm90_check on every launch mode; memcheck and racecheck; the OTMA-everywhere variant
#    (d64's three consumers, which shared one named barrier in session 4 call 1 and failed under racecheck) under
#    racecheck and plain; the library's conformance suite on the CUDA backend.
# 2. The full sm90 grid with cuDNN and FA2 measured in the same call.
# Sequential, ~300 s, files under $OUT: main.log, checks.log, grid.log, tile.log, conformance.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "correctness"
timeout 60 .bundle/tile_tests > "$OUT/tile.log" 2>&1; echo "tile_tests exit $?"; tail -3 "$OUT/tile.log"
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
ck compute-sanitizer --tool racecheck .bundle/sm90_check --quick --no-bench --ctas 5
ck compute-sanitizer --tool memcheck .bundle/sm90_check --quick --no-bench --ctas -1
ck compute-sanitizer --tool racecheck build-var6/sm90_check_otma --quick --no-bench --ctas 5
for ctas in 0 5 7 -1; do ck build-var6/sm90_check_otma --no-bench --ctas $ctas; done
ck .bundle/cuda_sm80_check --no-time
grep -E "^==|passed|FAIL|ERROR|hazard" "$OUT/checks.log"
timeout 120 .bundle/flashtile_tests --ft-backend=cuda -tc='conformance*' > "$OUT/conformance.log" 2>&1
echo "cuda conformance exit $?"; grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
step "grid"
g .bundle/sm90_check --bench-only --grid
FT_PEERS_TIMEOUT=120 peers_grid
step done
