#!/usr/bin/env bash
# Session 20 call 3 (~400 s; build: bench/tune/session20_build3.sh; carry .bundle .bundle-s20b .gl): clusters of two
# for the main non-causal kernel (Sm90Config::cluster: each CTA loads half of every K/V block, multicast into both;
# static order of tile pairs). FlashAttention-3 clusters d >= 128 non-causal the same way. Call 2's ncu ran d128
# non-causal 16k at 705 TFLOP/s in one launch (77% tensor pipe, 49% L2 throughput) against 625-632 sustained.
#   nocl  -DFT_SM90_CLUSTER=0 (main's kernels)   cl  the library's default (d128 non-causal main kernel, past 4k keys)
#   cl256 -DFT_SM90_CLUSTER=128 (d256 non-causal's main kernel too, from 1k keys)
# A smoke test first (the cluster tile test, sm90_check --tiny, 60 s limits) stops the call if they hang or fail.
# Then the library's checks (tile_tests, sm90_check, racecheck and memcheck --tiny), cl256's sm90_check and
# racecheck, conformance on both CUDA paths, the whole grid three times interleaved, the peers.
# Files: main.log checks.log conformance.log grid.log (FT_SASS=1: sass_cl.txt.gz, cl's SASS).
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
step "smoke"
timeout 60 "$FT_BUNDLE"/tile_tests -tc='*cluster*' 2>&1 | tail -4; r1=${PIPESTATUS[0]}
timeout 60 .bundle-s20b/sm90_check_cl256 --tiny --no-bench 2>&1 | tail -4; r2=${PIPESTATUS[0]}
echo "smoke: tile_tests $r1, sm90_check_cl256 --tiny $r2"
if [ "$r1" != 0 ] || [ "$r2" != 0 ]; then
  timeout 60 .bundle-s20b/sm90_check_nocl --tiny --no-bench 2>&1 | tail -3
  step "stopped"; exit 0
fi
[ -n "${FT_SASS:-}" ] && cuobjdump -sass .bundle-s20b/sm90_check_cl 2>/dev/null | gzip > "$OUT/sass_cl.txt.gz"
sm90_checks
variant_checks .bundle-s20b cl256 cl256
conformance cuda
ab .bundle-s20b nocl cl cl256
step "third run"
for v in nocl cl cl256; do g .bundle-s20b/sm90_check_$v --bench-only --grid; done
FT_PEERS_TIMEOUT=100 peers_grid
step done
