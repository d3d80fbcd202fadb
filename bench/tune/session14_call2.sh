#!/usr/bin/env bash
# Session 14 call 2 (~330 s; carry .bundle, .bundle-v14 and .gl: nothing to build on the device).
#  - sm90 with lazy rescaling at d256 (call 1: +1.5..6.1% in every d256 cell), as it lands (land: this tree's
#    defaults), against main's kernels (base), the whole grid twice interleaved, with cuDNN and FA2 from this call;
#    d256 with pingpong (pp, FT_SM90_CFG256="2:80:2:2") and with 64-key blocks (n64, "2:64:2:1") now that the
#    rescale is off the critical path, d256 only.
#  - Checks: sm90_check on land (spiky-keys cases included), racecheck and memcheck on --tiny; a mutation (mut: O
#    never rescaled once a row has keys) that the spiky-keys cases must fail; the library's conformance suite on
#    cuda_sm90 and cuda_sm80 (the new spiky-keys case among them).
#  - KHR d256 with id 29 = 3 (FLASHTILE_VKCM_OPT=3; call 1 saw +3.5% at 1k causal) against the default 0, both
#    causalities, 1k/4k/16k, twice interleaved.
# run(carry=[".bundle", ".bundle-v14", ".gl"], timeout_s=480, command='bash bench/tune/session14_call2.sh')
# Files: main.log checks.log grid.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_GRID_TIMEOUT=100
. "$(dirname "$0")/device_env.sh"
B=$PWD/.bundle-v14 W=/tmp/w14; mkdir -p $W
for v in base land pp n64 mut; do printf '#!/bin/sh\nexec %s/sm90_check_%s "$@"\n' "$B" $v > $W/sm90_check_$v; done
chmod +x $W/*
step "checks"
ck $W/sm90_check_land --no-bench
ck $W/sm90_check_mut --no-bench
san 120 racecheck $W/sm90_check_land --tiny --no-bench
san 120 memcheck $W/sm90_check_land --tiny --no-bench
grep -E "^==|^exit|passed|FAIL|ERROR|hazard" "$OUT/checks.log" | head -40
conformance cuda
step "grid A/B: land against base"
ab $W base land
FT_PEERS_TIMEOUT=100 peers_grid
step "d256: pingpong, 64-key blocks"
for rep in 1 2; do for v in land pp n64; do g $W/sm90_check_$v --bench-only --grid --grid-d 256; done; done
grep "^exit" "$OUT/grid.log" | sort | uniq -c
step "KHR d256 id 29 = 3"
FT_VK_TIMEOUT=60; FT_VK_DEADLINE=440
P="$FT_BUNDLE/flashtile_bench --backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --path vulkan_coopmat --dim 256"
P="$P --seq 1024,4096,16384"
for rep in 1 2; do
  vk khr256_o0 $P
  vk khr256_o3 FLASHTILE_VKCM_OPT=3 $P
done
step done
