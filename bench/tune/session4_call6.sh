#!/usr/bin/env bash
# Session 4, device call 6 (carry: .bundle .gl): is the Vulkan "slow mode" the SM clock? Call 2's probes that showed
# it most (coopmat2 d256 S 1k without the driver's disk cache: 5 of 6 cells slow; portable d128 4k: 4.4 vs 24.6
# TFLOP/s), each in its own process, with nvidia-smi sampling the SM clock every 100 ms into the same log, between
# markers. Files: run.log, vk.csv, vk_out.log, clocks.log.
set -u
FT_VK_DEADLINE=200
. "$(dirname "$0")/device_env.sh"
clocks_start
B=.bundle/flashtile_bench
common="--backend vulkan --dtype f16 --warmup-ms 1000 --iters 5 --no-grid"
for i in 1 2 3 4; do
  mark "start cm2_nocache$i"
  vk "cm2_nocache$i" __GL_SHADER_DISK_CACHE=0 FT_BENCH_TIMES=1 $B $common --path vulkan_coopmat2 $(cells 256 1024 "0 1")
  mark "end cm2_nocache$i"
  mark "start portable$i"
  vk "portable$i" $B $common --path vulkan_portable $(cells 128 4096 0)
  mark "end portable$i"
done
kill "$clk" 2>/dev/null
step done
