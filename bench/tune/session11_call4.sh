#!/usr/bin/env bash
# Session 11, fourth device call (~330 s): causal Vulkan launches in longest-first order across heads
# (kFlagRowsOuter: the row tile is the launch order's slowest index, ft_wg in attn_common.glsl) against the per-head
# order (FLASHTILE_VK_ROWS_OUTER=0). A list-scheduling model of 2048 workgroups on 132 SMs puts the per-head order's
# tail at ~7% and longest-first's under 1%. Conformance on every Vulkan path with it on, then causal f16 d 64/128/256
# at 1k/4k/16k on the three Vulkan paths, each order in its own process, twice interleaved.
# Build first: cmake --build build && bash bench/make_bundle.sh build .bundle
# run(carry=[".bundle", ".gl"], timeout_s=480, command='bash bench/tune/session11_call4.sh')
# Files: main.log conformance.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=120 FT_VK_DEADLINE=400
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
conformance vulkan
step "causal row order"
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 1024,4096,16384 --dim 64,128,256 --causal 1
   --path vulkan_coopmat2,vulkan_coopmat,vulkan_portable)
for rep in 1 2; do
  vk "head.$rep" FLASHTILE_VK_ROWS_OUTER=0 $B/flashtile_bench "${a[@]}"
  vk "outer.$rep" $B/flashtile_bench "${a[@]}"
done
step done
