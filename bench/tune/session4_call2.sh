#!/usr/bin/env bash
# Session 4, device call 2 (results: bench/results/2026-11-29_h200_session4/call2). Carry .bundle .gl; build first:
#   cmake --build build -j2 && bash bench/make_bundle.sh build .bundle
# then run(carry=[".bundle", ".gl"], timeout_s=450, command='bash bench/tune/next_call.sh'). Sequential, ~250 s,
# 4 files under $OUT (run.log, vk.csv, vk_out.log, lazy_conformance.log).
# 0. Compiler statistics of the coopmat2 and KHR pipelines (FLASHTILE_VK_PIPELINE_STATS, first use on the H200): is
#    coopmat2 d256 short of registers (O in f32 over 64x256)?
# 1. coopmat2's slow mode: is it per process, per pipeline, or the driver's shader disk cache? The same cell in
#    separate processes with and without the disk cache, twice within one process, and with a new pipeline object for
#    every call (FLASHTILE_VK_FRESH_PIPELINES=1), each pipeline's compiler
#    statistics printed: if slow pipelines differ there (registers, spills), the library can detect and recompile.
# 2. coopmat2 options re-timed in two processes each: session 2 chose d128/d256 options from single processes, some
#    of which were likely slow-mode figures (aligned d128 221 then 53; d256 narrow+fold causal 24); lazy rescaling
#    (id 26: O rescaled only when a row max grew by > 2^8) was never timed with warm clocks, nor checked there.
# 3. (last) portable d128 micro-tile shapes not timed yet (valid per tile_config_reason, <= 48 KB).
set -u
FT_VK_DEADLINE=380
. "$(dirname "$0")/device_env.sh"
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid --path vulkan_coopmat2"
export FLASHTILE_VK_PIPELINE_STATS=1  # every process: do slow-mode pipelines show different compiler statistics?
step "pipeline statistics (registers etc., stderr lines in vk_out.log)"
vk pipeline_stats FLASHTILE_VK_PIPELINE_STATS=1 $B --backend vulkan --dtype f16 --warmup 1 --warmup-ms 0 --iters 1 \
  --no-grid --path vulkan_coopmat2,vulkan_coopmat $(cells "64 128 256" 4096 0)
step "slow mode"
for i in 1 2 3; do vk "d256_1k_proc$i" FT_BENCH_TIMES=1 $B $common $(cells 256 1024 "0 1"); done
for i in 1 2 3; do vk "d256_1k_nocache$i" __GL_SHADER_DISK_CACHE=0 FT_BENCH_TIMES=1 $B $common $(cells 256 1024 "0 1"); done
vk d256_1k_twice FT_BENCH_TIMES=1 $B $common $(cells 256 1024 "0 1") $(cells 256 1024 "0 1")
# A new VkPipeline for every call (FLASHTILE_VK_FRESH_PIPELINES): do per-call times flip between modes in one process?
vk d256_1k_fresh FLASHTILE_VK_FRESH_PIPELINES=1 FT_BENCH_TIMES=1 $B --backend vulkan --dtype f16 --warmup 2 \
  --warmup-ms 0 --iters 12 --no-grid --path vulkan_coopmat2 $(cells 256 1024 "0 1")
step "coopmat2 options, two processes each"
for rep in a b; do
  vk "d128_default_$rep" $B $common $(cells 128 "4096 16384" "0 1")
  vk "d128_anf_64x64_$rep" FLASHTILE_VKCM2_OPT=aligned,narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B $common $(cells 128 "4096 16384" "0 1")
  vk "d128_nf_64x64_$rep" FLASHTILE_VKCM2_OPT=narrow,fold FLASHTILE_VKCM2_TILE=64,64,128 $B $common $(cells 128 "4096 16384" "0 1")
  vk "d128_lazy_$rep" FLASHTILE_VKCM2_OPT=lazy $B $common $(cells 128 "4096 16384" "0 1")
  for o in none narrow,fold lazy aligned,narrow,fold; do
    vk "d256_${o}_$rep" FLASHTILE_VKCM2_OPT=$o $B $common $(cells 256 "4096 16384" "0 1")
  done
done
step "coopmat2 lazy rescaling: conformance (never run on the H200)"
FLASHTILE_VK_PATHS=vulkan_coopmat2 FLASHTILE_VKCM2_OPT=lazy timeout 120 .bundle/flashtile_tests --ft-backend=vulkan \
  -tc='conformance*' > "$OUT/lazy_conformance.log" 2>&1; echo "lazy conformance exit $?"
grep -E "conformance:|test cases|Status" "$OUT/lazy_conformance.log"
step "portable d128 micro-tiles (4k non-causal; the default is 64,16,128,4,2,4 at 27.8)"
unset FLASHTILE_VK_PIPELINE_STATS
for t in 64,16,64,4,4,4 64,16,64,8,2,8 64,16,64,2,8,2 64,8,64,4,2,4 64,8,128,4,1,4 64,16,128,8,1,8 64,16,128,2,4,2 \
         32,16,64,4,4,8 32,32,64,4,8,4; do
  vk "portable_d128_$t" "FLASHTILE_VKPT_TILE=128:$t" $B --backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 \
    --no-grid --path vulkan_portable $(cells 128 4096 0)
done
step done
