#!/usr/bin/env bash
# Session 9, fourth device call (~200 s): tile sweeps without rebuilding, for the cells call 3 left short of issue 5's
# bars: coopmat2 d64/d128 non-causal (1.00-1.14x cm2 against 1.2x) and KHR d128 (2.58-2.98x cm1 against 3x). Each
# config in its own process (the tables are built at start-up), the defaults first and last, f16, 1k/4k/16k.
# run(carry=[".bundle", ".gl"], timeout_s=400, command='bash bench/tune/session9_call4.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=330
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384)
step "coopmat2 tiles"
vk cm2 $B/flashtile_bench "${a[@]}" --path vulkan_coopmat2 --dim 64,128
for t in 128,64,256 64,128,128 64,32,128 128,32,256; do
  vk "cm2_$t" FLASHTILE_VKCM2_TILE=$t FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}" --path vulkan_coopmat2 --dim 64,128
done
step "KHR d128 tiles"
vk khr $B/flashtile_bench "${a[@]}" --path vulkan_coopmat --dim 128
for t in 8,32,1,1 4,64,1,0 4,32,1,1 4,64,0,1; do
  vk "khr_$t" FLASHTILE_VKCM_TILE=$t FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}" --path vulkan_coopmat --dim 128
done
vk khr2 $B/flashtile_bench "${a[@]}" --path vulkan_coopmat --dim 128
vk cm2b $B/flashtile_bench "${a[@]}" --path vulkan_coopmat2 --dim 64,128
grep "pipeline stats" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-220 | sort | uniq | head -40
step done
