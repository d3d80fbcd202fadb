#!/usr/bin/env bash
# Ran as session 5's call 1 (through next_call_all.sh; bench/results/2026-11-30_h200_session5; carry: .bundle .gl).
# Call 6's probe again, with the bench's warm-up clock now started after the first call, which builds the pipeline.
# Call 6 showed the slow mode is the SM clock at 345 MHz: without the driver's disk cache the pipeline build took
# ~4 s with the GPU idle, and the 1 s warm-up expired within it. Expect every cell fast (d256 1k ~110/90 TFLOP/s,
# portable d128 4k ~28). Then coopmat2 d256 tiles that halve O per invocation (the 64x32x128 default spills 448
# bytes at 255 registers), compiler statistics printed, two processes each (valid per cm2 tile rules; untimed so far).
# Files: run.log, vk.csv, vk_out.log, clocks.log.
set -u
bash "$(dirname "$0")/session4_call6.sh"  # call 6's probe, now with the warm-up fix (~50 s)
FT_VK_DEADLINE=300
. "$(dirname "$0")/device_env.sh"
clocks_start
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid"
step "coopmat2 d256 tiles"
for rep in a b; do
  for t in 64,32,128 32,32,128 64,32,256 32,64,128 64,16,128; do
    mark "start d256_${t}_${rep}"
    vk "cm2_d256_${t}_$rep" FLASHTILE_VK_PIPELINE_STATS=1 FLASHTILE_VKCM2_TILE=$t $B $common --path vulkan_coopmat2 \
      $(cells 256 "4096 16384" "0 1")
  done
done
grep "pipeline stats" "$OUT/vk_out.log" | sort | uniq -c
kill "$clk" 2>/dev/null
step done
