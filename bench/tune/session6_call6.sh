#!/usr/bin/env bash
# Session 6, device call 6 (carry: .bundle .gl build-var16/sm90_check_head; ~190 s). Call 5 found the per-tile cost
# of persistent launches in the epilogue's 4-byte O stores (no O stores: d128 non-causal 512 +29%). The library now
# stores O with 16-byte stores after quad shuffles (tile::store_scaled_v16) in its direct-store kernels: tile tests,
# sm90_check on every launch mode, CUDA conformance, then the grid against call 5's head twice interleaved, peers.
# Files: main.log checks.log conformance.log grid.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "checks"
ck .bundle/tile_tests
for ctas in 0 7 -1; do ck .bundle/sm90_check --no-bench --ctas $ctas; done
grep -E "^==|^exit|passed|FAIL|ERROR|test cases" "$OUT/checks.log"
conformance cuda
step "grid A/B"
for rep in 1 2; do
  g build-var16/sm90_check_head --bench-only --grid
  g .bundle/sm90_check --bench-only --grid
done
FT_PEERS_TIMEOUT=120 peers_grid
step done
