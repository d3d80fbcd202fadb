#!/usr/bin/env bash
# Session 5, device call 2 (carry: .bundle .gl build-var9; build-var9 from tests/cuda/build_variants.sh build-var9
# 'pf0=-DFT_SM90_PREFETCH=0' 'pf1=-DFT_SM90_PREFETCH=1' 'pf2=-DFT_SM90_PREFETCH=2'
# 'pf2chain=-DFT_SM90_PREFETCH=2 -DFT_SM90_CFG128="2:128:2:1:2"').
# 1. sm90: an L2 prefetch of the next tile's Q (pf1), and of its Q and first K/V block (pf2), issued one tile ahead by
#    the producer. Short sequences lose ~1.4 block-times per tile, and Q (read once) always comes from HBM.
#    Correctness of the prefetch builds, then the grid twice interleaved, then cuDNN/FA2 in the same call.
# 2. coopmat2: Q re-read from shared memory (id 27, "qsh") instead of held in registers: d256 spills at 255 registers.
#    Conformance with qsh on, then d256/d128 tiles with and without it, two processes each.
# Files: main.log checks.log grid.log conformance.log vk.csv vk_out.log clocks.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100 FT_VK_DEADLINE=520
. "$(dirname "$0")/device_env.sh"
step "checks"
ck .bundle/tile_tests
ck build-var9/sm90_check_pf2 --no-bench --ctas 0
ck build-var9/sm90_check_pf2 --no-bench --ctas -1
ck build-var9/sm90_check_pf1 --no-bench --ctas 0
ck build-var9/sm90_check_pf2chain --no-bench --ctas 0
grep -E "^==|^exit|passed|FAIL|ERROR|test cases" "$OUT/checks.log"
step "grid A/B"
for rep in 1 2; do
  for v in pf0 pf1 pf2 pf2chain; do g build-var9/sm90_check_$v --bench-only --grid; done
done
FT_PEERS_TIMEOUT=120 peers_grid
step "coopmat2 qsh conformance"
FLASHTILE_VKCM2_OPT=aligned,narrow,fold,qsh FLASHTILE_VK_PATHS=vulkan_coopmat2 timeout 150 \
  .bundle/flashtile_tests --ft-backend=vulkan -tc='conformance*' >> "$OUT/conformance.log" 2>&1
echo "qsh conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/conformance.log"
step "coopmat2 tiles with qsh"
clocks_start
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid --path vulkan_coopmat2"
for rep in a b; do
  vk "d256_default_$rep" $B $common $(cells 256 "4096 16384" "0 1")
  for t in 64,32,128 64,64,128 64,32,256; do
    vk "d256_qsh_${t}_$rep" FLASHTILE_VK_PIPELINE_STATS=1 FLASHTILE_VKCM2_OPT=aligned,narrow,fold,qsh \
      FLASHTILE_VKCM2_TILE=$t $B $common $(cells 256 "4096 16384" "0 1")
  done
  vk "d128_default_$rep" $B $common $(cells 128 "1024 16384" "0 1")
  for t in 64,64,128 128,64,256; do
    vk "d128_qsh_${t}_$rep" FLASHTILE_VK_PIPELINE_STATS=1 FLASHTILE_VKCM2_OPT=aligned,narrow,fold,qsh \
      FLASHTILE_VKCM2_TILE=$t $B $common $(cells 128 "1024 16384" "0 1")
  done
done
grep "pipeline stats" "$OUT/vk_out.log" | sort | uniq -c
kill "$clk" 2>/dev/null
step done
