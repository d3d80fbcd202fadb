#!/usr/bin/env bash
# Session 11, sixth device call (~90 s): coopmat2 with O accumulated in f16 (FLASHTILE_VKCM2_O16=1, module
# attn_coopmat2_o16; an experiment, not a default) against the shipped f32 O, d128/d256 at 4k/16k, causal and not.
# llama.cpp's measured cm2 shader (node-llama-cpp 3.22.1, 2026-09) accumulates O in f16 since llama.cpp PR 19376
# (2026-02): is that its 1.4x at d256?
# run(carry=[".bundle", ".gl"], timeout_s=150, command='bash bench/tune/session11_call6.sh')
# Files: main.log vk.csv vk_out.log.
set -u
FT_LOG=main.log FT_VK_TIMEOUT=60 FT_VK_DEADLINE=120
. "$(dirname "$0")/device_env.sh"
B=$FT_BUNDLE
a=(--backend vulkan --dtype f16 --warmup-ms 1000 --iters 10 --seq 4096,16384 --dim 128,256 --path vulkan_coopmat2)
vk f32o FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
vk f16o FLASHTILE_VKCM2_O16=1 FLASHTILE_VK_PIPELINE_STATS=1 $B/flashtile_bench "${a[@]}"
grep "pipeline stats attn_coopmat2" "$OUT/vk_out.log" | sed 's/Binary Size=[0-9]* //' | cut -c1-230 | sort | uniq
step done
